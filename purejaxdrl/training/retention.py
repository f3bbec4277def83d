"""Which checkpoints orbax keeps: the newest N, and the best by return across sessions.

orbax writes a step's metrics (its `metrics/` item) only when
`CheckpointManagerOptions.best_fn` is set, and reads them back when a folder
is opened. Without them only the session that saved a checkpoint knew its
return: a resumed run's best-N policy protected none of the earlier ones, and
its first save deleted the run's best. Checkpoints saved that way (before
2026-12-04) get theirs from the run's history (`backfill_returns`): the loop
ranks a save by its chunk's `episode/mean_return`, the value its record keeps.
"""

import json
import math
import os
import pathlib
from typing import Any

import jax
import orbax.checkpoint as ocp
from orbax.checkpoint.checkpoint_managers import preservation_policy as policy

from purejaxdrl.coordination import barrier

RETURN = "return"  # the key of a checkpoint's return in its metrics
METRICS = "metrics"  # orbax's item (folder) and file name of a step's metrics


def ranked_by(metrics: dict[str, Any]) -> float:
    """What keep-best ranks a checkpoint by: its metrics' return."""
    return metrics[RETURN]


def retention_options(keep: int, keep_best: bool) -> dict[str, Any]:
    """`CheckpointManagerOptions` fields keeping the newest `keep` (and the best).

    orbax refuses `max_to_keep`, `keep_period` and `keep_time_interval` beside
    a `preservation_policy`; `best_fn` may be set with one, and makes orbax
    write each step's metrics and read them back.
    """
    policies = [policy.LatestN(keep)]
    if keep_best:
        policies.append(
            policy.BestN(
                get_metric_fn=ranked_by, n=1, keep_checkpoints_without_metrics=False
            )
        )
    return {
        "preservation_policy": policy.AnyPreservationPolicy(policies),
        "best_fn": ranked_by if keep_best else None,
        "best_mode": "max",
    }


def backfill_returns(
    manager: ocp.CheckpointManager,
    directory: pathlib.Path,
    history: list[dict[str, Any]],
) -> list[int]:
    """Writes the return of each checkpoint saved without one, from `history`.

    Every process of a run calls it (process 0 writes; they then meet at a
    barrier), then `manager` reads them.

    Args:
      manager: the CheckpointManager of `directory`, tracking the best.
      directory: the checkpoint folder (one sub-folder per step).
      history: the run's records (`updates`, `episode/mean_return`), as the
        restored checkpoint's metadata keeps them.

    Returns:
      the steps given a return (one whose record has no finite return, or
      none, stays unranked, as it was when saved).

    """
    returns = {r.get("updates"): r.get("episode/mean_return") for r in history}
    filled = []
    for step in manager.all_steps():
        value = returns.get(step)
        if not isinstance(value, int | float) or not math.isfinite(value):
            continue
        if manager.metrics(step) is not None:
            continue
        filled.append(step)
        if jax.process_index() == 0:
            folder = directory / str(step) / METRICS
            folder.mkdir(exist_ok=True)
            tmp = folder / f".{METRICS}.tmp"
            tmp.write_text(json.dumps({RETURN: float(value)}))
            os.replace(tmp, folder / METRICS)  # whole or absent when orbax reads
    if jax.process_count() > 1:
        # Every process, whatever it found: another may have read a step
        # after process 0 gave it its return, and found nothing to fill.
        barrier("backfilled_returns")
        manager.reload()
    elif filled:
        manager.reload()  # orbax reads a step's metrics as it lists the steps
    return filled
