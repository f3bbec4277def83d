"""A second SIGINT / SIGTERM ends a process of a multi-process run, even when stuck.

A Python signal handler runs only when the main thread returns to Python: one
blocked in C++ (a collective whose peer waits in another, a hung join) never
runs it, so `StopSignals` could not stop such a process and a cluster's
SIGTERM did nothing; only SIGKILL ended it. The C-level handler still writes
the signal's number to `signal.set_wakeup_fd`'s file: a thread reading it sees
every signal, handled or not.
"""

import os
import signal
import sys
import threading
import time
from typing import Any

# A repeat this soon is the same signal sent twice: coreutils' `timeout` sends
# it to the process and then to its process group.
SAME_SIGNAL = 1.0
# Seconds the main thread has to end the process itself (a second Ctrl-C
# raises KeyboardInterrupt) before the thread ends it.
GRACE = 2.0
_WATCHED = (signal.SIGINT, signal.SIGTERM)


class EndOnSecondSignal:
    """From entry to exit, a second SIGINT / SIGTERM ends this process.

    The first is left to the handlers (`StopSignals`: stop after the chunk
    under way, with a checkpoint). A second, `SAME_SIGNAL` seconds or more
    after it, ends the process within `GRACE` seconds with one line and
    status 128 + the signal's number, as its default action would: a run
    stopped mid-save keeps its previous checkpoint (orbax renames a save
    once complete); its peers stop as after any death. A no-op outside the
    main thread, where Python allows no wakeup file.
    """

    def __init__(self) -> None:
        self._fds: tuple[int, int] | None = None
        self._previous = -1

    def __enter__(self) -> "EndOnSecondSignal":
        if threading.current_thread() is not threading.main_thread():
            return self
        read, write = os.pipe()
        os.set_blocking(write, False)
        self._previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        self._fds = (read, write)
        threading.Thread(
            target=_watch, args=(read,), name="purejaxdrl-second-signal", daemon=True
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


def _watch(read: int) -> None:
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
                    _end(signum)


def _end(signum: int) -> None:
    """Ends the process for signal `signum`, unless the main thread does first."""
    time.sleep(GRACE)
    name = signal.Signals(signum).name
    sys.stderr.write(
        f"purejaxdrl: {name} received again: ending this process now, without saving\n"
    )
    sys.stderr.flush()
    os._exit(128 + signum)
