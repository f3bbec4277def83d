"""The command line's argparse parser: its errors are one line naming the fix.

With the small parsers and flag types the sub-commands share.
"""

import argparse
import difflib
import re
import sys
from typing import Any, NoReturn

from purejaxdrl.cli.hints import flag_hint, word_hint
from purejaxdrl.config_docs import both_ways

# A word argparse reads as a value, not an option: a negative number, in any
# spelling `float` takes. Python 3.11's argparse takes only `-1` and `-.5`, so
# `--eval.stop-at -1e3` (or `-inf`) read `-1e3` as an option and failed.
NEGATIVE_NUMBER = re.compile(
    r"^-(?:(?:[0-9][0-9_]*\.?[0-9_]*|\.[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)?"
    r"|inf|infinity|nan)$",
    re.IGNORECASE,
)


class UsageError(Exception):
    """Bad command-line input; the message is the whole one-line error."""


# The flags of a run across processes (`process_flags`): `train`'s alone.
_PROCESS_FLAGS = (
    "--coordinator",
    "--num-processes",
    "--process-id",
    "--distributed-auto",
)


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting.

    Negative numbers in every spelling (`-1e3`, `-inf`) are values.
    `help_command`: the command that lists the options, which its errors name
    (default `PROG --help`; `purejaxdrl sweep --resume DIR --help` where the
    program's name ends in a flag that needs its value). A flag's action with
    `takes_none` set (an `X | None` config field) is said to take `none`.
    """

    help_command: str | None = None
    # The run's environment (`add_config_flags`), unless an --env.id replaces it.
    env_id: str | None = None
    # A command that reads a run (`run_dir_parser`): what it does with it.
    reads_run: str | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_NUMBER

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._words = list(sys.argv[1:] if args is None else args)  # for error
        return super().parse_known_args(args, namespace)

    def _env_id(self) -> str | None:
        """The environment the words name (`--env.id X`), else `env_id`."""
        words = getattr(self, "_words", [])
        for word, after in zip(words, [*words[1:], None], strict=True):
            if word == "--env.id" and after is not None:
                return after
            if word.startswith("--env.id="):
                return word.partition("=")[2]
        return self.env_id

    @property
    def _help(self) -> str:
        return self.help_command or f"{self.prog} --help"

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments"):
            words = message.split()[2:]
            unknown = [w for w in words if w.startswith("--")]
            flag = unknown[0].split("=")[0] if unknown else ""
            flags = [o for o in self._option_string_actions if o.startswith("--")]
            env_id = self._env_id()
            # `train cartpole --budget 2048`: the preset's hint, then the flag's.
            hint = word_hint(words, flags) + (
                flag_hint(flag, flags, env_id) if flag else ""
            )
            if flag in _PROCESS_FLAGS and "--coordinator" not in flags:
                raise UsageError(self._one_process())
            if self.reads_run and flag.split(".")[0] in ("--env", "--algo"):
                hint = (
                    f"{self.prog} {self.reads_run} the environment and "
                    f"algorithm it was trained with, so it takes no {flag}; for "
                    "another, train a run there. "
                )
            message = f"{message}; {hint}`{self._help}` lists every option."
        elif "invalid float value" in message or "invalid int value" in message:
            message = f"{message}; {self._number_fix(message)}"
        elif message.endswith("expected one argument"):
            message = self._one_argument(message)
        elif ": invalid choice: " in message:
            message = f"{message}; {self._choice(message)}"
        elif message.startswith("the following arguments are required"):
            message = (
                f"{message}; e.g. `{self._example()}` (`{self._help}` lists "
                "every option)."
            )
        raise UsageError(message)

    def _action(self, name: str) -> argparse.Action | None:
        """The action argparse names `name` in its errors (a flag or metavar)."""
        for action in self._actions:
            if name in action.option_strings or name in (action.metavar, action.dest):
                return action
        return None

    def _choice(self, message: str) -> str:
        """The fix for `argument --flag: invalid choice: 'x' (choose from ...)`."""
        name = message.removeprefix("argument ").partition(":")[0].split("/")[-1]
        given = re.search(r"invalid choice: '(.*?)'", message)
        action = self._action(name)
        choices = [str(c) for c in getattr(action, "choices", None) or ()]
        close = difflib.get_close_matches(given[1] if given else "", choices, n=1)
        flag = f"{name} " if name.startswith("-") else ""
        if close:
            return f"did you mean {flag}{close[0]}? `{self._help}` lists every option."
        return f"pass one of those (see `{self._help}`)."

    def _number_fix(self, message: str) -> str:
        """The fix for `argument --flag: invalid int value: 'x'`, with an example.

        The flag's action may carry an `example` value (else its default, a
        number, stands in) and the `python` keyword it is in Python.
        """
        kind = "a number" if "invalid float" in message else "an integer"
        name = message.removeprefix("argument ").partition(":")[0].split("/")[-1]
        action = self._action(name)
        example = getattr(action, "example", None)
        default = getattr(action, "default", None)
        if example is None and isinstance(default, int | float):
            example = None if isinstance(default, bool) else default
        if example is None or not name.startswith("-"):
            return f"pass {kind} (see `{self._help}`)."
        python = getattr(action, "python", None)
        shown = both_ways(name, python, example) if python else f"{name} {example}"
        return f"pass {kind}, e.g. {shown}; `{self._help}` lists every option."

    def _example(self) -> str:
        """The command with each argument it requires, for a missing one.

        A required flag's action may carry an `example` value (`--out
        policy/`); else its metavar stands in.
        """
        words = [self.prog]
        for action in self._actions:
            if not action.option_strings:
                words.append(action.metavar or action.dest.upper())
            elif action.required:
                value = getattr(action, "example", None) or action.metavar
                words.append(f"{action.option_strings[-1]} {value}")
        return " ".join(words)

    def _one_process(self) -> str:
        """Why a command of one process takes no process flags, and instead."""
        what = f"`{self.prog}` runs"
        if self.prog.split()[-1] in ("sweep", "pbt"):
            what = "sweeps and PBT run"
        return (
            f"{what} in one process, not across hosts (only `purejaxdrl train` "
            "does): drop --coordinator, --num-processes and --process-id (or "
            f"--distributed-auto) and run `{self.prog}` on one host."
        )

    def _word_after(self, flag: str) -> str | None:
        """The word typed after `flag`, if any (what argparse did not take)."""
        words = getattr(self, "_words", [])
        pairs = zip(words[:-1], words[1:], strict=True)
        return next((after for word, after in pairs if word == flag), None)

    def _one_argument(self, message: str) -> str:
        """The line for `argument --flag: expected one argument`, with its fix.

        Mostly the value was left out (the flag last, or before another flag);
        where a negative value can be valid (a float's flag, `--target`), the
        spelling that keeps one starting with '-' a value too.
        """
        flags = message.removeprefix("argument ").partition(":")[0].split("/")
        flag = flags[-1]
        action = self._option_string_actions.get(flag)
        floats = getattr(action, "type", None) is float or (
            getattr(action, "metavar", None) == "FLOAT"
        )
        negative = f" (a negative one after '=': {flag}=-1e3)" if floats else ""
        after = self._word_after(flag)
        if not floats and after is not None and re.match(r"-[0-9.]", after):
            # argparse read `-1GB` as an option: a value was given, negative.
            return (
                f"{flag} {after} is negative, and {flag} takes a positive value; "
                f"`{self._help}` lists every option."
            )
        unset = (
            f"; {flag} none leaves it unset"
            if getattr(action, "takes_none", False)
            else ""
        )
        return (
            f"{message}; {flag} needs a value after it{negative}{unset}; "
            f"`{self._help}` lists every option."
        )


def run_dir_parser(
    command: str, description: str, what: str = "a run directory"
) -> Parser:
    """The parser of a command that reads one run directory (`eval`, `export`)."""
    parser = Parser(
        prog=f"purejaxdrl {command}", description=description, allow_abbrev=False
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help=what)
    parser.reads_run = {
        "eval": "plays a run or policy on",
        "export": "saves a run's policy for",
    }.get(command)
    return parser


def int_flag(text: str) -> int:
    """An argparse type: an integer, or a message naming the text."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
