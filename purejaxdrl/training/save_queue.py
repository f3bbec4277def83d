"""Checkpoint saves on a background thread: a newer waiting save replaces an older.

One save is written at a time, on the `Checkpointer`'s background thread; the
others wait here. A save marked `skippable` that is still waiting (the writer
has not started it) when a newer save arrives is dropped, and its packed arrays
with it: the writer is busy either way, so had the host loop waited, the newest
checkpoint on disk would be no newer; instead training goes on. The save being
written is never interrupted, and the newest save is never dropped, so `join`
returns once the last save asked for is on disk (a run's final save, and its
save on SIGINT / SIGTERM).

With `keep_best`, a waiting save whose metric is higher than that of every save
queued before it (the best so far) is kept until a better one arrives, so the
best chunk's state is written and orbax's best-N policy can keep it. It waits
beside the newest save rather than block the loop as before: while a run's
return climbs, nearly every save is the best so far, and blocking on each
would hold such runs back as much as before. A better save may replace it: the
checkpointer keeps the one best (n=1), so it would be deleted once the better
one is written anyway. At most two saves wait; the loop never waits for a
skippable save. Before it packs its next save, the loop drops the waiting
saves that one will replace in any case (`drop_replaceable`), so their device
copies of the state are gone before the new copy is made.

A save not marked `skippable` (sweeps, PBT) waits its turn, as in a queue of
one: the caller blocks while another such save waits.
"""

import contextlib
import math
import os
import threading
from collections.abc import Callable
from typing import Any, NamedTuple


class Save(NamedTuple):
    """One save asked for: `Checkpointer.save`'s arguments."""

    step: int
    packed: dict[str, Any]
    meta: dict[str, Any]
    metric: float | None
    skippable: bool


class SaveQueue:
    """The saves waiting for one writer thread (thread-safe).

    Attributes:
      replaced: how many waiting saves a newer one replaced.

    """

    def __init__(self, *, keep_best: bool = False):
        """An empty queue; `keep_best`: keep the best save so far (see module)."""
        self._keep_best = keep_best
        self._cond = threading.Condition()
        self._waiting: list[Save] = []
        self._writing = False
        self._closed = False
        self._best = -math.inf  # the highest metric queued so far
        self._pinned: Save | None = None  # the save that holds it, while waiting
        self._taken: int | None = None  # the step of the newest save `get` gave
        self.replaced = 0

    def put(self, save: Save) -> None:
        """Queues `save`, dropping the skippable saves it makes pointless.

        Blocks only while a save that is not skippable waits.
        """
        with self._cond:
            while any(not w.skippable for w in self._waiting):
                self._cond.wait()
            best = self._is_best(save)
            # Identity, not ==: a Save holds arrays.
            kept = [w for w in self._waiting if w is self._pinned and not best]
            self.replaced += len(self._waiting) - len(kept)
            self._waiting = [*kept, save]  # drops the others' packed arrays
            if best:
                self._pinned = save
            self._cond.notify_all()

    def drop_replaceable(self, newest: int | None) -> int | None:
        """Drops the waiting skippable saves a next `put` replaces in any case.

        Those but the pinned best, and only while a save is being written (an
        idle writer is about to take them). The next save's state may still
        prove non-finite and never come, so the newest good save is then one
        still kept.

        Args:
          newest: the step of the newest save asked for (or restored), or None.

        Returns:
          `newest`, or, if it was dropped, the newest step still kept (waiting
          or being written).

        """
        with self._cond:
            if not self._writing:
                return newest
            kept = [w for w in self._waiting if not w.skippable or w is self._pinned]
            dropped = {w.step for w in self._waiting} - {w.step for w in kept}
            self.replaced += len(self._waiting) - len(kept)
            self._waiting = kept  # drops the others' packed arrays
            if newest not in dropped:
                return newest
            return max([w.step for w in kept] + [self._taken])

    def _is_best(self, save: Save) -> bool:
        """Whether `save`'s metric beats every one queued before (and notes it)."""
        metric = save.metric
        if not self._keep_best or metric is None or not math.isfinite(metric):
            return False
        if metric <= self._best:
            return False
        self._best = metric
        return True

    def get(self) -> Save | None:
        """The oldest waiting save, now being written; None once closed and empty.

        Blocks until there is one. Call `done` when it is written.
        """
        with self._cond:
            while not self._waiting and not self._closed:
                self._cond.wait()
            if not self._waiting:
                return None
            save = self._waiting.pop(0)
            if save is self._pinned:
                self._pinned = None
            self._writing, self._taken = True, save.step
            self._cond.notify_all()  # a save waiting its turn may be queued now
            return save

    def done(self) -> None:
        """Marks the save `get` returned as written (or failed)."""
        with self._cond:
            self._writing = False
            self._cond.notify_all()

    def join(self) -> None:
        """Blocks until no save waits and none is being written."""
        with self._cond:
            while self._waiting or self._writing:
                self._cond.wait()

    def drop_waiting(self) -> None:
        """Drops every waiting save (after a failed one: none is written)."""
        with self._cond:
            self._waiting, self._pinned = [], None
            self._cond.notify_all()

    def close(self) -> None:
        """Lets `get` return None once the queue is empty (the writer stops)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()


class SaveWriter:
    """A low-priority background thread writing the saves of a `SaveQueue`.

    Not jittable: does I/O. Once a save fails, no other is written: those
    waiting are dropped, later ones skipped, so a folder that failed a write
    (a full disk) is not tried again, nor left more of orbax's temporary
    folders. `take_error` gives the failure once.
    """

    def __init__(
        self, write: Callable[[Save], None], *, keep_best: bool = False
    ) -> None:
        """Starts the thread; `write(save)` writes one save and returns when done."""
        self._write = write
        self._queue = SaveQueue(keep_best=keep_best)
        self._error: BaseException | None = None
        self._reported = False
        self._thread = threading.Thread(
            target=self._work, name="purejaxdrl-checkpoint", daemon=True
        )
        self._thread.start()

    @property
    def replaced(self) -> int:
        """How many waiting saves a newer one replaced (never written)."""
        return self._queue.replaced

    def put(self, save: Save) -> None:
        """Queues `save` (see `SaveQueue.put`)."""
        self._queue.put(save)

    def drop_replaceable(self, newest: int | None) -> int | None:
        """Drops the saves the next replaces anyway (`SaveQueue.drop_replaceable`)."""
        return self._queue.drop_replaceable(newest)

    def _work(self) -> None:
        # Lowest CPU priority for this thread (and the threads orbax starts
        # from it): on a CPU host the save then takes cores only when XLA's
        # threads leave them idle. Linux sets nice values per thread.
        with contextlib.suppress(AttributeError, OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        while (save := self._queue.get()) is not None:
            try:
                if self._error is None:
                    self._write(save)
            except BaseException as e:  # reported on the next call from the loop
                self._error = e
                self._queue.drop_waiting()
            finally:
                save = None  # its arrays, not held while the thread waits
                self._queue.done()

    def take_error(self, again: bool = False) -> BaseException | None:
        """The error of a failed save, or None; None once given, unless `again`."""
        if self._reported and not again:
            return None
        self._reported = self._error is not None
        return self._error

    def join(self) -> None:
        """Blocks until the newest save is written (or failed)."""
        self._queue.join()

    def close(self) -> None:
        """Waits for the saves queued, then stops the thread."""
        if self._thread.is_alive():
            self._queue.join()
            self._queue.close()
            self._thread.join()
