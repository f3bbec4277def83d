"""A probe environment with a known timeline, for boundary tests."""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from purejaxdrl import env as envs
from purejaxdrl.types import TimeStep


class ProbeParams(NamedTuple):
    terminate_at: jax.Array  # episode terminates on reaching this step (0: never)
    time_limit: jax.Array  # episode is truncated on reaching this step


class ProbeEnv(envs.Env):
    """Observation [t, episode]; reward 1 per step; terminates and/or truncates
    at fixed steps. Actions are ignored (one discrete action)."""

    @property
    def default_params(self):
        return ProbeParams(jnp.int32(0), jnp.int32(3))

    def observation_spec(self, params):
        return envs.Box((2,))

    def action_spec(self, params):
        return envs.Discrete(2)

    def reset(self, key, params):
        obs = jnp.zeros(2, jnp.float32)
        return (jnp.int32(0), jnp.int32(0)), TimeStep(
            observation=obs,
            reward=jnp.float32(0),
            discount=jnp.float32(1),
            truncated=jnp.bool_(False),
            final_observation=obs,
            info={},
        )

    def step(self, key, state, action, params):
        t, episode = state
        t = t + 1
        final = jnp.stack([t, episode]).astype(jnp.float32)
        terminated = (params.terminate_at > 0) & (t >= params.terminate_at)
        truncated = (t >= params.time_limit) & ~terminated
        done = terminated | truncated
        episode = jnp.where(done, episode + 1, episode)
        t = jnp.where(done, 0, t)
        obs = jnp.stack([t, episode]).astype(jnp.float32)
        return (t, episode), TimeStep(
            observation=obs,
            reward=jnp.float32(1),
            discount=1.0 - terminated.astype(jnp.float32),
            truncated=truncated,
            final_observation=final,
            info={},
        )
