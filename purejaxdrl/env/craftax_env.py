"""Craftax (Matthews et al., 2024) as an on-device environment: an optional extra.

"Craftax: A Lightning-Fast Benchmark for Open-Ended Reinforcement Learning",
https://arxiv.org/abs/2402.16801. Craftax's environments are written in JAX
with gymnax's older API (one `done`, no final observation), so the adapter
steps them without their own reset and resets here, keeping the observation an
episode ended on (`final_observation`) and telling the two ends apart: death
terminates (discount 0), the step limit (`max_timesteps`: 10,000 by default
for Craftax-Classic, 100,000 for Craftax) truncates (bootstrapped).
"""

import functools
from typing import Any

import jax
import jax.numpy as jnp

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import (
    Box,
    Discrete,
    Env,
    EnvParams,
    EnvState,
    check_lengths,
    check_option_types,
    check_options,
    metrics_info,
    restart,
    strong_types,
)
from purejaxdrl.env.extras import package_refusal
from purejaxdrl.env.resets import reset_ended, step_resetting_few
from purejaxdrl.types import PRNGKey, TimeStep

CRAFTAX_IDS = (
    "Craftax-Classic-Symbolic-v1",
    "Craftax-Classic-Pixels-v1",
    "Craftax-Symbolic-v1",
    "Craftax-Pixels-v1",
)

# `check_lengths`' table: below 1, every episode is cut at its first step.
AT_LEAST = {"max_timesteps": (1, "its time limit, in steps")}


class CraftaxEnv(Env):
    """Adapts a Craftax environment: float32 observations, exact episode ends.

    Options naming a field of the environment's parameters set it (e.g.
    `max_timesteps`).
    """

    def __init__(self, env_id: str, **options: Any):
        try:
            from craftax.craftax_env import make_craftax_env_from_name
        except ImportError as e:
            raise ConfigError(package_refusal(env_id, e)) from None
        self.env_id = env_id
        self.env = make_craftax_env_from_name(env_id, auto_reset=False)
        # Jitted, so JAX traces world generation (seconds) and the step once
        # per context, not at each call: init, both branches of
        # `step_batch`'s resets and evaluation call them, and XLA inlines
        # them into each program.
        self._task_reset = jax.jit(self.env.reset)
        self._task_step = jax.jit(self.env.step)
        params = self.env.default_params
        fields = getattr(params, "__dataclass_fields__", {})
        check_options(env_id, options, fields)
        defaults = {f: getattr(params, f) for f in fields}
        options = check_option_types(env_id, options, defaults)
        check_lengths(env_id, options, defaults, AT_LEAST)
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
        obs, state = self._task_reset(key, params)
        obs = jnp.asarray(obs, jnp.float32)
        return strong_types(state), restart(obs, self._step_metrics)

    def step(
        self, key: PRNGKey, state: EnvState, action: jax.Array, params: EnvParams
    ) -> tuple[EnvState, TimeStep]:
        key_step, key_reset = jax.random.split(key)
        state, ts = self._step_no_reset(key_step, state, action, params)
        return reset_ended(state, ts, self._reset(key_reset, params))

    def step_batch(
        self, keys: PRNGKey, states: EnvState, actions: jax.Array, params: EnvParams
    ) -> tuple[EnvState, TimeStep]:
        """`step` of B environments, generating worlds for those that ended only.

        Under `vmap` a reset is computed for every environment at every step
        (both sides of a `where`), and generating a world costs ~40 steps.
        `step_resetting_few` generates the worlds of up to `reset_slots(B)`
        environments that ended, each from its own reset key (all of them in
        the rare step where more ended): each gets the world `step` would give
        it, up to the float rounding of XLA's code for the batch (Craftax's
        noise maps differ in a few tiles between batch layouts, as `vmap(step)`
        on different batch sizes does). Craftax's own "optimistic resets"
        share a few worlds between the environments that ended instead.
        """
        return step_resetting_few(
            self._step_no_reset,
            self._reset,
            keys,
            states,
            actions,
            params,
            slots=reset_slots(len(actions)),
        )

    def _step_no_reset(
        self, key: PRNGKey, state: EnvState, action: jax.Array, params: EnvParams
    ) -> tuple[EnvState, TimeStep]:
        obs, state, reward, done, info = self._task_step(
            key, state, action.astype(jnp.int32), params
        )
        done = jnp.asarray(done, jnp.bool_)
        # Craftax ends an episode at death (or in lava) and at the step limit,
        # as one `done`. Its own rule without the limit tells them apart; a
        # death at the last step is a termination.
        no_limit = params.replace(max_timesteps=jnp.iinfo(jnp.int32).max)
        terminated = done & jnp.asarray(self.env.is_terminal(state, no_limit))
        truncated = done & ~terminated
        obs = jnp.asarray(obs, jnp.float32)
        return strong_types(state), TimeStep(
            observation=obs,
            reward=jnp.asarray(reward, jnp.float32),
            discount=1.0 - terminated.astype(jnp.float32),
            truncated=truncated,
            final_observation=obs,
            info=metrics_info(_achievements(info)),
        )

    @functools.cached_property
    def _step_metrics(self) -> dict[str, Any]:
        """A step's achievements, abstract: `reset` logs them at 0.

        One trace of the jitted step, which the program's trace then reuses.
        """
        key, params = jax.random.key(0), self.default_params
        state, _ = jax.eval_shape(self._reset, key, params)  # strongly typed
        action = jnp.zeros((), jnp.int32)
        info = jax.eval_shape(self._task_step, key, state, action, params)[-1]
        return _achievements(info)

    def _reset(self, key: PRNGKey, params: EnvParams) -> tuple[EnvState, jax.Array]:
        obs, state = self._task_reset(key, params)
        return strong_types(state), jnp.asarray(obs, jnp.float32)


def reset_slots(num_envs: int) -> int:
    """Worlds `CraftaxEnv.step_batch` generates per step for `num_envs` envs.

    One per 32 environments, at least 2: with episodes of a few hundred steps
    more than that rarely end in one step (then all are generated).
    """
    return min(num_envs, max(2, num_envs // 32))


def _achievements(info: dict[str, Any]) -> dict[str, Any]:
    """Craftax's achievements, what runs log, from its step info.

    Craftax sets each to 100 in the step that ends an episode in which it was
    unlocked (so an episode's sum is 100 or 0, and its mean over episodes a
    success rate in %). Classic's per-episode `score` is left out: averaged
    over episodes it is not the paper's score, the geometric mean of the
    success rates, which the logged rates give.
    """
    return {k: v for k, v in info.items() if k.startswith("Achievements/")}
