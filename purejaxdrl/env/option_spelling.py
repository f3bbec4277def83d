"""An environment option's two spellings, for messages: the flag and Python's.

Options reach an environment from `--env.option KEY=VALUE` on the command line
and from `env.options={...}` in Python (or a preset's `env.options`); a
refusal that named only the flag left a Python user to translate it.

Playing a policy takes them as `evaluate_policy(env_options={...})`, which has
no preset: its refusals are spelled so inside `spelled_as(PLAY)`.
"""

import contextlib
import contextvars
import difflib
from collections.abc import Iterator, Sequence
from typing import Any

RUN = "env.options"  # a TrainConfig's field (and a preset's)
PLAY = "env_options"  # evaluate_policy's keyword
_PYTHON = contextvars.ContextVar("python_name", default=RUN)


@contextlib.contextmanager
def spelled_as(python_name: str) -> Iterator[None]:
    """Spells Python's side of the refusals made in the block with `python_name`.

    Also a decorator (`@spelled_as(PLAY)`).
    """
    token = _PYTHON.set(python_name)
    try:
        yield
    finally:
        _PYTHON.reset(token)


def cli_text(value: Any) -> str:
    """`value` as `--env.option` reads it back (YAML): [64, 64], true, null."""
    if isinstance(value, list | tuple):
        return "[" + ", ".join(cli_text(x) for x in value) + "]"
    if value is None:
        return "null"
    return str(value).lower() if isinstance(value, bool) else str(value)


def both(name: str, value: Any, text: str | None = None) -> str:
    """`--env.option NAME=VALUE (env.options={'NAME': VALUE} in Python)`.

    Python's side is `env_options={...}` inside `spelled_as(PLAY)`.

    Args:
      name: the option (dotted for a key inside a group).
      value: its value as Python spells it.
      text: its value as the flag spells it, where not `cli_text(value)`
        (a placeholder such as `VALUE`, or a list without spaces).

    """
    flag = text if text is not None else cli_text(value)
    value = list(value) if isinstance(value, tuple) else value  # as YAML gives it
    python = f"{_PYTHON.get()}={{{name!r}: {value!r}}}"
    return f"--env.option {name}={flag} ({python} in Python)"


def any_value(name: str) -> str:
    """`--env.option NAME=VALUE (env.options={'NAME': VALUE} in Python)`."""
    return f"--env.option {name}=VALUE ({_PYTHON.get()}={{{name!r}: VALUE}} in Python)"


def placeholder(more: str = "") -> str:
    """Both spellings of an option in general: KEY=VALUE and {'KEY': VALUE}.

    `more` is added inside the parentheses (", or the preset's env.options"),
    except inside `spelled_as(PLAY)`: a policy is played without a preset.
    """
    name = _PYTHON.get()
    more = more if name == RUN else ""
    return f"--env.option KEY=VALUE ({name}={{'KEY': VALUE}} in Python{more})"


def closest(value: Any, choices: Sequence[str], default: str) -> str:
    """The choice `value` most likely misspells (`cached`: `cached_first_state`).

    For a refusal's fix: offering the default (`fresh`) sent a user who meant
    another choice the opposite way. `default` where none is close.
    """
    close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.5)
    return close[0] if close else default
