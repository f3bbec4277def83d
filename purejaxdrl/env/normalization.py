"""Observation normalisation with running statistics shared by all environments.

Dict observations (MuJoCo Playground's `state` and `privileged_state`) keep one
set of statistics per entry.
"""

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.env.base import Box, EnvParams, InnerStep, Wrapper, keep_unmasked
from purejaxdrl.types import PRNGKey, PyTree, TimeStep


class RunningStatistics(NamedTuple):
    """Count, mean and sum of squared deviations (M2) of a stream of vectors."""

    count: jax.Array
    mean: jax.Array
    m2: jax.Array

    @property
    def variance(self) -> jax.Array:
        """Population variance of everything seen so far."""
        return self.m2 / self.count


def init_statistics(shape: tuple[int, ...]) -> RunningStatistics:
    """Statistics of nothing yet: a tiny count keeps the first division finite."""
    return RunningStatistics(
        count=jnp.asarray(1e-4, jnp.float32),
        mean=jnp.zeros(shape, jnp.float32),
        m2=jnp.full(shape, 1e-4, jnp.float32),
    )


def update_statistics(
    stats: RunningStatistics, batch: jax.Array, axis_name: str | None = None
) -> RunningStatistics:
    """Adds a batch `[N, *shape]` to `stats`, over all devices of `axis_name`.

    Uses the parallel variance formula (Chan, Golub and LeVeque, 1979): the batch's
    own mean and M2 are merged across devices first, then into the running values,
    so the result does not depend on how the batch was split.
    """
    batch = batch.reshape((-1, *stats.mean.shape)).astype(jnp.float32)
    # From the data, not its static shape, so it is a per-device value under vmap.
    n_local = jnp.ones(batch.shape[:1], jnp.float32).sum()
    mean_local = batch.mean(axis=0)
    m2_local = jnp.square(batch - mean_local).sum(axis=0)
    if axis_name is None:
        n_b, mean_b, m2_b = n_local, mean_local, m2_local
    else:
        n_b = jax.lax.psum(n_local, axis_name)
        mean_b = jax.lax.psum(n_local * mean_local, axis_name) / n_b
        m2_b = jax.lax.psum(
            m2_local + n_local * jnp.square(mean_local - mean_b), axis_name
        )
    total = stats.count + n_b
    delta = mean_b - stats.mean
    return RunningStatistics(
        count=total,
        mean=stats.mean + delta * n_b / total,
        m2=stats.m2 + m2_b + jnp.square(delta) * stats.count * n_b / total,
    )


def normalize(stats: RunningStatistics, x: jax.Array, clip: float = 10.0) -> jax.Array:
    """Standardises `x` with `stats` and clips to [-clip, clip]."""
    z = (x - stats.mean) / jnp.sqrt(stats.variance + 1e-8)
    return jnp.clip(z, -clip, clip)


RAW_FINAL_NON_FINITE = "raw_final_observation_non_finite"
"""`info` key: per environment, how many entries of the final observation the
environment returned were not finite, before normalising clipped them."""


def _non_finite_per_env(stats: RunningStatistics, x: jax.Array) -> jax.Array:
    # Over the entry's own axes (the statistics' shape), leaving batch axes.
    axes = tuple(range(x.ndim - stats.mean.ndim, x.ndim))
    return (~jnp.isfinite(x)).sum(axis=axes, dtype=jnp.float32)


class NormalizedParams(NamedTuple):
    """The wrapped env's params plus the observation statistics.

    `obs_stats` is one RunningStatistics, or a dict of them (one per entry)
    for dict observations.
    """

    inner: PyTree
    obs_stats: RunningStatistics | dict[str, RunningStatistics]


def per_entry(function: Callable[..., PyTree], stats: PyTree, *trees: PyTree) -> PyTree:
    """`function(stats, *entries)` for each entry of an observation (or the one).

    `stats` is a RunningStatistics or a dict of them; `trees` have its
    structure, with arrays where it has statistics.
    """
    return jax.tree.map(
        function, stats, *trees, is_leaf=lambda x: isinstance(x, RunningStatistics)
    )


def statistics_to_host(stats: PyTree) -> PyTree:
    """`stats` as plain NumPy dicts (`{count, mean, m2}` per entry), to save."""
    return per_entry(
        lambda s: {k: np.asarray(v) for k, v in s._asdict().items()}, stats
    )


def statistics_from_host(saved: PyTree) -> PyTree:
    """The statistics `statistics_to_host` saved, as RunningStatistics again."""
    return jax.tree.map(
        lambda s: RunningStatistics(**{k: jnp.asarray(s[k]) for k in s}),
        saved,
        is_leaf=lambda s: isinstance(s, dict) and "count" in s,
    )


class NormalizeObservation(Wrapper):
    """Standardises observations with statistics kept in the env params.

    The statistics are shared by every environment (they are params, not per-env
    state) and updated by the runner from `info["raw_observation"]` through
    `update_statistics`, globally across devices. Transitions store the
    observations as normalised when acted on, so the learner sees exactly what the
    actor saw. Each entry of a dict observation has statistics of its own.
    """

    @property
    def default_params(self) -> NormalizedParams:
        inner = self.env.default_params
        stats = jax.tree.map(
            lambda box: init_statistics(box.shape),
            self.env.observation_spec(inner),
            is_leaf=lambda x: isinstance(x, Box),
        )
        return NormalizedParams(inner, stats)

    def observation_spec(self, params: NormalizedParams):
        return self.env.observation_spec(params.inner)

    def action_spec(self, params: NormalizedParams):
        spec = self.env.action_spec(params.inner)
        return keep_unmasked(spec, "normalize_observations")

    def _normalize(self, ts: TimeStep, params: NormalizedParams) -> TimeStep:
        stats = params.obs_stats
        # Normalising clips an inf to a finite value: what the environment
        # returned is kept for the runner's non-finite counts, the final
        # observation as a count per environment (not a second copy of it).
        bad_final = per_entry(_non_finite_per_env, stats, ts.final_observation)
        return ts._replace(
            observation=per_entry(normalize, stats, ts.observation),
            final_observation=per_entry(normalize, stats, ts.final_observation),
            info={
                **ts.info,
                "raw_observation": ts.observation,
                RAW_FINAL_NON_FINITE: sum(jax.tree.leaves(bad_final)),
            },
        )

    def reset(self, key: PRNGKey, params: NormalizedParams) -> tuple[PyTree, TimeStep]:
        state, ts = self.env.reset(key, params.inner)
        return state, self._normalize(ts, params)

    def around_step(
        self, step: InnerStep, state: PyTree, params: NormalizedParams
    ) -> tuple[PyTree, TimeStep]:
        # A batched step's B environments share the statistics (broadcast).
        state, ts = step(state, params.inner)
        return state, self._normalize(ts, params)

    def update_statistics(
        self, params: EnvParams, info: dict[str, jax.Array], axis_name: str | None
    ) -> NormalizedParams:
        inner = self.env.update_statistics(params.inner, info, axis_name)
        stats = per_entry(
            lambda s, batch: update_statistics(s, batch, axis_name),
            params.obs_stats,
            info["raw_observation"],
        )
        return NormalizedParams(inner, stats)
