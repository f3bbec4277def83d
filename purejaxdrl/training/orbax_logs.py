"""orbax's own error logs, kept quiet while a save purejaxdrl reports itself runs.

A failed write (a full disk, a read-only folder) makes orbax's worker threads
log the error with its traceback through absl, twice per save, before the
save raises, and some after it (its threads outlive the save): some 100
lines around the one line `Checkpointer` reports it with
(`faults.failure_reason`). Its warning of a save without metrics (an
unranked keep-best save: no episode ended in its chunk) is noise too.
orbax's records are dropped while a save runs and, once one has failed, until
the next run's `Checkpointer` is made (`loud_again`: a notebook's next run
shows orbax's logs again). Records of other loggers, and orbax's outside a
save of a run none failed in, pass.

orbax's own asyncio tasks that failed with the write are reported by asyncio
when collected ("Task exception was never retrieved", with the traceback):
those records, and only those (a traceback through orbax's code), are
dropped too, while a save runs and once one has failed.

After a failed save, TensorStore's writes still under way finish on its own
threads and call back into the asyncio loop orbax has closed, which prints a
`RuntimeError: Event loop is closed` traceback for each (an unraisable
exception), before the save raises or after the run's error line. Those are
dropped while a save runs and once one has failed; any other unraisable
exception is printed as before.
"""

import contextlib
import logging
import os
import pathlib
import sys
import threading
from collections.abc import Iterator

import orbax.checkpoint

_ORBAX = str(pathlib.Path(orbax.checkpoint.__file__).parent.parent) + os.sep


class _QuietWhileSaving(logging.Filter):
    """Drops orbax's records while a save is under way, on any thread.

    orbax logs from threads of its own, so the filter cannot ask whose save
    a record belongs to; while no save runs, in a process where none failed,
    it drops nothing.
    """

    def __init__(self) -> None:
        super().__init__()
        self.saving = 0
        self.failed = False  # a save failed: its late callbacks may still come
        self.lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        quiet = self.saving or self.failed
        return not (quiet and record.pathname.startswith(_ORBAX))


class _OrbaxTasksQuiet(logging.Filter):
    """Drops asyncio's records of orbax's failed tasks while `_FILTER` is quiet."""

    def filter(self, record: logging.LogRecord) -> bool:
        quiet = _FILTER.saving or _FILTER.failed
        return not (quiet and _through_orbax(record.exc_info))


def _through_orbax(exc_info: object) -> bool:
    """Whether `exc_info`'s traceback runs through orbax's code."""
    if not isinstance(exc_info, tuple) or len(exc_info) != 3:
        return False
    tb = exc_info[2]
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(_ORBAX):
            return True
        tb = tb.tb_next
    return False


_FILTER = _QuietWhileSaving()
_TASKS = _OrbaxTasksQuiet()


@contextlib.contextmanager
def quiet_orbax() -> Iterator[None]:
    """Drops orbax's absl log records while the block runs (re-entrant, threads)."""
    absl = logging.getLogger("absl")  # the logger absl.logging writes to
    # From the start: a failing save's late callbacks can come before it
    # raises (one CI run printed five tracebacks ahead of the error line).
    _drop_closed_loop_callbacks()
    logging.getLogger("asyncio").addFilter(_TASKS)  # once: a filter is a set
    with _FILTER.lock:
        if _FILTER.saving == 0:
            absl.addFilter(_FILTER)
        _FILTER.saving += 1
    try:
        yield
    except BaseException:
        _FILTER.failed = True
        raise
    finally:
        with _FILTER.lock:
            _FILTER.saving -= 1
            if _FILTER.saving == 0 and not _FILTER.failed:
                absl.removeFilter(_FILTER)


def loud_again() -> None:
    """Lets orbax's records pass again outside saves, after a failed one.

    Called as a new run's `Checkpointer` is made: the failed run's late
    records are behind it, and a notebook's later run shows orbax's logs.
    """
    with _FILTER.lock:
        _FILTER.failed = False
        if _FILTER.saving == 0:
            logging.getLogger("absl").removeFilter(_FILTER)


def _drop_closed_loop_callbacks() -> None:
    """Installs (once) the unraisable-exception hook that drops the late callbacks."""
    previous = sys.unraisablehook
    if getattr(previous, "_purejaxdrl", False):
        return

    def hook(unraisable: "sys.UnraisableHookArgs") -> None:
        late = (
            unraisable.exc_type is RuntimeError
            and str(unraisable.exc_value) == "Event loop is closed"
            and unraisable.object is None
            and (_FILTER.saving > 0 or _FILTER.failed)
        )
        if not late:
            previous(unraisable)

    hook._purejaxdrl = True  # type: ignore[attr-defined]
    sys.unraisablehook = hook
