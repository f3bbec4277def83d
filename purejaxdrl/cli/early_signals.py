"""SIGINT / SIGTERM held from a command's first line, before JAX is imported.

Python's own handlers act on a signal at once: SIGTERM ends the process with
no line (status 143), and a Ctrl-C's KeyboardInterrupt lands wherever the main
thread is; in a `gc.callbacks` entry while JAX is imported Python drops it,
and the run trained to its end (reviews/ck17.md #1). `EarlySignals` holds them
as a record, importing nothing of JAX, until `hand_over` gives the first to
the handlers installed by then (`training.setup_stop.SetupHold`'s).
"""

import os
import signal
import threading
import types
from typing import Any

_HELD = (signal.SIGINT, signal.SIGTERM)


class EarlySignals:
    """From entry until `hand_over`, SIGINT / SIGTERM are recorded, not acted on.

    A second SIGINT before then aborts (KeyboardInterrupt), as it does once
    the run holds them; a repeated SIGTERM is the same request. After
    `hand_over` a signal that reaches these handlers (the run gave its own
    back) is handled as before entry. One entered inside another takes over
    its record. A no-op outside the main thread.
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}
        self._handed_over = False

    def __enter__(self) -> "EarlySignals":
        if threading.current_thread() is threading.main_thread():
            for signum in _HELD:
                self._previous[signum] = signal.signal(signum, self._handle)
                outer = getattr(self._previous[signum], "__self__", None)
                if isinstance(outer, EarlySignals) and not outer._handed_over:
                    # `cli.main`'s, held while the command's module loaded.
                    self.signum = self.signum or outer.signum
                    outer._handed_over = True
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _handle(self, signum: int, frame: types.FrameType | None) -> None:
        if self._handed_over:
            _as_before(signum, frame, self._previous.get(signum))
        elif self.signum is None:
            self.signum = signum
        elif signum == signal.SIGINT:
            raise KeyboardInterrupt

    def hand_over(self) -> None:
        """Gives the signal recorded, if any, to the handlers now installed."""
        self._handed_over = True
        if self.signum is not None:
            signal.raise_signal(self.signum)


def _as_before(signum: int, frame: types.FrameType | None, handler: Any) -> None:
    """Handles `signum` as `handler`, the one before `EarlySignals`, would."""
    if callable(handler):
        handler(signum, frame)
    elif handler == signal.SIG_IGN:
        return
    elif signum == signal.SIGINT:
        raise KeyboardInterrupt
    else:  # the default action: end the process
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
