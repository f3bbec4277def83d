"""The command line every benchmark script shares, and how it refuses input.

`parser(doc)`: `--repeats`, `--json`, `--markdown`, `--tiny`, with an
option's refusal as one line (no usage block); argparse types for counts and
amounts; `add_purejaxrl(p)`: `--purejaxrl DIR`, checked at parse time;
`run_main(main)`: a configuration the library refuses as one line, exit 2.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, not the whole usage block above it: the option's name is
        # in `message`, the rest is --help's.
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")

    tiny_replaces: tuple[str, ...] = ("repeats",)

    def parse_args(self, *args: Any, **kwargs: Any) -> argparse.Namespace:  # type: ignore[override]
        out = super().parse_args(*args, **kwargs)
        if out.tiny:
            self._say_what_tiny_ignores(out)
            if hasattr(out, "repeats"):  # a code path: one run of each
                out.repeats = 1
        return out

    def _say_what_tiny_ignores(self, out: argparse.Namespace) -> None:
        # --tiny replaces these sizes: one given too is named on stderr, one
        # line, so nobody believes their sizes ran.
        given = [
            a for a in self._actions
            if a.dest in self.tiny_replaces and hasattr(out, a.dest)
            and getattr(out, a.dest) != a.default
        ]  # fmt: skip
        if given:
            opts = "; ".join(f"{a.option_strings[-1]} {_shown(getattr(out, a.dest))}"
                             for a in given)  # fmt: skip
            print(f"{self.prog}: --tiny: {opts} ignored (toy sizes)", file=sys.stderr)


def _shown(value: Any) -> str:
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


def positive_int(text: str) -> int:
    """argparse's type for a count: an integer of at least 1 (else one line, exit 2)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return value


def nonnegative_int(text: str) -> int:
    """argparse's type for a count that may be 0 (a lag, an offset)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer of 0 or more")
    return value


def positive_float(text: str) -> float:
    """argparse's type for an amount (seconds): a finite number above 0.

    Else one line, exit 2: a NaN or negative budget would skip every step.
    """
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive finite number")
    return value


PUREJAXRL_CLONE = "git clone https://github.com/luchris429/purejaxrl"


def purejaxrl_checkout(module: str = "ppo") -> Callable[[str], str]:
    """argparse's type for `--purejaxrl DIR`: DIR/purejaxrl/`module`.py must exist.

    Checked at parse time, before any training: a wrong path is one line
    naming the file it looked for and how to get it, exit status 2.
    """

    def check(text: str) -> str:
        if os.path.isfile(os.path.join(text, "purejaxrl", f"{module}.py")):
            return text
        hint = (
            f"; did you mean its parent, {os.path.dirname(os.path.abspath(text))}?"
            if os.path.isfile(os.path.join(text, f"{module}.py"))
            else f" ({PUREJAXRL_CLONE} DIR)"
        )
        raise argparse.ArgumentTypeError(
            f"{os.path.join(text, 'purejaxrl', module + '.py')} not found: pass the "
            f"root of a luchris429/purejaxrl checkout, the folder holding "
            f"purejaxrl/{module}.py{hint}"
        )

    check.__name__ = "PureJaxRL checkout"  # argparse's name for it in errors
    return check


def add_purejaxrl(p: argparse.ArgumentParser, module: str = "ppo") -> None:
    """`--purejaxrl DIR`: a PureJaxRL checkout, checked at parse time."""
    p.add_argument(
        "--purejaxrl",
        metavar="DIR",
        type=purejaxrl_checkout(module),
        help="a luchris429/purejaxrl checkout, the folder holding "
        f"purejaxrl/{module}.py (checked before any work)",
    )


def run_main(main: Callable[[], Any]) -> None:
    """Runs a script's `main()` as its command.

    A configuration the library refuses (`purejaxdrl.ConfigError`, such as a
    `--total-steps` below one update) is one line naming the value and the
    fix, exit status 2, as argparse does for an option it refuses: the
    values come from the command line, so a traceback would point at the
    library instead of at them.
    """
    from purejaxdrl.config import ConfigError

    try:
        main()
    except ConfigError as e:
        print(f"{os.path.basename(sys.argv[0])}: error: {e}", file=sys.stderr)
        sys.exit(2)


def parser(doc: str | None, repeats: bool = True) -> argparse.ArgumentParser:
    """An argument parser with the options every benchmark script takes.

    `--help` prints `doc` (the script's docstring) whole, as written.

    With `--tiny`, `--repeats` is 1. `repeats=False`: a script that trains
    whole runs once each, its spread over seeds (`--seeds`), takes no
    `--repeats` (rather than one it would ignore).
    """
    # The whole docstring: `--help` is where the docs send readers for what
    # a script measures (its first line alone said only what it is).
    p = _Parser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    if repeats:
        p.add_argument(
            "--repeats", type=positive_int, default=3, help="runs per contender"
        )
    p.add_argument("--json", help="write the results as JSON to this path")
    p.add_argument("--markdown", help="write the results as a Markdown table")
    p.add_argument(
        "--tiny",
        action="store_true",
        help="smallest sizes, to check that the script still runs (CI)",
    )
    return p
