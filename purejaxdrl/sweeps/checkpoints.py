"""A sweep's checkpoints: resume a killed sweep where it stopped, exactly.

A sweep that writes files keeps, under `checkpoints/` of its directory, each
batch's stacked runner state (every run's learner, optimiser, replay shards,
environments and keys) after every `checkpoint.every` chunks (0: none) and
when SIGINT / SIGTERM stops the sweep, with the metrics
its runs have logged, through the same orbax `Checkpointer` as single runs
(atomic, verified). A batch that finishes writes its runs' metrics and final
parameters (`runs/`, `params/`) and a `.done` record, and its checkpoints are
removed. `resume_sweep(dir)` (`purejaxdrl sweep --resume DIR`) skips finished
batches, restores the newest checkpoint of the batch that was running and
trains on: every run ends as it would have without the interruption.
"""

import dataclasses
import json
import pathlib
import shutil
from collections.abc import Callable
from typing import Any

import jax
from jax.sharding import Mesh

from purejaxdrl.config import ConfigError
from purejaxdrl.observe.records import reading
from purejaxdrl.runners.anakin import RunnerState
from purejaxdrl.sweeps.layout import Layout, runs_per_device
from purejaxdrl.sweeps.messages import recorded_mesh, size_flag
from purejaxdrl.sweeps.result import SweepResult
from purejaxdrl.sweeps.run_files import read_run_files, write_run_files
from purejaxdrl.training.checkpoint import Checkpointer
from purejaxdrl.training.memory import gib
from purejaxdrl.training.run_files import write_atomically

# The fix for a damaged record of checkpoints/: without it, resume redoes it.
_REDO = "it is replaced whole, so something else changed it: delete it and "
_REDO += "resume (what it recorded is then trained again)"


class BatchCheckpoint:
    """The checkpoints of one batch of runs (a thin wrapper of a Checkpointer)."""

    def __init__(self, directory: pathlib.Path, states: RunnerState, mesh: Mesh):
        abstract = jax.tree.map(
            lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), states
        )
        shardings = jax.tree.map(lambda x: x.sharding, states)
        self._checkpointer = Checkpointer(directory, abstract, shardings, mesh, keep=2)
        self.pack = self._checkpointer.pack

    def save(self, updates: int, packed: Any, result: SweepResult, runs: list[int]):
        """Saves a packed state after `updates`, with its runs' records so far."""
        meta = {
            # Copies: the save runs in the background while records are added.
            "histories": [list(result.histories[r]) for r in runs],
            "diverged": [result.diverged[r] for r in runs],
        }
        self._checkpointer.save(updates, packed, meta)

    def restore(
        self, result: SweepResult, runs: list[int], say: Callable[[str], None]
    ) -> tuple[int, RunnerState] | None:
        """(updates done, state) of the newest good checkpoint, or None.

        The runs' records and divergences in `result` are set to the saved ones;
        `say` is told of each newer checkpoint skipped (and where it was moved).
        """
        restored = self._checkpointer.restore_latest()
        for line in restored.skipped:
            say(f"sweep: {line}")
        if restored.step is None:
            return None
        for j, run in enumerate(runs):
            result.histories[run] = list(restored.meta["histories"][j])
            result.diverged[run] = restored.meta["diverged"][j]
        return restored.step, restored.state

    def close(self) -> None:
        """Waits for pending saves."""
        self._checkpointer.close()


@dataclasses.dataclass
class SweepStore:
    """Where a sweep directory keeps what a resumed sweep needs.

    Attributes:
      directory: the sweep directory.
      every: save a batch's state after every N chunks (0: only when a
        stop signal ends the sweep early).

    """

    directory: pathlib.Path
    every: int = 1

    @property
    def _root(self) -> pathlib.Path:
        return self.directory / "checkpoints"

    def _layout_path(self, group: int) -> pathlib.Path:
        return self._root / f"p{group}.layout.json"

    def _saved_layout(self, group: int) -> Layout | None:
        path = self._layout_path(group)
        if not path.exists():
            return None
        with reading(path, _REDO):
            return Layout(**json.loads(path.read_text()))

    def recorded_shape(self, group: int) -> tuple[tuple[int, int], str | None] | None:
        """The (sweep, data) mesh group `group` was laid out on, if it was.

        Its checkpoints hold that mesh, so a resumed group keeps it, on the
        first sweep x data devices however many more are visible (with the
        line that says so, `recorded_mesh`).

        Raises:
          ConfigError: fewer local devices than the recorded mesh needs.

        """
        saved = self._kept_layout(group)
        if saved is None:
            return None
        return recorded_mesh(self.directory, "sweep", (saved.sweep, saved.data))

    def bound(self, group: int, num_batches: int) -> bool:
        """Whether group `group`'s recorded batches are fixed by what it saved.

        They are while one of its batches has a saved checkpoint (which holds
        that many runs stacked) or some, not all, of its `num_batches` batches
        are finished (the rest must keep their runs). A layout recorded before
        anything was saved binds nothing: a sweep killed in its first batch
        is laid out again.
        """
        done = sum(self.finished(group, b) for b in range(num_batches))
        if 0 < done < num_batches:
            return True
        folders = (f for f in self._root.glob(f"p{group}-b*") if f.is_dir())
        return any(step.name.isdigit() for f in folders for step in f.iterdir())

    def _kept_layout(self, group: int) -> Layout | None:
        """The recorded layout, if what the group saved holds it (or it finished)."""
        saved = self._saved_layout(group)
        if saved is None:
            return None
        batches = saved.num_batches
        if all(self.finished(group, b) for b in range(batches)):
            return saved
        return saved if self.bound(group, batches) else None

    def layout(self, group: int, layout: Layout) -> Layout:
        """The layout group `group` trains with: the recorded one, if kept.

        A resumed sweep keeps its batches where they are `bound` (their
        checkpoints hold that many runs each) or all finished (their records
        are numbered by them), on its recorded mesh (`recorded_shape`).
        Otherwise `layout` is recorded and used.
        """
        saved = self._kept_layout(group)
        if saved is None:
            self._root.mkdir(parents=True, exist_ok=True)
            path = self._layout_path(group)
            write_atomically(path, json.dumps(dataclasses.asdict(layout)))
            return layout
        return saved

    def check_budget(self, groups: int, device_memory: int | None) -> None:
        """Refuses a resume's `device_memory` that a recorded batch exceeds.

        A batch's checkpoints hold its runs stacked (and its finished
        batches' records are numbered by it), so a resumed group keeps its
        recorded batches while they are `bound`: a budget that would split
        them finer is refused before anything compiles, rather than kept
        silently. A larger one, or one that fits them, applies to the groups
        not started yet (a finished group needs none).

        Raises:
          ConfigError: naming the group's recorded batches and the budgets
            that resume it.

        """
        if device_memory is None:
            return
        for group in range(groups):
            saved = self._saved_layout(group)
            if saved is None or not self.bound(group, saved.num_batches):
                continue
            if saved.runs_per_device > runs_per_device(device_memory, saved.run_bytes):
                which = f"program {group + 1} of {groups}'s" if groups > 1 else "its"
                raise ConfigError(
                    f"{self.directory}: {which} {_kept(saved, device_memory)}"
                )

    def _done_path(self, group: int, batch: int) -> pathlib.Path:
        return self._root / f"p{group}-b{batch}.done"

    def finished(self, group: int, batch: int) -> bool:
        """Whether the batch's results are already in the directory."""
        return self._done_path(group, batch).exists()

    def load_finished(
        self, group: int, batch: int, result: SweepResult, runs: list[int]
    ) -> None:
        """Reads a finished batch's records, divergences and parameters."""
        path = self._done_path(group, batch)
        with reading(path, _REDO):
            diverged_at = json.loads(path.read_text())["diverged"]
        for run, diverged in zip(runs, diverged_at, strict=True):
            history, params, stats = read_run_files(self.directory, run)
            result.histories[run], result.final_params[run] = history, params
            result.final_stats[run] = stats
            result.diverged[run] = diverged

    def open(
        self, group: int, batch: int, states: RunnerState, mesh: Mesh
    ) -> BatchCheckpoint:
        """The batch's checkpoints.

        Also with `every` 0: none falls due then, but a stop signal still
        saves the batch (`train_batch`), as a single run's does.
        """
        return BatchCheckpoint(self._root / f"p{group}-b{batch}", states, mesh)

    def finish(
        self,
        group: int,
        batch: int,
        result: SweepResult,
        runs: list[int],
        checkpoint: BatchCheckpoint | None,
    ) -> None:
        """Writes a trained batch's run files, marks it done, drops its states."""
        for run in runs:
            write_run_files(
                self.directory,
                run,
                result.histories[run],
                result.final_params[run],
                result.final_stats[run],
            )
        done = {"runs": runs, "diverged": [result.diverged[r] for r in runs]}
        write_atomically(self._done_path(group, batch), json.dumps(done))
        if checkpoint is not None:
            checkpoint.close()
            shutil.rmtree(self._root / f"p{group}-b{batch}", ignore_errors=True)


def _kept(saved: Layout, device_memory: int) -> str:
    """Why a resume refuses `device_memory` below its `saved` batches, and the fix."""
    need = saved.runs_per_device * saved.run_bytes
    return (
        f"checkpoints hold batches of {saved.batch_size} runs, "
        f"{saved.runs_per_device} per device (~{gib(saved.run_bytes)} each), more "
        f"than a budget of {gib(device_memory)} per device holds; resume without "
        "--device-memory (device_memory=None in Python) where they fit, or with "
        f"--device-memory {size_flag(need)} (device_memory={need} in Python) "
        "or more: a resume cannot split its recorded batches (a smaller budget "
        "needs the sweep started again); nothing was changed."
    )
