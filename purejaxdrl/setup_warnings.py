"""Setup warnings: purejaxdrl's advice on how a run is set up, each shown once.

A config's checks run again for every run of a sweep and every chunk of a
resumed run; `warn_once` keeps their advice to one line per process, and
`quiet_setup_warnings` silences it where nothing could be acted on (a finished
run read back for export or evaluation), and `held_setup_warnings` keeps it
back until a check that may refuse the run has passed (a resume).
"""

import contextlib
import contextvars
import sys
import warnings
from collections.abc import Hashable, Iterator
from types import FrameType

from purejaxdrl.frames import owner


class SetupWarning(UserWarning):
    """purejaxdrl's advice on how a run is set up (`warn_once`'s warnings).

    Filtered, recorded or made an error as any warning is
    (`warnings.simplefilter("error", SetupWarning)`), and shown as Python
    shows warnings. The `purejaxdrl` command shows it as one line,
    `purejaxdrl: warning: <message>`, as it shows its errors: there, where it
    was raised is the library's own check, of no use to the reader.
    """


# What warn_once has shown this process (its keys), and whether it is quiet.
_SHOWN: set[Hashable] = set()
_QUIET: contextvars.ContextVar[bool] = contextvars.ContextVar("quiet", default=False)
# Where warn_once keeps its warnings back (`held_setup_warnings`), if anywhere.
_HELD: contextvars.ContextVar[list[tuple[str, Hashable]] | None] = (
    contextvars.ContextVar("held", default=None)
)


def warn_once(message: str, key: Hashable | None = None) -> None:
    """A `SetupWarning` of `message`, the first time this process is told `key`.

    `key` (by default the message) names what is warned of: give the
    algorithm and the fields, not their values, so that a sweep over the
    values warns once. Not Python's own once-per-location: each of a config's
    checks (and each run of a sweep) calls the check, and any change to the
    warning filters in between (environment imports make some) would show it
    again. Inside `quiet_setup_warnings` nothing is shown or remembered.
    Python shows it at the caller's line: the innermost of the user's own
    code, past Python's and other libraries' frames (`user_stacklevel`).
    """
    key = message if key is None else key
    if _QUIET.get() or key in _SHOWN:
        return
    if (held := _HELD.get()) is not None:
        held.append((message, key))
        return
    _SHOWN.add(key)
    warnings.warn(message, SetupWarning, stacklevel=user_stacklevel())


def user_stacklevel() -> int:
    """The `stacklevel` of the innermost frame of the user's code: their line.

    For `warnings.warn` in the function that calls this. The library reaches
    a warning through different depths (`load_preset`, `apply_overrides`,
    `train`, `export_policy`), so a fixed level would point inside the
    library, at the `warn_once(` of a check, for most; Python 3.11 has no
    `skip_file_prefixes`. The walk passes Python's and other libraries'
    frames too (`frames.owner`): a `contextlib` or `functools` wrapper, or
    JAX tracing a function, can sit between two of purejaxdrl's. Where no
    frame is the user's (`python -m purejaxdrl`), the outermost.
    """
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and not _users(frame):
        frame = frame.f_back
        # warnings.warn counts no frame of importlib's bootstrap past the first.
        level += not _import_machinery(frame.f_code.co_filename)
    return level


def _users(frame: FrameType) -> bool:
    """Whether `frame` runs the user's code: a file of theirs, or code of no file.

    Code of no file is the user's where they typed or exec'd it (`python -c`,
    `<stdin>`, a tool's `exec`): its module is theirs or none. Code that
    Python generates for a module (a dataclass's `__init__`, "<string>" too)
    is that module's; a frozen module (`<frozen runpy>`) is Python's.
    """
    filename = frame.f_code.co_filename
    if not filename.startswith("<") or filename.startswith("<frozen"):
        return owner(filename) == "user"
    module = sys.modules.get(frame.f_globals.get("__name__", ""))
    file = getattr(module, "__file__", None)
    return file is None or owner(file) == "user"


def _import_machinery(filename: str) -> bool:
    """Whether `warnings.warn` skips a frame of `filename` as it counts levels."""
    return "importlib" in filename and "_bootstrap" in filename


def forget_warnings() -> None:
    """Lets warn_once show again what it has shown (for tests)."""
    _SHOWN.clear()


@contextlib.contextmanager
def quiet_setup_warnings() -> Iterator[None]:
    """Within it, warn_once shows nothing: for a finished run read back.

    Its warnings are about how training is set up; exporting or loading a
    trained policy builds the same config, agent and networks, but nothing it
    could say can be acted on there. What is silenced here is still shown
    the first time a run is set up afterwards.
    """
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)


@contextlib.contextmanager
def held_setup_warnings() -> Iterator[list[tuple[str, Hashable]]]:
    """Within it, warn_once keeps its warnings in the list it yields.

    For advice on a config that a later check may refuse (a resume of another
    algorithm): `show_held` shows them once the check passes, and a refusal
    is then its own line alone. Those never shown are not remembered, so a
    run set up afterwards still shows them.
    """
    held: list[tuple[str, Hashable]] = []
    token = _HELD.set(held)
    try:
        yield held
    finally:
        _HELD.reset(token)


def show_held(held: list[tuple[str, Hashable]]) -> None:
    """Shows the warnings `held_setup_warnings` kept back, each once (warn_once)."""
    for message, key in held:
        warn_once(message, key)
