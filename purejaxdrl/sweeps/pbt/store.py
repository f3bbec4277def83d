"""A PBT run's checkpoints: resume a killed population where it stopped, exactly.

A PBT run that writes files saves, under `checkpoints/` of its directory, the
population's configs and stacked runner states (every member's learner,
optimiser, replay shards, environments and keys) right after each ready step,
with the records and lineage so far, through the same orbax `Checkpointer` as
single runs and sweeps (atomic, verified). Saved there, the window of returns
the next ranking uses is empty. A population stopped by a signal is saved
after its current chunk instead, with its window (the members' return sums
and counts since the last ready step, exact as float32 in JSON).
`resume_pbt(dir)` (`purejaxdrl pbt --resume DIR`) restores the newest
checkpoint and trains on, and every member ends as it would have without the
interruption (the ready steps' keys depend on the chunk only).
"""

import json
import pathlib
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh

from purejaxdrl.runners.anakin import RunnerState
from purejaxdrl.sweeps.batch import resume_call
from purejaxdrl.sweeps.pbt.lineage import PBTResult, lineage_rows, read_lineage
from purejaxdrl.training import opened_run
from purejaxdrl.training.checkpoint import Checkpointer


class PBTCheckpoint:
    """The checkpoints of a population (a thin wrapper of a Checkpointer)."""

    def __init__(
        self,
        directory: pathlib.Path,
        hps: Any,
        states: RunnerState,
        mesh: Mesh,
        devices: int = 0,
    ):
        """`devices`: the run's setting, which a failed save's resume line keeps."""
        opened_run.remember(directory, resume_call("pbt", directory, devices))
        tree = (hps, states)
        abstract = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), tree)
        shardings = jax.tree.map(lambda x: x.sharding, tree)
        self._checkpointer = Checkpointer(
            directory / "checkpoints", abstract, shardings, mesh, keep=2
        )

    def pack(self, hps: Any, states: RunnerState) -> Any:
        """A device copy of the population, queued behind its computation."""
        return self._checkpointer.pack((hps, states))

    def save(
        self,
        updates: int,
        packed: Any,
        result: PBTResult,
        window: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        """Saves a packed population after `updates`, with what it recorded.

        `window`: the return sums and counts since the last ready step, on the
        host; None where it is empty (right after a ready step).
        """
        meta = {
            # Copies: the save runs in the background while records are added.
            "histories": [list(h) for h in result.histories],
            "diverged": list(result.diverged),
            "lineage": json.dumps(lineage_rows(result)),
        }
        if window is not None:
            meta["window"] = [np.asarray(w, np.float32).tolist() for w in window]
        self._checkpointer.save(updates, packed, meta)

    def restore(
        self, result: PBTResult, say: Callable[[str], None]
    ) -> tuple[int, Any, RunnerState, tuple[np.ndarray, np.ndarray]] | None:
        """(updates done, configs, states, window) of the newest good checkpoint.

        None where there is none. `result`'s records, divergences and lineage
        are set to the saved ones; `say` is told of each newer checkpoint
        skipped (and where it was moved).
        """
        restored = self._checkpointer.restore_latest()
        for line in restored.skipped:
            say(f"pbt: {line}")
        if restored.step is None:
            return None
        result.histories = [list(h) for h in restored.meta["histories"]]
        result.diverged = list(restored.meta["diverged"])
        rows = json.loads(restored.meta["lineage"])
        result.lineage = read_lineage(rows, [f.name for f in result.fields])
        hps, states = restored.state
        size = jax.tree.leaves(hps)[0].shape[0]
        window = restored.meta.get("window", [[0.0] * size] * 2)
        sums, counts = (np.asarray(w, np.float32) for w in window)
        return restored.step, hps, states, (sums, counts)

    def close(self) -> None:
        """Waits for pending saves."""
        self._checkpointer.close()
