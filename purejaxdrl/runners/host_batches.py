"""What the learner of a host-env run makes of its actors' batches.

Each update joins one batch per actor thread along B (`join`), splits the
Transition over the learner's `data` axis (`transition_specs`), and sums the
actors' host-side figures over every process (`host_metrics`), which is also
where the processes agree to stop a chunk early.
"""

import jax
import numpy as np
from jax.sharding import PartitionSpec as P

from purejaxdrl.coordination import gather_rows
from purejaxdrl.parallel import DATA_AXIS
from purejaxdrl.runners.actor import Actor
from purejaxdrl.runners.trajectories import Batch
from purejaxdrl.types import Transition


def join(transitions: list[Transition]) -> Transition:
    """Batches side by side along B.

    The time-major fields along their second axis, the start states
    (`core_state`, [B, ...]) along their first.
    """
    if len(transitions) == 1:
        return transitions[0]
    joined = jax.tree.map(
        lambda *x: np.concatenate(x, axis=1),
        *[t._replace(core_state=()) for t in transitions],
    )
    return joined._replace(
        core_state=jax.tree.map(
            lambda *x: np.concatenate(x), *[t.core_state for t in transitions]
        )
    )


def transition_specs() -> Transition:
    """How a batch's Transition is split over the learner's `data` axis.

    A prefix of any batch's Transition: time-major fields along their second
    axis, a recurrent core's start states (`core_state`, [B, ...]) along
    their first.
    """
    batch = P(None, DATA_AXIS)
    return Transition(*[batch] * 10, reset=batch, core_state=P(DATA_AXIS))


def host_metrics(
    update: int, batches: list[Batch], actors: list[Actor], stopping: bool
) -> tuple[dict[str, float], bool]:
    """An update's host-side figures, summed over every process's actors.

    Policy lag (versions behind `update`, mean and max), the episodes that
    ended in the batches, and the actors' time split since the last update.

    Args:
      update: the update the batches are for.
      batches: this process's batches of the update, one per actor.
      actors: this process's actors.
      stopping: whether this process was asked to stop.

    Returns:
      The figures, and whether any process was asked to stop: gathered with
      the figures, so every process reads the same answer after the same
      update (their learners must stop together) at no extra collective.

    """
    lag = update - np.concatenate([b.versions for b in batches], axis=1)
    sums = {
        name: sum(b.episodes[name] for b in batches) for name in batches[0].episodes
    }
    for actor in actors:
        for name, amount in actor.stats.take().items():
            metric = f"actor/{name}"
            sums[metric] = sums.get(metric, 0.0) + amount
    names = sorted(sums)
    # Summed over processes: the sums, then the lag's sum and count; the
    # largest over them: the stop flag and the lag's max.
    extra = [lag.sum(), lag.size, float(stopping), lag.max()]
    values = np.array([sums[n] for n in names] + extra)
    if jax.process_count() > 1:
        # One row per process, whatever devices each has (`process_allgather`
        # needs as many in every process).
        gathered = gather_rows(values)
        values = np.concatenate([gathered[:, :-2].sum(0), gathered[:, -2:].max(0)])
    out = {n: float(v) for n, v in zip(names, values, strict=False)}
    out["lag/mean"] = float(values[-4] / values[-3])
    out["lag/max"] = float(values[-1])
    return out, bool(values[-2])
