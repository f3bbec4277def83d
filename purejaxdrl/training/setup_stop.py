"""A SIGINT / SIGTERM while a run sets up: held as a request, acted on between steps.

Python's own SIGINT handler raises KeyboardInterrupt wherever the main thread
is. Setup and compilation allocate heavily, so it often lands in one of
`gc.callbacks` (JAX's `_xla_gc_callback`), where Python prints "Exception
ignored" and drops it: the run then trained to its end. `train()` holds the
signals as a flag from its first step instead (`StopSignals`), checks it
between setup steps, and the chunk loop's handler takes it over.
"""

import signal

from purejaxdrl.training.faults import StopSignals


class _SetupSignals(StopSignals):
    """A `SetupHold`'s handlers: one entered inside another takes them over."""


class SetupHold:
    """SIGINT / SIGTERM as a request to stop, held by one process's `train()`.

    From entry until `release` (or exit) a signal only sets `requested`
    (`StopSignals`, which says one line); the chunk loop's own handler, if
    entered meanwhile, takes the request over. One entered inside another
    (`train()` inside the command's, held from its start) takes over its
    handlers and any request they hold. A run of many processes holds
    them from joining on (`cli.second_signal`), and its processes must stop
    together: that hold is left as it is, and nothing is held here. Outside
    the main thread (a run started from a thread) Python installs no handler
    and nothing is held either.
    """

    def __init__(self) -> None:
        self._stop: StopSignals | None = None

    def __enter__(self) -> "SetupHold":
        current = getattr(signal.getsignal(signal.SIGINT), "__self__", None)
        if isinstance(current, _SetupSignals):
            self._stop = current  # the command's: released here as if it were ours
        elif not isinstance(current, StopSignals):
            self._stop = _SetupSignals(before_training=True, saves=False)
            self._stop.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        """Gives the signals back to the handlers held before entry."""
        if self._stop is not None:
            self._stop.__exit__()
            self._stop = None

    @property
    def requested(self) -> str | None:
        """The signal held as a request (None: none, or not held here)."""
        return None if self._stop is None else self._stop.requested

    def stop_if_asked(self, resumed_from: int | None, resuming: bool = False) -> None:
        """Ends a run asked to stop while it set up, before it trains or saves.

        Args:
          resumed_from: the update a resumed run goes on from (None: a new
            run, whose folder the setup's cleanup removes).
          resuming: a resume not yet restored (`resumed_from` None).

        Raises:
          KeyboardInterrupt: a signal came; its message says what was kept.

        """
        if self.requested is not None:
            raise stopped_unsaved(resumed_from, resuming)


def end_setup_hold() -> None:
    """Ends a `SetupHold` entered further out where no chunk loop takes it over.

    A sweep or PBT run without files holds no signals while it trains (it has
    nowhere to save: Python's handler interrupts it). Called once it has
    compiled, before its first chunk: a signal held meanwhile stops it first,
    unsaved (`stop_if_asked`), and Python's handlers are back either way.
    Without a hold further out, nothing changes.
    """
    with SetupHold() as held:  # takes the outer one over, released on exit
        held.stop_if_asked(None)


def stopped_unsaved(
    resumed_from: int | None, resuming: bool = False
) -> KeyboardInterrupt:
    """A run stopped before its first update: what it kept (`stop_if_asked`)."""
    if resumed_from is None and resuming:
        return KeyboardInterrupt(
            "stopped before resuming; the run's checkpoints are as they were"
        )
    if resumed_from is None:
        return KeyboardInterrupt("stopped before the first update; nothing was saved")
    return KeyboardInterrupt(
        f"stopped before training on from update {resumed_from:,}; the run's "
        "checkpoints are as they were"
    )
