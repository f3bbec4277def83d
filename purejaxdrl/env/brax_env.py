"""Adapter from brax environments to `Env`, with our own time limit and auto-reset.

Brax's `AutoResetWrapper` replaces the final observation with the reset one, which
makes truncated episodes bootstrap from the wrong state. This adapter keeps it,
ending and restarting episodes as Playground's and Craftax's do
(`env.resets`: `time_limit`, `reset_ended`).
"""

import contextlib
import functools
import io
import sys
import warnings
from types import ModuleType
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import (
    Box,
    Env,
    EnvParams,
    check_option_types,
    check_options,
    keyword_defaults,
    keyword_names,
    metrics_info,
    restart,
)
from purejaxdrl.env.option_spelling import both
from purejaxdrl.env.resets import reset_ended, time_limit
from purejaxdrl.types import PRNGKey, PyTree, TimeStep

# MuJoCo's MJX, which brax imports, prints these two lines (print() to stdout,
# not logging or warnings) when its optional GPU package `warp` is missing:
# noise on every brax run, about a package brax does not need here.
WARP_NOISE = ("Failed to import warp:", "Failed to import mujoco_warp:")

# brax's pipelines that step inside shard_map (`generalized` does not: below).
BACKENDS = ("positional", "spring", "mjx")


def import_brax_envs() -> ModuleType:
    """`brax.envs`, imported without MJX's two lines about the optional `warp`.

    Everything else printed while brax and MuJoCo import is printed still.
    """
    if "brax.envs" not in sys.modules:
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                import brax.envs  # noqa: F401
        finally:
            for line in printed.getvalue().splitlines(keepends=True):
                if not line.startswith(WARP_NOISE):
                    sys.stdout.write(line)
    return sys.modules["brax.envs"]


class BraxState(NamedTuple):
    """Brax's own state plus the step count within the episode (int32 [])."""

    inner: PyTree
    steps: jax.Array


def _check_options(env_id: str, options: dict) -> dict:
    """Refuses options that brax's `env_id` (or its pipeline) does not take.

    Checked before brax loads the model, which takes seconds. Returns the
    options as `check_option_types` makes them (whole floats of integers: ints).
    """
    brax_envs = import_brax_envs()
    from brax.envs.base import PipelineEnv

    # brax has no public listing of its environments; `_envs` is its registry.
    cls = brax_envs._envs.get(env_id)
    if cls is None:
        return options
    valid, any_keyword = keyword_names(cls.__init__)
    if any_keyword and issubclass(cls, PipelineEnv):
        # Pipeline environments pass their **kwargs on to PipelineEnv.
        pipeline, any_keyword = keyword_names(PipelineEnv.__init__)
        valid |= pipeline - {"sys"}
    if not any_keyword:
        check_options(f"brax/{env_id}", options, valid | {"backend", "episode_length"})
    defaults = keyword_defaults(cls.__init__)
    if issubclass(cls, PipelineEnv):
        defaults = keyword_defaults(PipelineEnv.__init__) | defaults
    return check_option_types(f"brax/{env_id}", options, defaults)


class BraxEnv(Env):
    """Adapts a brax `PipelineEnv`: time limit, auto-reset, float32 outputs.

    Actions are clipped to [-1, 1] and passed on, not rescaled to each
    actuator's `ctrlrange`: what brax's own trainers do, so results compare.

    Args:
      env_id: a name from `brax.envs` (`ant`, `halfcheetah`, `inverted_pendulum`...).
      backend: brax physics pipeline: `positional`, `spring` or `mjx`. Not
        `generalized`: its contact solver (jaxopt's projected gradient) fails
        JAX's `shard_map` type check, in which every run steps its envs.
      episode_length: time limit; reaching it truncates (not terminates) the episode.
      **kwargs: passed to the brax environment's constructor.

    """

    def __init__(
        self,
        env_id: str,
        backend: str = "positional",
        episode_length: int = 1000,
        **kwargs: Any,
    ):
        if backend == "generalized":
            raise ConfigError(
                f"brax/{env_id}: backend=generalized fails inside shard_map (its "
                "contact solver's lax.cond mixes per-device and replicated "
                f"values); use {both('backend', 'positional')} (the presets'), "
                "spring or mjx."
            )
        if backend not in BACKENDS:
            raise ConfigError(
                f"env.options backend={backend!r} is not one of {', '.join(BACKENDS)}"
                f"; pass {both('backend', 'positional')}, the presets'."
            )
        brax_envs = import_brax_envs()
        kwargs = _check_options(env_id, kwargs)
        episode_length = check_option_types(
            f"brax/{env_id}",
            {"episode_length": episode_length},
            {"episode_length": 1000},
        )["episode_length"]
        if episode_length < 1:
            raise ConfigError(
                f"env.options episode_length={episode_length} must be >= 1; pass "
                f"a positive number of steps, e.g. {both('episode_length', 1000)}."
            )
        self.env_id = env_id
        self.backend = backend
        self.episode_length = int(episode_length)
        with warnings.catch_warnings():
            # brax says, on every model load, that it is no longer maintained
            # (docs/guide/environments.md says so once, beside Playground).
            warnings.filterwarnings("ignore", message="Brax System, piplines")
            self.env = brax_envs.get_environment(env_id, backend=backend, **kwargs)
        # Jitted, so JAX traces the physics once per shape and context, not at
        # each call: a run's programs (init, the chunk, evaluation) and each
        # step's auto-reset call them, and XLA inlines them into each program.
        self._task_reset = jax.jit(self.env.reset)
        self._task_step = jax.jit(self.env.step)

    @property
    def default_params(self) -> EnvParams:
        return ()  # brax dynamics live in the system, not in a params pytree

    @property
    def vma_checked(self) -> bool:
        # MJX's constraint solver returns a constant from one branch of a
        # `lax.cond` and a per-device value from the other (as Playground's).
        return self.backend != "mjx"

    @functools.cached_property
    def _observation_size(self) -> int:
        # Brax's `observation_size` runs a reset eagerly, op by op, each op
        # compiled on first use (~5 s for inverted_pendulum); its shape alone
        # needs only an abstract trace.
        state = jax.eval_shape(self._task_reset, jax.random.key(0))
        return int(state.obs.shape[-1])

    def observation_spec(self, params: EnvParams) -> Box:
        return Box((self._observation_size,))

    def action_spec(self, params: EnvParams) -> Box:
        return Box((int(self.env.action_size),))

    def reset(self, key: PRNGKey, params: EnvParams) -> tuple[BraxState, TimeStep]:
        state, obs = self._reset(key, params)
        return state, restart(obs, state.inner.metrics)

    def step(
        self, key: PRNGKey, state: BraxState, action: jax.Array, params: EnvParams
    ) -> tuple[BraxState, TimeStep]:
        state, ts = self._step_no_reset(key, state, action, params)
        # The reset takes the whole key, unsplit (brax's step draws no
        # randomness). Splitting it, as Playground and Craftax do, would
        # change every episode after the first: brax runs would no longer
        # repeat those of earlier versions, nor resume their checkpoints alike.
        return reset_ended(state, ts, self._reset(key, params))

    def _reset(self, key: PRNGKey, params: EnvParams) -> tuple[BraxState, jax.Array]:
        """A new episode's state (step count 0) and float32 first observation."""
        inner = self._task_reset(key)
        return BraxState(inner, jnp.zeros((), jnp.int32)), inner.obs.astype(jnp.float32)

    def _step_no_reset(
        self, key: PRNGKey, state: BraxState, action: jax.Array, params: EnvParams
    ) -> tuple[BraxState, TimeStep]:
        """One step, ending the episode (without restarting it) when due."""
        del key  # brax's physics step is deterministic
        inner = self._task_step(state.inner, jnp.clip(action, -1.0, 1.0))
        steps = state.steps + 1
        terminated = jnp.asarray(inner.done) > 0.5
        obs = inner.obs.astype(jnp.float32)
        return BraxState(inner, steps), TimeStep(
            observation=obs,
            reward=jnp.asarray(inner.reward, jnp.float32),
            discount=1.0 - terminated.astype(jnp.float32),
            truncated=time_limit(steps, self.episode_length, terminated),
            final_observation=obs,
            info=metrics_info(inner.metrics),
        )
