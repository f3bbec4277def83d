"""Craftax (Matthews et al., 2024) as an on-device environment: an optional extra.

"Craftax: A Lightning-Fast Benchmark for Open-Ended Reinforcement Learning",
https://arxiv.org/abs/2402.16801. Craftax's environments are written in JAX
with gymnax's older API (one `done`, no final observation), so the adapter
steps them without their own reset and resets here, keeping the observation an
episode ended on (`final_observation`) and telling the two ends apart: death
terminates (discount 0), the step limit (`max_timesteps`, 10,000 by default)
truncates (bootstrapped).
"""

from typing import Any

import jax
import jax.numpy as jnp

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import Box, Discrete, Env, EnvParams, EnvState, restart
from purejaxdrl.env.gymnax_env import strong_types
from purejaxdrl.types import PRNGKey, TimeStep

CRAFTAX_IDS = (
    "Craftax-Classic-Symbolic-v1",
    "Craftax-Classic-Pixels-v1",
    "Craftax-Symbolic-v1",
    "Craftax-Pixels-v1",
)


class CraftaxEnv(Env):
    """Adapts a Craftax environment: float32 observations, exact episode ends.

    Options naming a field of the environment's parameters set it (e.g.
    `max_timesteps`).
    """

    def __init__(self, env_id: str, **options: Any):
        try:
            from craftax.craftax_env import make_craftax_env_from_name
        except ImportError as e:
            raise ConfigError(
                f"env.id={env_id!r} needs the craftax package ({e}): "
                "pip install 'purejaxdrl[craftax]'"
            ) from None
        self.env_id = env_id
        self.env = make_craftax_env_from_name(env_id, auto_reset=False)
        params = self.env.default_params
        fields = set(getattr(params, "__dataclass_fields__", {}))
        unknown = sorted(set(options) - fields)
        if unknown:
            raise ConfigError(
                f"env.options {unknown} are not parameters of {env_id} "
                f"({sorted(fields)}); drop them."
            )
        self._default_params = strong_types(params.replace(**options))
        shape = self.env.observation_space(params).shape
        self._obs_shape = tuple(int(d) for d in shape)
        self._action_spec = Discrete(int(self.env.action_space(params).n))

    @property
    def default_params(self) -> EnvParams:
        return self._default_params

    @property
    def vma_checked(self) -> bool:
        # Craftax's step scans over mobs from a constant carry.
        return False

    def observation_spec(self, params: EnvParams) -> Box:
        return Box(self._obs_shape)

    def action_spec(self, params: EnvParams) -> Discrete:
        return self._action_spec

    def reset(self, key: PRNGKey, params: EnvParams) -> tuple[EnvState, TimeStep]:
        obs, state = self.env.reset(key, params)
        return strong_types(state), restart(jnp.asarray(obs, jnp.float32))

    def step(
        self, key: PRNGKey, state: EnvState, action: jax.Array, params: EnvParams
    ) -> tuple[EnvState, TimeStep]:
        key_step, key_reset = jax.random.split(key)
        obs, state, reward, done, _ = self.env.step(
            key_step, state, action.astype(jnp.int32), params
        )
        done = jnp.asarray(done, jnp.bool_)
        # Craftax ends an episode at death (or in lava) and at the step limit,
        # as one `done`. Its own rule without the limit tells them apart; a
        # death at the last step is a termination.
        no_limit = params.replace(max_timesteps=jnp.iinfo(jnp.int32).max)
        terminated = done & jnp.asarray(self.env.is_terminal(state, no_limit))
        truncated = done & ~terminated
        obs = jnp.asarray(obs, jnp.float32)
        obs_reset, state_reset = self.env.reset(key_reset, params)
        state = jax.tree.map(
            lambda r, s: jnp.where(done, r, s), strong_types(state_reset), state
        )
        return strong_types(state), TimeStep(
            observation=jnp.where(done, jnp.asarray(obs_reset, jnp.float32), obs),
            reward=jnp.asarray(reward, jnp.float32),
            discount=1.0 - terminated.astype(jnp.float32),
            truncated=truncated,
            final_observation=obs,
            info={},
        )
