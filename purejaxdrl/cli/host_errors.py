"""What `train` says when an actor's host environments or policy raised.

An actor thread's error reaches the command as a HostEnvError, its cause the
actor's own error: a user's environment breaking Gymnasium's API (bad input,
a ConfigError) or a bug in the user's code or purejaxdrl's (a failure).
"""

import sys
import traceback

from purejaxdrl.cli.exits import EXIT_FAILURE, EXIT_USAGE


def host_error(error: Exception) -> tuple[int, str]:
    """The exit status and one-line message of an actor's error (HostEnvError).

    Its message is "actor i's environments raised T: CAUSE; WHERE", WHERE the
    last good checkpoint or that none was saved; the line names T where it
    is the user's (a RuntimeError), not where it is purejaxdrl's own (a NaN's
    NonFiniteStepError: "actor i's environments: CAUSE"). A ConfigError as
    the cause is a user's environment breaking Gymnasium's API in its `step`:
    bad input, said in its own line with the usage status, as the same break
    in `reset` (found before training starts) is; of WHERE only a checkpoint
    to resume from, once the environment is fixed, is worth saying. Any other
    cause is a failure, its traceback shown where the user's code raised it.
    """
    from purejaxdrl.config import ConfigError

    cause, text = error.__cause__, str(error)
    # Split after the words sebulba puts before the cause, not at the cause's
    # text, which may be in them too (a KeyError(0): "actor 0's ...").
    marker = f" raised {type(cause).__name__}: "
    head, found, rest = text.partition(marker)
    if cause is None or not found or not rest.startswith(str(cause)):
        show_users_error(cause)  # not an actor's error as sebulba words it
        return EXIT_FAILURE, text
    head += marker
    where = rest[len(str(cause)) :].removeprefix("; ")
    said = str(cause).strip().rstrip(".")  # not "returns.; no checkpoint"
    if isinstance(cause, ConfigError):
        resumable = where.startswith("the last good checkpoint")
        return EXIT_USAGE, f"{said}; {where}" if resumable else f"{said}."
    if type(cause).__module__.partition(".")[0] == "purejaxdrl":
        # purejaxdrl's own check (a NaN observation): its words say what
        # happened; its class's name would say nothing more to a user.
        head = head.removesuffix(marker) + ": "
    else:
        show_users_error(cause)
    return EXIT_FAILURE, f"{head}{said}; {where}" if where else f"{head}{said}."


def show_users_error(error: BaseException | None) -> None:
    """Prints the traceback of an actor's `error` where the user's code raised it.

    A bug in a user's environment (its `step`, say) or network must say
    where, as the same bug on a device environment does; purejaxdrl's own
    checks name the value and the fix, and the one line that follows is all.
    """
    from purejaxdrl.cli import raised_here

    if error is not None and not raised_here(error):
        print("".join(traceback.format_exception(error)), end="", file=sys.stderr)
