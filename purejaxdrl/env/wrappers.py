"""Environment wrappers: episode statistics."""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from purejaxdrl.env.base import EnvParams, Wrapper
from purejaxdrl.types import PRNGKey, PyTree, TimeStep


class EpisodeStatisticsState(NamedTuple):
    """The wrapped state, and the running return (f32) and length (i32)."""

    inner: PyTree
    episode_return: jax.Array
    episode_length: jax.Array


class EpisodeStatistics(Wrapper):
    """Adds the return and length of each completed episode to `info`.

    `info["episode_done"]` (bool) marks the steps that end an episode, where
    `info["episode_return"]` and `info["episode_length"]` hold its totals; they are 0
    elsewhere, so averages must be taken over completed episodes only.
    """

    def reset(
        self, key: PRNGKey, params: EnvParams
    ) -> tuple[EpisodeStatisticsState, TimeStep]:
        inner, ts = self.env.reset(key, params)
        zero_f, zero_i = jnp.zeros((), jnp.float32), jnp.zeros((), jnp.int32)
        info = {
            **ts.info,
            "episode_return": zero_f,
            "episode_length": zero_i,
            "episode_done": jnp.zeros((), jnp.bool_),
        }
        return EpisodeStatisticsState(inner, zero_f, zero_i), ts._replace(info=info)

    def step(
        self,
        key: PRNGKey,
        state: EpisodeStatisticsState,
        action: jax.Array,
        params: EnvParams,
    ) -> tuple[EpisodeStatisticsState, TimeStep]:
        inner, ts = self.env.step(key, state.inner, action, params)
        ret = state.episode_return + ts.reward
        length = state.episode_length + 1
        done = ts.last()
        info = {
            **ts.info,
            "episode_return": jnp.where(done, ret, 0.0),
            "episode_length": jnp.where(done, length, 0),
            "episode_done": done,
        }
        new_state = EpisodeStatisticsState(
            inner, jnp.where(done, 0.0, ret), jnp.where(done, 0, length)
        )
        return new_state, ts._replace(info=info)
