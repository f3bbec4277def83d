"""A dict-observation environment for asymmetric actor-critics (`DictSignal-v0`).

Playground's locomotion tasks observe `{'state', 'privileged_state'}`, but
their robot models need MuJoCo Menagerie, which is not to be had offline: this
pure-JAX task has the same observation layout and learns in seconds.

Each step shows a sign s in {-1, +1}; acting on it pays 1 (discrete action
`s > 0`; continuous action a: 1 - |a - s| / 2). `state` is [s, noise, noise]
(what the policy needs), `privileged_state` [s, t / T] (what a critic can use:
the steps left). Episodes are truncated after T = 8 steps, so a random policy
returns 4 and the best 8 (discrete).
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from purejaxdrl import env as envs
from purejaxdrl.types import TimeStep

ENV_ID = "DictSignal-v0"
LENGTH = 8


class DictSignalState(NamedTuple):
    t: jax.Array  # int32 [], steps taken in the episode
    sign: jax.Array  # float32 [], the sign shown now


class DictSignalEnv(envs.Env):
    """`{'state': [3], 'privileged_state': [2]}` observations; see the module."""

    def __init__(self, continuous: bool = False):
        self.continuous = continuous

    @property
    def default_params(self):
        return ()

    def observation_spec(self, params):
        return {"state": envs.Box((3,)), "privileged_state": envs.Box((2,))}

    def action_spec(self, params):
        return envs.Box((1,)) if self.continuous else envs.Discrete(2)

    def _observe(self, key, state):
        noise = jax.random.normal(key, (2,), jnp.float32)
        t = state.t.astype(jnp.float32) / LENGTH
        return {
            "state": jnp.concatenate([state.sign[None], noise]),
            "privileged_state": jnp.stack([state.sign, t]),
        }

    def _start(self, key):
        key_sign, key_obs = jax.random.split(key)
        sign = jnp.where(jax.random.bernoulli(key_sign), 1.0, -1.0)
        state = DictSignalState(jnp.zeros((), jnp.int32), sign.astype(jnp.float32))
        return state, self._observe(key_obs, state)

    def reset(self, key, params):
        state, obs = self._start(key)
        return state, envs.restart(obs)

    def step(self, key, state, action, params):
        key_sign, key_obs, key_reset = jax.random.split(key, 3)
        if self.continuous:
            reward = 1.0 - jnp.abs(jnp.clip(action[0], -1, 1) - state.sign) / 2
        else:
            reward = (action == (state.sign > 0)).astype(jnp.float32)
        sign = jnp.where(jax.random.bernoulli(key_sign), 1.0, -1.0)
        nxt = DictSignalState(state.t + 1, sign.astype(jnp.float32))
        final = self._observe(key_obs, nxt)
        truncated = nxt.t >= LENGTH
        fresh, first = self._start(key_reset)
        state, obs = jax.tree.map(
            lambda a, b: jnp.where(truncated, a, b), (fresh, first), (nxt, final)
        )
        return state, TimeStep(
            observation=obs,
            reward=reward.astype(jnp.float32),
            discount=jnp.ones((), jnp.float32),
            truncated=truncated,
            final_observation=final,
            info={},
        )


envs.register(ENV_ID, DictSignalEnv)
