"""SIGINT / SIGTERM held by a stack of handlers, each taking over the one outside it.

Two kinds hold them: the command's first lines (`cli.early_signals`, before
JAX is imported) and a run (`training.faults.StopSignals`). Both install
their handlers from the main thread only (Python's rule), restore the
previous ones on exit, take over what an outer one of their kind held when
entered inside it, and, once handed over, handle a signal as the handler they
replaced would. `SignalHold` is that shared part; it imports nothing of JAX.
"""

import os
import signal
import threading
import types
from typing import Any

HELD = (signal.SIGINT, signal.SIGTERM)


class SignalHold:
    """Holds SIGINT / SIGTERM from entry to exit; a subclass says what holding is.

    `_held` is called for a signal while this is the hold in force;
    `_take_over` decides whether an outer hold, found installed on entry, is
    one this takes over (then its signals come here: it is handed over). A
    handed-over hold passes a signal that still reaches it (the inner one
    gave it back) on to the handler it replaced. A no-op outside the main
    thread.
    """

    def __init__(self) -> None:
        self._previous: dict[int, Any] = {}
        self._handed_over = False

    def __enter__(self) -> "SignalHold":
        if threading.current_thread() is threading.main_thread():
            for signum in HELD:
                previous = signal.signal(signum, self._handle)
                self._previous[signum] = previous
                outer = getattr(previous, "__self__", None)
                if isinstance(outer, SignalHold) and self._take_over(outer):
                    outer._handed_over = True
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _handle(self, signum: int, frame: types.FrameType | None) -> None:
        if self._handed_over:  # what held it has moved on or ended
            pass_on(signum, frame, self._previous.get(signum))
        else:
            self._held(signum, frame)

    def _held(self, signum: int, frame: types.FrameType | None) -> None:
        """What a signal does while this hold is in force."""
        raise NotImplementedError

    def _take_over(self, outer: "SignalHold") -> bool:
        """Takes over what `outer` holds (True), or leaves it (False)."""
        return False


def pass_on(signum: int, frame: types.FrameType | None, handler: Any) -> None:
    """Handles signal `signum` as `handler`, the one a hold replaced, would.

    `None` (a handler not set from Python) acts as the default: SIGINT
    interrupts, SIGTERM ends the process; `SIG_IGN` ignores it.
    """
    if callable(handler):
        handler(signum, frame)
    elif handler == signal.SIG_IGN:
        return
    elif signum == signal.SIGINT:
        raise KeyboardInterrupt
    else:  # the default action: end the process
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
