"""SIGINT / SIGTERM held from a command's first line, before JAX is imported.

Python's own handlers act on a signal at once: SIGTERM ends the process with
no line (status 143), and a Ctrl-C's KeyboardInterrupt lands wherever the main
thread is; in a `gc.callbacks` entry while JAX is imported Python drops it,
and the run trained to its end (reviews/ck17.md #1). `EarlySignals` holds them
as a record, importing nothing of JAX, until `hand_over` gives the first to
the handlers installed by then (`training.setup_stop.SetupHold`'s).
"""

import signal
import types

from purejaxdrl.signal_holds import SignalHold


class EarlySignals(SignalHold):
    """From entry until `hand_over`, SIGINT / SIGTERM are recorded, not acted on.

    A second SIGINT before then aborts (KeyboardInterrupt), as it does once
    the run holds them; a repeated SIGTERM is the same request. After
    `hand_over` a signal that reaches these handlers (the run gave its own
    back) is handled as before entry. One entered inside another takes over
    its record. A no-op outside the main thread.
    """

    def __init__(self) -> None:
        super().__init__()
        self.signum: int | None = None

    def _take_over(self, outer: SignalHold) -> bool:
        """Takes the record of `cli.main`'s, held while the command's module loaded."""
        if not isinstance(outer, EarlySignals) or outer._handed_over:
            return False
        self.signum = self.signum or outer.signum
        return True

    def _held(self, signum: int, frame: types.FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
        elif signum == signal.SIGINT:
            raise KeyboardInterrupt

    def hand_over(self) -> None:
        """Gives the signal recorded, if any, to the handlers now installed."""
        self._handed_over = True
        if self.signum is not None:
            signal.raise_signal(self.signum)
