"""An environment option's two spellings, for messages: the flag and Python's.

Options reach an environment from `--env.option KEY=VALUE` on the command line
and from `env.options={...}` in Python (or a preset's `env.options`); a
refusal that named only the flag left a Python user to translate it.
"""

import difflib
from collections.abc import Sequence
from typing import Any


def cli_text(value: Any) -> str:
    """`value` as `--env.option` reads it back (YAML): [64, 64], true, null."""
    if isinstance(value, list | tuple):
        return "[" + ", ".join(cli_text(x) for x in value) + "]"
    if value is None:
        return "null"
    return str(value).lower() if isinstance(value, bool) else str(value)


def both(name: str, value: Any, text: str | None = None) -> str:
    """`--env.option NAME=VALUE (env.options={'NAME': VALUE} in Python)`.

    Args:
      name: the option (dotted for a key inside a group).
      value: its value as Python spells it.
      text: its value as the flag spells it, where not `cli_text(value)`
        (a placeholder such as `VALUE`, or a list without spaces).

    """
    flag = text if text is not None else cli_text(value)
    value = list(value) if isinstance(value, tuple) else value  # as YAML gives it
    return f"--env.option {name}={flag} (env.options={{{name!r}: {value!r}}} in Python)"


def placeholder(more: str = "") -> str:
    """Both spellings of an option in general: KEY=VALUE and {'KEY': VALUE}.

    `more` is added inside the parentheses (", or the preset's env.options").
    """
    return f"--env.option KEY=VALUE (env.options={{'KEY': VALUE}} in Python{more})"


def closest(value: Any, choices: Sequence[str], default: str) -> str:
    """The choice `value` most likely misspells (`cached`: `cached_first_state`).

    For a refusal's fix: offering the default (`fresh`) sent a user who meant
    another choice the opposite way. `default` where none is close.
    """
    close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.5)
    return close[0] if close else default
