"""Population-based training's operators: rank, exploit, explore; pure and jitted.

PBT (Jaderberg et al., 2017, arXiv:1711.09846) trains a population together;
at every ready step the bottom quantile of members (ranked by a recent return)
copies the learner state of a member of the top quantile (*exploit*, truncation
selection) and perturbs the copied hyper-parameters (*explore*). Members are the
leading axis of a sweep's batched state and configs, so exploit is a gather over
that axis and explore an elementwise perturbation of the dynamic leaves: both
run on the device, inside one jitted program.

The defaults differ from the paper's: it perturbs by 0.8 or 1.2 and truncates
at 20%; here `PBTConfig` perturbs by 0.8 or 1.25 (1.25 = 1/0.8, so the two
moves cancel in log space and a value does not drift down) and truncates at
25%. `PBTConfig(quantile=0.2, perturb=(0.8, 1.2))` (`--pbt.quantile 0.2
--pbt.perturb 0.8,1.2`) is the paper's setting.

The paper multiplies every perturbed value, which suits a scale such as a
learning rate (here a `loguniform` field). A `uniform` field moves in its own,
linear coordinate instead (`perturbed`): a factor's relative move, taken of
the space's width. Multiplying gamma in [0.9, 0.999] by 0.8 or 1.25 always
left the space, so every move clipped to a bound.
"""

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from purejaxdrl.env.normalization import RunningStatistics
from purejaxdrl.parallel import DATA_AXIS
from purejaxdrl.runners.anakin import RunnerState
from purejaxdrl.training.faults import non_finite_entries
from purejaxdrl.types import PRNGKey


@dataclasses.dataclass(frozen=True)
class ExploredField:
    """A dynamic field PBT explores, and the space it stays in.

    Attributes:
      name: the field of the algorithm's config (`learning_rate`).
      kind: `loguniform` or `uniform`: how a member draws it at the start and
        when it resamples.
      low: the smallest value it may take.
      high: the largest value it may take.

    """

    name: str
    kind: str
    low: float
    high: float


@dataclasses.dataclass(frozen=True)
class PBTConfig:
    """How often and how strongly the population exploits and explores.

    Attributes:
      ready: chunks between ready steps (a member is ranked on the episodes
        that ended since the last one).
      quantile: the share of the population in the bottom (and in the top)
        quantile: int(quantile x population) members copy as many others
        (the paper's is 0.2).
      resample_probability: chance that a copied field is drawn afresh from
        its space instead of perturbed.
      perturb: the factors a copied field is moved by, one of the two at
        random (then clipped to its space): a `loguniform` field is multiplied
        by it, a `uniform` one moved by a share of its space (`perturbed`);
        the paper's are (0.8, 1.2).
      keep_buffer: members keep their own replay data (every agent-state leaf
        split over the `data` axis) instead of copying their parent's.

    """

    ready: int = 4
    quantile: float = 0.25
    resample_probability: float = 0.25
    perturb: tuple[float, float] = (0.8, 1.25)
    keep_buffer: bool = False


def recent_return(return_sum: jax.Array, count: jax.Array) -> jax.Array:
    """Each member's mean return over the episodes of its window.

    Args:
      return_sum: float32 [R], the summed returns of the episodes that ended.
      count: float32 [R], how many ended.

    Returns:
      float32 [R]: the mean, NaN for a member that ended no episode.

    """
    return jnp.where(count > 0, return_sum / jnp.maximum(count, 1.0), jnp.nan)


def bottom_count(quantile: float, num_members: int) -> int:
    """The members in the bottom (and in the top) quantile: int(quantile x n).

    The epsilon keeps 0.29 x 100 at 29, not 28 (float products fall short).
    """
    return int(quantile * num_members + 1e-9)


def least_population(quantile: float) -> int:
    """The smallest population whose bottom quantile holds a member."""
    n = max(1, math.floor(1 / quantile))
    while bottom_count(quantile, n) < 1:
        n += 1
    return n


def non_finite_members(metrics: Mapping[str, jax.Array]) -> jax.Array:
    """The members whose chunk went non-finite: bool [R].

    The rule of the host's `training.faults.first_non_finite`, which sets a
    member's `diverged` (`non_finite_entries`, one rule for both), on the
    device, because the ready step after a chunk runs before the host has
    read the chunk's metrics.

    Args:
      metrics: a chunk's metrics, [R, ...] per name.

    Returns:
      bool [R].

    """
    size = next(iter(metrics.values())).shape[0]
    bad = jnp.zeros(size, bool)
    for name, values in metrics.items():
        found = non_finite_entries(name, values.reshape(size, -1), jnp)
        if found is not None:
            bad = bad | found.any(axis=1)
    return bad


def choose_parents(
    key: PRNGKey,
    scores: jax.Array,
    num_members: int,
    quantile: float,
    diverged: jax.Array | None = None,
) -> jax.Array:
    """Each member's parent: itself, or a top member for a bottom one.

    Members are ranked by `scores` (NaN, a member that ended no episode, ranks
    last; ties keep index order, the lower index ranking lower). A member that
    `diverged` ranks last too, whatever its episodes returned (non-finite
    parameters still act and end episodes), and is never a parent. Each of the
    k = `bottom_count(quantile, num_members)` lowest picks one of the k highest
    uniformly at random (truncation selection, Jaderberg et al., 2017), and
    copies it only where the pick scored, and scored more than it: a window
    without evidence (no episode ended, or equal returns) copies nothing.

    Args:
      key: typed key of this ready step.
      scores: float32 [R], R >= num_members; members from `num_members` on
        are padding: never ranked, never parents, their own parents.
      num_members: the real members, the first ones.
      quantile: in (0, 0.5].
      diverged: bool [R], the members whose learner went non-finite
        (`non_finite_members` since the start, passed on to whoever copies
        them); None: none.

    Returns:
      int32 [R]: parent indices (i for a member that keeps its state).

    """
    identity = jnp.arange(scores.shape[0], dtype=jnp.int32)
    k = bottom_count(quantile, num_members)
    if k == 0:
        return identity
    if diverged is not None:
        scores = jnp.where(diverged, jnp.nan, scores)
    real = scores[:num_members]
    order = jnp.argsort(jnp.where(jnp.isnan(real), -jnp.inf, real), stable=True)
    bottom, top = order[:k], order[num_members - k :]
    picks = top[jax.random.randint(key, (k,), 0, k)]
    own = jnp.where(jnp.isnan(real[bottom]), -jnp.inf, real[bottom])
    better = ~jnp.isnan(real[picks]) & (real[picks] > own)
    return identity.at[bottom].set(jnp.where(better, picks, bottom).astype(jnp.int32))


def learner_mask(
    states: RunnerState, agent_spec: Any, *, keep_buffer: bool = False
) -> RunnerState:
    """Which leaves of a population's state exploit copies: the learner's.

    Copied: the agent state (parameters, target networks, optimiser state,
    counters, IMPALA's past parameters; replay shards unless `keep_buffer`)
    and observation-normalisation statistics (`RunningStatistics` in the env
    params). Kept: the actors (environment states, recurrent carries,
    observations), the rest of the env params (domain randomisation) and the
    member's key, so its environments and random stream stay its own.

    Args:
      states: a RunnerState (or its `jax.eval_shape`).
      agent_spec: a PartitionSpec prefix of `states.agent`; leaves whose spec
        names `data` are replay shards (and R2D2's sequence tails with them).
      keep_buffer: keep those leaves the member's own.

    Returns:
      A RunnerState of bools, one per leaf: True where exploit copies.

    """

    def agent_subtree(spec: P, subtree: Any) -> Any:
        own = keep_buffer and DATA_AXIS in tuple(spec)
        return jax.tree.map(lambda _: not own, subtree)

    def env_subtree(node: Any) -> Any:
        stats = isinstance(node, RunningStatistics)
        return jax.tree.map(lambda _: stats, node)

    is_stats = lambda x: isinstance(x, RunningStatistics)  # noqa: E731
    return RunnerState(
        agent=jax.tree.map(
            agent_subtree,
            agent_spec,
            states.agent,
            is_leaf=lambda x: isinstance(x, P),
        ),
        actor=jax.tree.map(lambda _: False, states.actor),
        env_params=jax.tree.map(env_subtree, states.env_params, is_leaf=is_stats),
        key=jax.tree.map(lambda _: False, states.key),
    )


def exploit(
    hps: Any, states: RunnerState, parents: jax.Array, mask: RunnerState
) -> tuple[Any, RunnerState]:
    """Every member takes its parent's configs and learner state.

    Args:
      hps: algorithm configs with [R] leaves.
      states: RunnerState with leaves [R, ...].
      parents: int32 [R] (`choose_parents`).
      mask: `learner_mask(states, ...)`: the leaves to gather (Python bools,
        so the function is jitted with `mask` closed over, not passed).

    Returns:
      (hps, states): gathered along the member axis where `mask` says,
      untouched elsewhere.

    """

    def gather(x: jax.Array) -> jax.Array:
        return jnp.take(x, parents, axis=0)

    states = jax.tree.map(lambda m, x: gather(x) if m else x, mask, states)
    return jax.tree.map(gather, hps), states


def _draw(key: PRNGKey, field: ExploredField, n: int) -> jax.Array:
    if field.kind == "loguniform":
        low, high = math.log(field.low), math.log(field.high)
        return jnp.exp(jax.random.uniform(key, (n,), jnp.float32, low, high))
    return jax.random.uniform(key, (n,), jnp.float32, field.low, field.high)


def perturbed(
    value: jax.Array,
    second: jax.Array,
    field: ExploredField,
    perturb: tuple[float, float],
) -> jax.Array:
    """A field's values moved by one of the two factors, clipped to its space.

    A `loguniform` field is multiplied by the factor f (a move of log f in the
    log space it is drawn in), as Jaderberg et al. (2017) perturb every value.
    A `uniform` field moves by (f - 1) / max(f, 1) of its space's width,
    high - low: the relative change f makes, measured against the larger of
    the value before and after, so that f and 1/f (0.8 and 1.25) move it
    equal and opposite distances, as they do a loguniform field in log space.
    The paper's 20% move is thus 20% of the space, not of the value: a value
    near 1 (a discount, a GAE lambda) multiplied by 0.8 or 1.25 would leave a
    space such as [0.9, 0.999] at every move and land on a bound.

    Args:
      value: float32 [R].
      second: bool [R], where the second factor applies (else the first).
      field: the field and its space.
      perturb: the two factors.

    Returns:
      float32 [R] in [field.low, field.high].

    """
    if field.kind == "loguniform":
        moved = value * jnp.where(second, perturb[1], perturb[0])
    else:
        width = field.high - field.low
        first, other = ((f - 1) / max(f, 1) * width for f in perturb)
        moved = value + jnp.where(second, other, first)
    return jnp.clip(moved, field.low, field.high)


def explore(
    key: PRNGKey,
    hps: Any,
    copied: jax.Array,
    fields: Sequence[ExploredField],
    config: PBTConfig,
) -> Any:
    """Perturbs the explored fields of the members that copied another.

    For each copied member and field, independently: with probability
    `config.resample_probability` a fresh draw from the field's space, else
    the value moved by one of `config.perturb` (each with probability 1/2;
    `perturbed`: multiplied for a loguniform field, a share of the space
    added for a uniform one), clipped to [low, high]. Other members and
    fields are untouched.

    Args:
      key: typed key of this ready step.
      hps: algorithm configs with float32 [R] leaves.
      copied: bool [R], the members exploit gave a new parent.
      fields: the explored fields.
      config: the probabilities and factors.

    Returns:
      The configs with new values for the copied members.

    """
    n = copied.shape[0]
    changes = {}
    for field, key_field in zip(
        fields, jax.random.split(key, len(fields)), strict=True
    ):
        key_resample, key_factor, key_draw = jax.random.split(key_field, 3)
        value = getattr(hps, field.name)
        resample = jax.random.uniform(key_resample, (n,)) < config.resample_probability
        second = jax.random.bernoulli(key_factor, 0.5, (n,))
        moved = perturbed(value, second, field, config.perturb)
        new = jnp.where(resample, _draw(key_draw, field, n), moved)
        changes[field.name] = jnp.where(copied, new, value).astype(value.dtype)
    return dataclasses.replace(hps, **changes)


def ready_step(
    key: PRNGKey,
    hps: Any,
    states: RunnerState,
    scores: jax.Array,
    *,
    agent_spec: Any,
    fields: Sequence[ExploredField],
    num_members: int,
    config: PBTConfig,
    diverged: jax.Array | None = None,
) -> tuple[Any, RunnerState, jax.Array]:
    """One ready step: rank, exploit, explore.

    Args:
      key: typed key of this ready step.
      hps: algorithm configs with float32 [R] leaves.
      states: RunnerState with leaves [R, ...].
      scores: float32 [R], each member's recent return (`recent_return`).
      agent_spec: the PartitionSpec prefix of `states.agent`, for
        `learner_mask` (with `config.keep_buffer`).
      fields: the explored fields.
      num_members: the real members (the rest is padding).
      config: quantile, probabilities, factors.
      diverged: bool [R] or None, as `choose_parents` takes it.

    Returns:
      (hps, states, parents int32 [R]).

    """
    key_parents, key_explore = jax.random.split(key)
    parents = choose_parents(
        key_parents, scores, num_members, config.quantile, diverged
    )
    mask = learner_mask(states, agent_spec, keep_buffer=config.keep_buffer)
    hps, states = exploit(hps, states, parents, mask)
    copied = parents != jnp.arange(parents.shape[0])
    return explore(key_explore, hps, copied, fields, config), states, parents
