"""A second SIGINT / SIGTERM ends a process of a multi-process run, even when stuck.

A Python signal handler runs only when the main thread returns to Python: one
blocked in C++ (a collective whose peer waits in another, a hung join) never
runs it, so `StopSignals` could not stop such a process and a cluster's
SIGTERM did nothing; only SIGKILL ended it. The C-level handler still writes
the signal's number to `signal.set_wakeup_fd`'s file: a thread reading it sees
every signal, handled or not.
"""

import contextlib
import os
import signal
import sys
import threading
import time
from typing import Any

from purejaxdrl.training.faults import SECOND_SIGNAL_SAID, StopSignals
from purejaxdrl.training.stop_words import GRACE, SAME_SIGNAL, ending

_WATCHED = (signal.SIGINT, signal.SIGTERM)


def held_signals(main: bool, saves: bool) -> contextlib.ExitStack:
    """SIGINT / SIGTERM as a process of many holds them, from joining on.

    The first asks the run to stop (`StopSignals`, which the chunk loop's
    handler takes over); a second, a second or more later, is this module's:
    one line, and the end of the process within `GRACE` s.

    Args:
      main: this is process 0 (the others' lines say that it reports).
      saves: a stop saves a checkpoint (False: a run without files).

    Returns:
      The held handlers, entered; exiting it restores the previous ones.

    """
    held = contextlib.ExitStack()
    stop = StopSignals(
        before_training=True, saves=saves, peer=not main, second_ends=True
    )
    held.enter_context(stop)
    held.enter_context(EndOnSecondSignal(saves))
    return held


class EndOnSecondSignal:
    """From entry to exit, a second SIGINT / SIGTERM ends this process.

    The first is left to the handlers (`StopSignals`: stop after the chunk
    under way, with a checkpoint if `saves`). A second, `SAME_SIGNAL`
    seconds or more after it, is said at once in one line (the handlers say
    nothing of it: `StopSignals(second_ends=True)`), and ends the process
    `GRACE` seconds later with status 128 + the signal's number, as its
    default action would, unless the stop under way ended it first: a run
    stopped mid-save keeps its previous checkpoint (orbax renames a save
    once complete); its peers stop as after any death. A no-op outside the
    main thread, where Python allows no wakeup file.
    """

    def __init__(self, saves: bool = True) -> None:
        self._fds: tuple[int, int] | None = None
        self._previous = -1
        self._saves = saves

    def __enter__(self) -> "EndOnSecondSignal":
        if threading.current_thread() is not threading.main_thread():
            return self
        read, write = os.pipe()
        os.set_blocking(write, False)
        self._previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        self._fds = (read, write)
        threading.Thread(
            target=_watch,
            args=(read, self._saves),
            name="purejaxdrl-second-signal",
            daemon=True,
        ).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._fds is None:
            return
        read, write = self._fds
        ours = signal.set_wakeup_fd(self._previous)
        if ours != write:  # another took the wakeup file since: leave it its own
            signal.set_wakeup_fd(ours)
        os.close(write)  # the thread reads the end of the pipe and returns


def _watch(read: int, saves: bool) -> None:
    """Reads signal numbers from `read`; ends the process at a second one."""
    first = None
    with os.fdopen(read, "rb", buffering=0) as pipe:
        while data := pipe.read(64):
            for signum in data:
                if signum not in _WATCHED:
                    continue
                now = time.monotonic()
                if first is None:
                    first = now
                elif now - first >= SAME_SIGNAL:
                    _end(signum, saves)


def _end(signum: int, saves: bool) -> None:
    """Says so, then ends the process for signal `signum` in `GRACE` s.

    Said at once: a stuck main thread never prints, and one that ends the
    process first (its stop done) leaves no line behind that promised more.
    The first signal's line, where its handler has not run yet, is not said
    after it (`SECOND_SIGNAL_SAID`).
    """
    name = signal.Signals(signum).name
    SECOND_SIGNAL_SAID.set()  # before the first's own line, if not said yet
    sys.stderr.write(ending(name, saves) + "\n")
    sys.stderr.flush()
    time.sleep(GRACE)
    os._exit(128 + signum)
