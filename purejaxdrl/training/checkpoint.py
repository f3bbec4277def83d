"""Whole-run checkpoints with orbax: asynchronous, verified, resumable anywhere.

A checkpoint is the complete `RunnerState` (parameters, optimiser state with its
step count, environment states, normaliser statistics, lagged behaviour
parameters, random keys, counters) plus a JSON record of the run (config,
metrics so far). It is written by orbax's `CheckpointManager`, which writes each
step to a temporary folder and renames it when complete (atomic), on every
process of a multi-host run.

Two things make saving cheap: the state is packed on device into a few arrays
(`packing.py`), a new buffer the runner need not wait for; and saving runs on a
low-priority background thread, so the host loop only enqueues. A skippable save
(the training loop's) that is still waiting when a newer one is asked for is
replaced by it (`save_queue.py`): saves never hold training back, and the last
one is always written. Other saves wait their turn (`waited`).

After orbax commits a step, process 0 writes a SHA-256 manifest of its files
(`purejaxdrl.sha256`). Restoring verifies it, so a truncated or corrupted
checkpoint is reported and skipped in favour of the one before it.
"""

import json
import os
import pathlib
import time
from typing import Any, NamedTuple

import jax
import numpy as np
import orbax.checkpoint as ocp
from jax.sharding import Mesh

from purejaxdrl.config import ConfigError
from purejaxdrl.coordination import barrier, orbax_barriers_without_devices
from purejaxdrl.training.faults import read_failure, save_failure
from purejaxdrl.training.integrity import NO_MANIFEST, verify_once, write_manifest
from purejaxdrl.training.orbax_logs import loud_again, quiet_orbax
from purejaxdrl.training.packing import make_packer
from purejaxdrl.training.retention import RETURN, backfill_returns, retention_options
from purejaxdrl.training.save_queue import Save, SaveWriter
from purejaxdrl.types import PyTree

SKIPPED = "skipped"  # where checkpoints that fail verification are moved
MISFIT = "its state does not fit this run's"  # how `misfit_problem`'s line begins


class CheckpointError(RuntimeError):
    """Saving a checkpoint failed (disk full, permissions, ...)."""


class LayoutMisfit(ConfigError):
    """An intact checkpoint of another layout; `detail`: `layout_difference`'s."""

    def __init__(self, message: str, detail: str):
        super().__init__(message)
        self.detail = detail


class Restored(NamedTuple):
    """The newest checkpoint that verified, and the ones skipped on the way.

    `step` is the number of updates it holds (None when nothing could be
    restored), `state` the RunnerState, `meta` the JSON record saved with it,
    and `skipped` one line per newer checkpoint that failed verification;
    `misfits` of those lines are intact checkpoints of another layout
    (`misfit_problem`, read-only readers only), the others damaged ones.
    """

    step: int | None
    state: Any
    meta: dict[str, Any] | None
    skipped: list[str]
    misfits: int = 0


def _layout(array: Any) -> str:
    """`float32[4, 16]` for an array's metadata or shape; `none` for None."""
    if array is None:
        return "none"
    return f"{np.dtype(array.dtype).name}{list(array.shape)}"


def misfit_problem(detail: str) -> str:
    """Why a checkpoint whose `layout_difference` is `detail` cannot be restored."""
    return f"{MISFIT} ({detail}): another purejaxdrl version or config saved it"


def _skipped_line(step: int, problem: str) -> str:
    return f"checkpoint at update {step} skipped: {problem}"


def _newest_whole(directory: pathlib.Path) -> pathlib.Path | None:
    """The folder of the newest checkpoint in `directory` that verifies, or None.

    A step without its manifest counts (see `Checkpointer.restore_latest`);
    orbax's temporary folders, not yet renamed to their step, do not.
    """
    steps = [p for p in directory.glob("*") if p.name.isdigit() and p.is_dir()]
    for path in sorted(steps, key=lambda p: int(p.name), reverse=True):
        if verify_once(path) in (None, NO_MANIFEST):
            return path
    return None


def saved_devices(run_dir: str | os.PathLike) -> int | None:
    """The device count `run_dir`'s newest checkpoint that verifies was saved on.

    That of `Checkpointer.newest_meta`, read without a checkpointer:
    `replay_shards.replay_devices` chooses the devices one is made for, and
    `run.restore` holds a replay to the count. None without such a checkpoint,
    or where its meta records no count.
    """
    newest = _newest_whole(pathlib.Path(run_dir, "checkpoints").absolute())
    if newest is None:
        return None
    try:  # orbax's file of the JSON `meta` item
        return int(json.loads((newest / "meta" / "metadata").read_text())["devices"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


class Checkpointer:
    """Saves and restores whole runner states under `directory`, one per step.

    Not jittable: does I/O on a background thread. Every process of a
    multi-host run must create one and call `save` with the same steps.
    """

    def __init__(
        self,
        directory: str | os.PathLike,
        abstract: PyTree,
        shardings: PyTree,
        mesh: Mesh,
        *,
        keep: int = 3,
        keep_best: bool = False,
        read_only: bool = False,
    ):
        """Opens (or creates) the checkpoint folder.

        Args:
          directory: the folder holding one sub-folder per saved step.
          abstract: the state's structure (`jax.eval_shape(runner.init, key)`).
          shardings: a NamedSharding per leaf of the state.
          mesh: the mesh states are restored onto.
          keep: how many of the newest checkpoints to keep.
          keep_best: also keep the one with the highest `metric`, saved with
            each checkpoint so that a resume keeps it (`retention.py`).
          read_only: open an existing folder only to restore from it (creates
            nothing, deletes nothing).

        """
        loud_again()  # a failed save of an earlier run quietened orbax for it
        self.directory = pathlib.Path(directory).absolute()  # orbax's rule
        self.abstract = abstract
        self._read_only = read_only
        self.pack, self.unpack, self._abstract_packed = make_packer(
            abstract, shardings, mesh
        )
        self._keep_best = keep_best
        options = ocp.CheckpointManagerOptions(
            # Saving is already off the host loop's thread (see `save`); a
            # synchronous orbax save there means "returned" == "committed".
            enable_async_checkpointing=False,
            **retention_options(keep, keep_best),  # returns kept across resumes
            cleanup_tmp_directories=not read_only,
            create=not read_only,
        )
        orbax_barriers_without_devices()  # hosts may differ in devices
        self._manager = ocp.CheckpointManager(self.directory, options=options)
        self._writer = SaveWriter(
            lambda s: self._save_now(s.step, s.packed, s.meta, s.metric),
            keep_best=keep_best,
        )
        self.drop_replaceable = self._writer.drop_replaceable  # before a `pack`
        self.waited = 0.0  # seconds `save` held its caller: the run's cost

    def save(
        self,
        step: int,
        packed: dict[str, jax.Array],
        meta: dict[str, Any],
        metric: float | None = None,
        *,
        skippable: bool = False,
    ) -> None:
        """Saves a packed state as `step`, in the background.

        Pack first (`packed = checkpointer.pack(state)`, a device copy queued
        behind the computation of `state`); the caller may then donate `state`
        to the next chunk at once, and call `save` once it knows the state is
        good (finite), typically after reading the chunk's metrics.

        Args:
          step: the number of updates the state holds.
          packed: `self.pack(state)`.
          meta: JSON-serialisable record of the run (config, metrics so far).
          metric: the value `keep_best` ranks by (None or NaN: not ranked).
          skippable: a newer save may replace this one while it waits for the
            writer (see `save_queue.py`), so this call never blocks; else it
            waits while another such save waits. The newest save is always
            written: after `wait()`, `step` of the last call is on disk.

        Raises:
          CheckpointError: a save failed (an earlier one, or in a run of
            several processes this one); once one has, nothing more is written.

        """
        self._raise_error(again=True)  # after a failure nothing more is written
        start = time.perf_counter()
        if jax.process_count() > 1:
            # orbax's multi-host barriers are device collectives: from another
            # thread they would interleave with the training program's in a
            # different order on each process (a deadlock): saved in order.
            try:
                self._save_now(step, packed, meta, metric)
            except Exception as e:
                self._raise_error(error=e)
        else:
            self._writer.put(Save(step, packed, meta, metric, skippable))
        self.waited += time.perf_counter() - start

    def _save_now(
        self, step: int, packed: dict, meta: dict, metric: float | None
    ) -> None:
        metrics = None
        if metric is not None and np.isfinite(metric):
            metrics = {RETURN: float(metric)}
        with quiet_orbax():  # a failure is raised, and then said in one line
            self._manager.save(
                step,
                args=ocp.args.Composite(
                    state=ocp.args.StandardSave(packed), meta=ocp.args.JsonSave(meta)
                ),
                metrics=metrics,
                force=True,
            )
            self._manager.wait_until_finished()
        if jax.process_index() == 0:
            write_manifest(self.directory / str(step))

    def _raise_error(self, again: bool = False, error: Exception | None = None) -> None:
        if (error := error or self._writer.take_error(again)) is not None:
            raise CheckpointError(save_failure(self.directory, error)) from error

    def wait(self) -> None:
        """Blocks until the newest save is committed (and raises a save's error)."""
        self._writer.join()
        self._raise_error()

    def close(self) -> None:
        """Waits for pending saves and stops the background thread."""
        self._writer.close()
        self._manager.close()
        self._raise_error()

    def steps(self) -> list[int]:
        """Saved steps (updates done), oldest first."""
        self._manager.reload()
        return sorted(self._manager.all_steps())

    def restore_latest(self) -> Restored:
        """Restores the newest checkpoint whose files verify; see `Restored`.

        Newer checkpoints that fail are then moved to `skipped/` (kept for
        inspection, never deleted), so the resumed run can save those steps
        again. A step orbax committed whose manifest the run had not written
        yet (it stopped between the two: orbax may already have pruned the
        older steps) is restored, and gets its manifest then.

        Raises:
          ConfigError: an intact checkpoint of another layout, or (unless
            read-only) checkpoints of which none can be restored: starting
            over from update 0 instead is for the user to choose, and
            nothing is moved or deleted then.

        """
        failed: list[tuple[int, str]] = []
        skipped: list[str] = []
        misfits = 0
        for step in reversed(self.steps()):
            problem = verify_once(self.directory / str(step))
            unhashed = problem == NO_MANIFEST
            whole = problem is None or unhashed
            if whole and (detail := self.layout_difference(step)):
                # An intact checkpoint of another build: never set aside.
                line = _skipped_line(step, misfit_problem(detail))
                if not self._read_only:
                    raise LayoutMisfit(
                        f"{line}; resume it with the purejaxdrl version and "
                        "config that saved it, or start a new run (nothing was "
                        "moved or deleted).",
                        detail,
                    )
                skipped.append(line)
                misfits += 1
                continue
            if whole:
                try:
                    restored = self.restore(step)
                except Exception as e:  # unreadable despite its manifest
                    problem = f"could not be read ({read_failure(e)})"
                else:
                    restored = restored._replace(misfits=misfits)
                    return self._restored(restored, failed, skipped, unhashed)
            failed.append((step, problem))
        lines = [_skipped_line(s, p) for s, p in failed]
        if failed and not self._read_only:
            raise ConfigError(
                f"none of the checkpoints in {self.directory} can be restored ("
                + "; ".join(lines)
                + f"); nothing was moved or deleted: to train from update 0 "
                f"instead, move {self.directory} elsewhere and resume again."
            )
        return Restored(None, None, None, skipped + lines, misfits)

    def _restored(
        self,
        restored: Restored,
        failed: list[tuple[int, str]],
        skipped: list[str],
        unhashed: bool,
    ) -> Restored:
        """`restored`, once the newer `failed` steps are set aside."""
        for step, problem in failed:
            line = _skipped_line(step, problem)
            if not self._read_only:
                line += f"; moved to {self._set_aside(step)}"
            skipped.append(line)
        if unhashed and not self._read_only and jax.process_index() == 0:
            write_manifest(self.directory / str(restored.step))
        if self._keep_best and not self._read_only:  # saved before 2026-12-04
            history = (restored.meta or {}).get("history", [])
            backfill_returns(self._manager, self.directory, history)
        return restored._replace(skipped=skipped)

    def layout_difference(self, step: int) -> str | None:
        """Checkpoint `step`'s first array unlike this run's, or None.

        `name: float32[4] saved, float32[8] here`.

        Read from its metadata before any array: a restore that fails on a
        shape leaves orbax's reads of the other arrays pending, and they print
        hundreds of lines of tracebacks when the process exits.
        """
        reader = ocp.StandardCheckpointHandler()
        try:
            saved = dict(reader.metadata(self.directory / str(step) / "state").tree)
        except Exception:  # unreadable metadata: the restore will say why
            return None
        finally:
            reader.close()
        here = self._abstract_packed
        for name in sorted(set(saved) | set(here)):
            on_disk = _layout(saved.get(name))
            this_run = _layout(here.get(name))
            if on_disk != this_run:
                return f"{name}: {on_disk} saved, {this_run} here"
        return None

    def _set_aside(self, step: int) -> pathlib.Path:
        target = self.directory / SKIPPED / str(step)
        suffix = 1
        while target.exists():
            suffix += 1
            target = self.directory / SKIPPED / f"{step}-{suffix}"
        if jax.process_index() == 0:
            target.parent.mkdir(exist_ok=True)
            os.replace(self.directory / str(step), target)
        barrier(f"set_aside/{step}")  # (each process then reloads the list)
        self._manager.reload()
        return target

    def newest_meta(self) -> dict | None:
        """The metadata of the newest checkpoint that verifies, without its state.

        A step without its manifest counts (see `restore_latest`). The
        checkpoint `saved_devices` reads, without a checkpointer.
        """
        newest = _newest_whole(self.directory)
        if newest is None:
            return None
        restored = self._manager.restore(
            int(newest.name), args=ocp.args.Composite(meta=ocp.args.JsonRestore())
        )
        return dict(restored["meta"])

    def restore(self, step: int, skipped: list[str] | None = None) -> Restored:
        """Restores the checkpoint of `step` onto this checkpointer's mesh."""
        restored = self._manager.restore(
            step,
            args=ocp.args.Composite(
                state=ocp.args.StandardRestore(self._abstract_packed),
                meta=ocp.args.JsonRestore(),
            ),
        )
        state = self.unpack(restored["state"])
        return Restored(step, state, dict(restored["meta"]), list(skipped or []))
