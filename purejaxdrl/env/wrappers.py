"""Environment wrappers: episode statistics, hidden observation entries."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import field_example
from purejaxdrl.env.base import (
    METRICS,
    Box,
    Discrete,
    Env,
    EnvParams,
    InnerStep,
    Wrapper,
    keep_unmasked,
)
from purejaxdrl.types import PRNGKey, PyTree, TimeStep


class EpisodeStatisticsState(NamedTuple):
    """The wrapped state and its episode's running totals.

    The return (f32), the length (i32), and the sums of the environment's
    `info[METRICS]` ({} where it has none).
    """

    inner: PyTree
    episode_return: jax.Array
    episode_length: jax.Array
    metric_sums: dict[str, jax.Array] = {}


class EpisodeStatistics(Wrapper):
    """Adds the return and length of each completed episode to `info`.

    `info["episode_done"]` (bool) marks the steps that end an episode, where
    `info["episode_return"]` and `info["episode_length"]` hold its totals; they are 0
    elsewhere, so averages must be taken over completed episodes only. An
    environment's per-step `info[METRICS]` are summed alike, into
    `info["episode_metrics"]` (name -> sum over the episode).
    """

    def reset(
        self, key: PRNGKey, params: EnvParams
    ) -> tuple[EpisodeStatisticsState, TimeStep]:
        inner, ts = self.env.reset(key, params)
        zero_f, zero_i = jnp.zeros((), jnp.float32), jnp.zeros((), jnp.int32)
        sums = {k: zero_f for k in ts.info.get(METRICS, {})}
        info = {
            **ts.info,
            "episode_return": zero_f,
            "episode_length": zero_i,
            "episode_done": jnp.zeros((), jnp.bool_),
        }
        if sums:
            info["episode_metrics"] = sums
        state = EpisodeStatisticsState(inner, zero_f, zero_i, sums)
        return state, ts._replace(info=info)

    def around_step(
        self, step: InnerStep, state: EpisodeStatisticsState, params: EnvParams
    ) -> tuple[EpisodeStatisticsState, TimeStep]:
        inner, ts = step(state.inner, params)
        ret = state.episode_return + ts.reward
        length = state.episode_length + 1
        sums = {k: v + ts.info[METRICS][k] for k, v in state.metric_sums.items()}
        done = ts.last()

        def ended(total: jax.Array) -> jax.Array:  # the total where done, else 0
            return jnp.where(done, total, jnp.zeros_like(total))

        def running(total: jax.Array) -> jax.Array:  # restarted where done
            return jnp.where(done, jnp.zeros_like(total), total)

        info = {
            **ts.info,
            "episode_return": ended(ret),
            "episode_length": ended(length),
            "episode_done": done,
        }
        if sums:
            info["episode_metrics"] = jax.tree.map(ended, sums)
        new_state = EpisodeStatisticsState(
            inner, running(ret), running(length), jax.tree.map(running, sums)
        )
        return new_state, ts._replace(info=info)


class HideObservations(Wrapper):
    """Removes entries of a flat observation: a partially observable task.

    CartPole-v1 with `indices=(1, 3)` hides the cart's and the pole's
    velocities (the `cartpole_masked` preset): a policy must then infer them
    from the positions it has seen, so it needs memory. Works on any
    environment with vector observations (`--env.hide-observations 1 3`).
    """

    def __init__(self, env: Env, indices: tuple[int, ...]):
        super().__init__(env)
        self.indices = tuple(indices)

    def _keep(self, params: EnvParams) -> np.ndarray:
        (size,) = self.env.observation_spec(params).shape
        return np.setdiff1d(np.arange(size), self.indices)

    def _hide(self, ts: TimeStep, keep: np.ndarray) -> TimeStep:
        return ts._replace(
            observation=ts.observation[..., keep],
            final_observation=ts.final_observation[..., keep],
        )

    def reset(self, key: PRNGKey, params: EnvParams) -> tuple[PyTree, TimeStep]:
        state, ts = self.env.reset(key, params)
        return state, self._hide(ts, self._keep(params))

    def around_step(
        self, step: InnerStep, state: PyTree, params: EnvParams
    ) -> tuple[PyTree, TimeStep]:
        state, ts = step(state, params)
        return state, self._hide(ts, self._keep(params))

    def observation_spec(self, params: EnvParams) -> Box:
        return Box((len(self._keep(params)),))

    def action_spec(self, params: EnvParams) -> Discrete | Box:
        spec = self.env.action_spec(params)
        return keep_unmasked(spec, "env.hide_observations")


# The fix where no entry may be hidden; the bare flag is the empty list.
LEAVE_EMPTY = (
    "leave it empty: --env.hide-observations with no index "
    "(env.hide_observations=() in Python)"
)


def _hide_example(size: int) -> str:
    """`field_example` of every other entry from 1 (1 3 of 4): it keeps entry 0."""
    odd = tuple(range(1, size, 2))
    return field_example("env.hide_observations", " ".join(map(str, odd)), odd)


def check_hidden(indices: tuple[int, ...], obs_spec: Box, env_id: str) -> None:
    """Raises ValueError (value, rule, fix) unless `indices` fit `obs_spec`.

    They must index a vector observation, each once, and leave one entry.
    """
    shape = getattr(obs_spec, "shape", None)
    if not isinstance(shape, tuple) or len(shape) != 1:
        what = (
            f"observations of shape {shape}"
            if isinstance(shape, tuple)
            else "a dict of observations"
        )
        raise ConfigError(
            f"env.hide_observations={list(indices)} needs vector observations, "
            f"but {env_id} has {what}; {LEAVE_EMPTY}."
        )
    (size,) = obs_spec.shape
    # One entry alone cannot be hidden: the list must be empty.
    fix = f"e.g. {_hide_example(size)}" if size > 1 else LEAVE_EMPTY
    if len(set(indices)) != len(indices) or not all(0 <= i < size for i in indices):
        raise ConfigError(
            f"env.hide_observations={list(indices)} must be distinct indices in "
            f"[0, {size}) of {env_id}'s observation; {fix}."
        )
    if len(indices) >= size:
        raise ConfigError(
            f"env.hide_observations={list(indices)} hides all {size} entries of "
            f"{env_id}'s observation; "
            + (f"leave at least one, {fix}." if size > 1 else f"{fix}.")
        )
