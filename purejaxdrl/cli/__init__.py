"""The `purejaxdrl` command: one module per sub-command.

`purejaxdrl train | sweep | pbt | eval | export | plot | list`: each
sub-command's module (`train`, `sweep`, `pbt`, `eval`, `export`, `plot`,
`listing`) turns its arguments into typed configs and calls the library; what
several of them share (config flags, compile-cache flags) lives in `args`
(`parser`, the argparse parser whose errors are one line; its hints for
unknown words in `hints`; `--env.option`'s values read in `option_values`),
what a fresh command starts from (its preset and algorithm) in `start`, the
summary's preset-target verdict in `target`, what `train` says of a failed
host actor in `host_errors`, SIGINT and SIGTERM held from a command's first
line in `early_signals`, the exit codes in `exits`, what `sweep` and `pbt` share in
`population`, and how the processes of a multi-process run join, agree and
stop in `processes` (train's flags for them in `process_flags`, checked in
`process_config`; what they agree on in `run_agreement`; a second signal
ends one in `second_signal`). Sub-commands
import those, never each other. This is the top layer: it may import every
other part of the package, and nothing imports it.
"""

import contextlib
import difflib
import importlib
import os
import re
import sys
import traceback
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

# Nothing that loads JAX: `--help`, `--version` and an unknown sub-command
# answer without it; each sub-command's module imports what it needs.
from purejaxdrl.cli.early_signals import EarlySignals
from purejaxdrl.cli.exits import EXIT_USAGE
from purejaxdrl.frames import owner

# Sub-command -> (module, function); modules load when their command runs.
COMMANDS = {
    "train": ("train", "train_command"),
    "sweep": ("sweep", "sweep_command"),
    "pbt": ("pbt", "pbt_command"),
    "eval": ("eval", "eval_command"),
    "plot": ("plot", "plot_command"),
    "list": ("listing", "list_command"),
    "export": ("export", "export_command"),
}
_TRAINING = ("train", "sweep", "pbt")

USAGE = """usage: purejaxdrl {train,sweep,pbt,eval,plot,list,export} ...

  train   train an agent: purejaxdrl train --env cartpole --algo ppo
          continue a run: purejaxdrl train --resume RUN_DIR
  sweep   many runs in one program: purejaxdrl sweep --env cartpole --seeds 8 \
--grid learning_rate=1e-4,3e-4
  pbt     population-based training: purejaxdrl pbt --env cartpole \
--population 8 --explore learning_rate=loguniform:1e-5:1e-3
  eval    watch a policy: purejaxdrl eval RUN_DIR --render out.gif
  plot    learning curves: purejaxdrl plot RUN_DIR ... --out a.png
  list    list environment presets and their target scores
  export  write a run's policy: purejaxdrl export RUN_DIR --out DIR

`purejaxdrl train --help` lists the config fields (`--algo NAME --help`: NAME's);
`purejaxdrl --version` prints the version."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `purejaxdrl` console script. Returns the exit status."""
    # The command draws files only (plots, GIFs): matplotlib's file backend
    # unless the user chose one, so no GUI toolkit loads or fails headless.
    os.environ.setdefault("MPLBACKEND", "Agg")
    try:
        with _setup_warnings_as_one_line():
            status = _main(argv)
    except BaseException as e:
        if "purejaxdrl.cli.processes" in sys.modules:
            # Left to interpreter shutdown, a joined process would wait in
            # JAX's shutdown barrier, then abort (C++ stack dump, status 134),
            # and its peers would wait for its heartbeat to stop: end it now.
            from purejaxdrl.cli.processes import exit_if_joined, joined

            if joined() and not isinstance(e, SystemExit):
                traceback.print_exc()
            code = e.code if isinstance(e, SystemExit) else 1
            if joined() and code is not None and not isinstance(code, int):
                print(code, file=sys.stderr)  # as Python's exit would
            exit_if_joined(0 if code is None else code if isinstance(code, int) else 1)
        raise
    if status and "purejaxdrl.cli.processes" in sys.modules:
        # A process of a multi-process run that stops early ends at once.
        from purejaxdrl.cli.processes import exit_if_joined

        exit_if_joined(status)
    return status


@contextlib.contextmanager
def _setup_warnings_as_one_line() -> Iterator[None]:
    """Shows a SetupWarning as `purejaxdrl: warning: <message>`, while it lasts.

    Only the command's own process: a library user keeps Python's format,
    and other warnings keep theirs here too (by the formatter it replaces).
    """
    from purejaxdrl.setup_warnings import SetupWarning

    others = warnings.formatwarning

    def one_line(message: Warning | str, category: type, *where: Any) -> str:
        if isinstance(category, type) and issubclass(category, SetupWarning):
            return f"purejaxdrl: warning: {' '.join(str(message).split())}\n"
        return others(message, category, *where)

    warnings.formatwarning = one_line
    try:
        yield
    finally:
        if warnings.formatwarning is one_line:  # else another replaced it since
            warnings.formatwarning = others


def _main(argv: Sequence[str] | None) -> int:
    """`main`, until its exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else EXIT_USAGE
    if argv[0] == "--version":
        from importlib.metadata import version  # the installed distribution's

        print(f"purejaxdrl {version('purejaxdrl')}")
        return 0
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        close = difflib.get_close_matches(command.lower(), COMMANDS, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        return fail(
            f"unknown command {command!r}; {hint}use one of {', '.join(COMMANDS)} "
            "(see `purejaxdrl --help`)."
        )
    module, function = COMMANDS[command]
    # The commands that train hold SIGINT / SIGTERM while their modules load
    # (JAX with them: seconds); theirs take the record over (`EarlySignals`).
    with EarlySignals() if command in _TRAINING else contextlib.nullcontext():
        from purejaxdrl.cli.args import UsageError
        from purejaxdrl.config import ConfigError
        from purejaxdrl.env.registry import UnknownEnvironmentError

        run = getattr(importlib.import_module(f"purejaxdrl.cli.{module}"), function)
        try:
            status = run(rest)
            sys.stdout.flush()  # here, where a reader that has gone is caught below
            return status
        except (UsageError, ConfigError, UnknownEnvironmentError) as e:
            return fail(str(e))
        except ValueError as e:
            if not raised_here(e):  # a bug, in a user's environment say: show where
                raise
            return fail(str(e))  # factories validate eagerly with named values
        except KeyboardInterrupt as e:  # its message, if any: what was kept
            if _reports_stops():
                print(f"interrupted: {e}" if str(e) else "interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:  # `purejaxdrl list | head`: the reader has gone
            # Python would report the failed flush of stdout at exit: point it at
            # nothing first (as Python's documentation on SIGPIPE advises).
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1


def _reports_stops() -> bool:
    """Whether this process prints `interrupted`: only process 0 of several."""
    if "purejaxdrl.cli.processes" not in sys.modules:
        return True  # none joined
    from purejaxdrl.cli.processes import reports_stops

    return reports_stops()


# Python's messages when unpacking fails: no check of purejaxdrl's words them.
_UNPACKING = re.compile(
    r"(not enough|too many) values to unpack|cannot unpack non-iterable"
)


def raised_here(error: BaseException) -> bool:
    """Whether purejaxdrl's code, not a user's, is where `error` came from.

    purejaxdrl's checks raise ValueErrors that name the value and the fix,
    and those are shown as one line. Walking out from the innermost frame,
    past the standard library's, the first frame is either purejaxdrl's, or
    the user's own code (their environment, say) or a library's (JAX,
    numpy, Gymnasium), where the error is a bug or a broken contract whose
    traceback must say where: a library's error, even when purejaxdrl called
    the library, names no value of the user's and no fix (Gymnasium's "not
    enough values to unpack" from a user's `step`, say). Python's own errors
    of unpacking ("too many values to unpack") are never purejaxdrl's
    checks: raised where purejaxdrl unpacks what a user's function returned
    (an `update` that returns its state alone), their message names neither
    the function nor the fix, so their traceback is shown.
    """
    if _UNPACKING.match(str(error)):
        return False
    owners = []
    tb = error.__traceback__
    while tb is not None:
        owners.append(owner(tb.tb_frame.f_code.co_filename))
        tb = tb.tb_next
    # Python's own frames (a `contextlib` wrapper, say) are passed over.
    return next((o for o in reversed(owners) if o != "python"), None) == "purejaxdrl"


def fail(message: str) -> int:
    """Prints `message` as the one-line error and returns the usage exit status."""
    print(f"purejaxdrl: error: {' '.join(message.split())}", file=sys.stderr)
    return EXIT_USAGE


__all__ = ["main"]
