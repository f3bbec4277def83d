"""MuJoCo Playground's environments on device: `playground/<Name>`, an optional extra.

MuJoCo Playground (Zakka et al., 2025, https://arxiv.org/abs/2502.08844) is
brax's successor for JAX physics: DM Control Suite, locomotion and
manipulation tasks as `MjxEnv`s. Its training wrapper
(`wrap_for_brax_training`) drops the observation a time limit cut an episode
at and restarts every environment from its own cached first state. This
adapter wraps the raw `MjxEnv` instead: it keeps the time limit itself,
returns the true final observation, sets discount 0 only on termination, and
restarts an ended environment from a fresh random state.
"""

import functools
import os
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import (
    Box,
    Env,
    EnvParams,
    check_option_types,
    metrics_info,
    restart,
    strong_types,
)
from purejaxdrl.env.extras import package_refusal
from purejaxdrl.env.menagerie import missing_model_file, needs_menagerie, use_menagerie
from purejaxdrl.env.option_spelling import both, closest
from purejaxdrl.env.playground_compat import patch_removed_keywords
from purejaxdrl.env.playground_nan import PHYSICS_NAN, finite_step
from purejaxdrl.env.playground_options import (
    check_groups,
    check_names,
    check_physics,
    default_physics,
    flat_items,
    flatten_groups,
)
from purejaxdrl.env.randomize import choose_randomizer, draw, using
from purejaxdrl.env.resets import reset_ended, step_resetting_if_any, time_limit
from purejaxdrl.types import PRNGKey, PyTree, TimeStep

PREFIX = "playground/"
AUTO_RESETS = ("fresh", "cached_first_state")
# Options of the adapter; every other option is a key of the environment's
# Playground config (dotted for nested keys, e.g. `reward_config.scales.x`).
ADAPTER_OPTIONS = (
    "auto_reset",
    "menagerie_path",
    "observation_key",
    "randomize",
    "randomizer",
)


def _checked_options(
    env_id: str, config: dict[str, Any], defaults: dict[str, Any]
) -> dict[str, Any]:
    """A task's options checked by name, group and type; nested dicts dotted."""
    config = flatten_groups(config)  # {'a': {'b': 1}}: 'a.b', each checked
    valid = set(defaults) | set(ADAPTER_OPTIONS)
    menagerie = needs_menagerie(env_id.removeprefix(PREFIX))
    check_names(env_id, config, valid, menagerie)
    config = check_groups(env_id, config, defaults)
    return check_option_types(env_id, config, defaults)


class PlaygroundState(NamedTuple):
    """Playground's `State`, the steps taken in the episode, and its first state.

    Attributes:
      inner: Playground's `mjx_env.State`.
      steps: int32 [], control steps since the episode started.
      first: (mjx Data, observation) the environment started in, for the
        `cached_first_state` auto-reset; () for `fresh`.
      model: the environment's randomised model fields (`randomize.py`),
        drawn at its first reset and kept for the run; () without `randomize`.

    """

    inner: PyTree
    steps: jax.Array
    first: PyTree
    model: PyTree = ()


def import_registry(env_id: str = PREFIX) -> Any:
    """Playground's `registry` module, or a one-line error saying how to get it.

    Args:
      env_id: the id the error names (where it is seen: the callers that
        list every name catch it).

    Raises:
      ConfigError: when the `playground` package is not installed, or MuJoCo
        cannot load the OpenGL library `MUJOCO_GL` names.

    """
    try:
        from mujoco_playground import registry
    except ImportError as e:
        raise ConfigError(package_refusal(env_id, e)) from None
    except Exception as e:
        # MuJoCo loads MUJOCO_GL's OpenGL library when imported; PyOpenGL
        # without OSMesa's fails there with an AttributeError deep inside.
        gl = os.environ.get("MUJOCO_GL")
        if not gl:
            raise
        if "invalid value" in str(e):  # MuJoCo's word for a name it knows not
            raise ConfigError(
                f"MUJOCO_GL={gl} is not one of egl, osmesa, glfw (MuJoCo: {e}); "
                "set MUJOCO_GL=egl, or unset it."
            ) from None
        raise ConfigError(
            f"importing MuJoCo with MUJOCO_GL={gl} failed ({type(e).__name__}: "
            f"{e}): that OpenGL library is missing; install it (egl: apt-get "
            "install libegl1, osmesa: libosmesa6) or unset MUJOCO_GL."
        ) from None
    patch_removed_keywords()
    return registry


def _raw_key(key: PRNGKey) -> jax.Array:
    # Playground's code is written for JAX's legacy uint32 [2] keys; one drawn
    # from ours works whatever key implementation the run uses.
    return jax.random.bits(key, (2,), jnp.uint32)


def _task_reset(task: Any, key: jax.Array, model: PyTree) -> PyTree:
    """Playground's `State` from `task.reset`, its model's fields `model` (or ())."""
    with using(task, model):
        return strong_types(task.reset(key))


def _task_step(task: Any, inner: PyTree, action: jax.Array, model: PyTree) -> PyTree:
    """Playground's `State` from `task.step`, its model's fields `model` (or ())."""
    with using(task, model):
        return strong_types(task.step(inner, action))


class PlaygroundEnv(Env):
    """Adapts a Playground `MjxEnv`: time limit, auto-reset, float32 outputs.

    Args:
      env_id: a name of Playground's registry (`CartpoleBalance`, ...).
      auto_reset: `fresh` (default) restarts an ended environment from a new
        random state drawn with the step's key; `cached_first_state` returns
        it to the state it started in, Playground's own default (its
        `BraxAutoResetWrapper` without `full_reset`): only the physics and
        observation, the env's `info` carries over.
      menagerie_path: a local MuJoCo Menagerie (locomotion and manipulation
        tasks); else `$MUJOCO_MENAGERIE_PATH`, else Playground's own folder
        (only the first of these is looked in).
      randomize: domain randomisation: each environment steps its own model,
        drawn from its first reset's key (the run's seed) and kept in its
        state, so checkpoints save it.
      randomizer: which draws it (`randomize.RANDOMIZERS`): `auto`
        (default) the task's own where Playground's registry has one (its
        locomotion and hand tasks), else `generic`, masses, frictions and
        actuator gains scaled within `randomize.RANGES`; `playground` the
        task's own or an error.
      observation_key: for tasks whose observations are a dict, one entry
        for the agent to see as its (array) observation; None (default): the
        whole dict, whose entries the network picks (`network.policy_obs_key`
        `state`, `network.value_obs_key` `privileged_state`).
      **config: overrides of the task's Playground config, dotted for nested
        keys. `episode_length` is the time limit in control steps (default:
        the config's); `impl` the physics (default: `default_physics`).

    """

    def __init__(
        self,
        env_id: str,
        auto_reset: str = "fresh",
        menagerie_path: str | None = None,
        observation_key: str | None = None,
        randomize: bool = False,
        randomizer: str = "auto",
        **config: Any,
    ):
        registry = import_registry(env_id)
        name = env_id.removeprefix(PREFIX)
        default = registry.get_default_config(name)
        defaults = flat_items(default.to_dict())
        config = _checked_options(PREFIX + name, config, defaults)
        # The adapter's own: read as the task's options are ("true", 1).
        randomize = check_option_types(
            PREFIX + name, {"randomize": randomize}, {"randomize": False}
        )["randomize"]
        if auto_reset not in AUTO_RESETS:
            raise ConfigError(
                f"env.options auto_reset={auto_reset!r} is not one of "
                f"{', '.join(AUTO_RESETS)}; pass "
                f"{both('auto_reset', closest(auto_reset, AUTO_RESETS, 'fresh'))}."
            )
        episode_length = int(config.get("episode_length", default.episode_length))
        if episode_length < 1:
            raise ConfigError(
                f"env.options episode_length={episode_length} must be >= 1; pass "
                "a positive number of control steps, e.g. "
                f"{both('episode_length', default.episode_length)}."
            )
        repeat = config.get("action_repeat", default.get("action_repeat", 1))
        if repeat != 1:
            # The value is the task config's only where the options give none.
            whose = "" if "action_repeat" in config else f" (the {name} config's)"
            raise ConfigError(
                f"env.options action_repeat={repeat!r}{whose}: "
                "the playground adapter steps once per action; pass "
                f"{both('action_repeat', 1)}."
            )
        check_physics(PREFIX + name, config, defaults)
        if "impl" in default and "impl" not in config:
            config["impl"] = default_physics(default.impl)
        if randomizer != "auto" and not randomize:
            raise ConfigError(
                f"env.options randomizer={randomizer!r} without randomize=true "
                f"draws nothing; add {both('randomize', True)}, or drop it."
            )
        if needs_menagerie(name):
            use_menagerie(PREFIX + name, menagerie_path)
        elif menagerie_path is not None:
            raise ConfigError(
                f"env.options menagerie_path={menagerie_path!r}: {name} loads no "
                "MuJoCo Menagerie models (its model ships with Playground); drop it."
            )
        self.env_id = PREFIX + name
        self.auto_reset = auto_reset
        self.observation_key = observation_key
        self.randomize = randomize
        self.task_randomizer = choose_randomizer(registry, name, randomizer)
        self.episode_length = episode_length
        try:
            self.env = registry.load(name, config_overrides=config or None)
        except ValueError as e:
            missing = (
                missing_model_file(self.env_id, e) if needs_menagerie(name) else None
            )
            if missing is None:
                raise
            raise ConfigError(missing) from None
        # Jitted, so JAX traces MJX's physics (seconds on a CPU) once per
        # shape and context, not at each call: a run's programs (init, the
        # chunk, evaluation) and each step's auto-reset call them, and XLA
        # inlines them into each program. They read `self.env` when they trace.
        self._task_reset = jax.jit(lambda *a: _task_reset(self.env, *a))
        self._task_step = jax.jit(lambda *a: _task_step(self.env, *a))

    @property
    def default_params(self) -> EnvParams:
        return ()  # the physics lives in the MjxEnv's model, not in params

    @property
    def vma_checked(self) -> bool:
        # MJX's constraint solver returns a constant from one branch of a
        # `lax.cond` and a per-device value from the other.
        return False

    @functools.cached_property
    def _observation_spec(self) -> Box | dict[str, Box]:
        # An abstract trace: no model step is compiled to learn a shape.
        obs = jax.eval_shape(
            lambda key: self._observe(self._task_reset(key, ()).obs),
            jax.random.PRNGKey(0),
        )
        return jax.tree.map(lambda x: Box(tuple(int(d) for d in x.shape)), obs)

    def observation_spec(self, params: EnvParams) -> Box | dict[str, Box]:
        """A Box, or a dict of them (dict observations, no `observation_key`)."""
        return self._observation_spec

    def action_spec(self, params: EnvParams) -> Box:
        return Box((int(self.env.action_size),))

    def _observe(self, obs: PyTree) -> PyTree:
        if not isinstance(obs, dict) and self.observation_key is not None:
            raise ConfigError(
                f"env.options observation_key={self.observation_key!r}: "
                f"{self.env_id} observes one array, not a dict of them; drop it."
            )
        if isinstance(obs, dict) and self.observation_key is not None:
            if self.observation_key not in obs:
                raise ConfigError(
                    f"env.options observation_key={self.observation_key!r} is not "
                    f"an observation of {self.env_id}: its observations are "
                    f"{', '.join(sorted(obs))}; pass one of them."
                )
            obs = obs[self.observation_key]
        return jax.tree.map(lambda x: jnp.asarray(x, jnp.float32), obs)

    def _reset(
        self, key: PRNGKey, params: EnvParams, model: PyTree = ()
    ) -> tuple[PlaygroundState, Any]:
        inner = self._task_reset(_raw_key(key), model)
        first = (inner.data, inner.obs) if self.auto_reset != "fresh" else ()
        state = PlaygroundState(inner, jnp.zeros((), jnp.int32), first, model)
        return state, self._observe(inner.obs)

    def reset(
        self, key: PRNGKey, params: EnvParams
    ) -> tuple[PlaygroundState, TimeStep]:
        model = ()
        if self.randomize:
            key, key_model = jax.random.split(key)
            model = draw(key_model, self.env.mjx_model, self.task_randomizer)
        state, obs = self._reset(key, params, model)
        return state, restart(obs, {**state.inner.metrics, PHYSICS_NAN: 0.0})

    def _step_no_reset(
        self, key: PRNGKey, state: PlaygroundState, action: jax.Array, params: EnvParams
    ) -> tuple[PlaygroundState, TimeStep]:
        """One control step, ending the episode (without restarting it) when due."""
        del key  # Playground's tasks draw their own noise from their state
        inner = self._task_step(state.inner, jnp.clip(action, -1.0, 1.0), state.model)
        steps = state.steps + 1
        obs, reward, metrics, blew_up = finite_step(
            self._observe(inner.obs), inner.reward, inner.metrics
        )
        # A blown-up physics state cannot go on: its episode ends (Playground's
        # DM Control tasks end it too, on a NaN qpos / qvel).
        terminated = (jnp.asarray(inner.done) > 0.5) | blew_up
        truncated = time_limit(steps, self.episode_length, terminated)
        return state._replace(inner=inner, steps=steps), TimeStep(
            observation=obs,
            reward=reward,
            discount=1.0 - terminated.astype(jnp.float32),
            truncated=truncated,
            final_observation=obs,
            info=metrics_info({**metrics, PHYSICS_NAN: blew_up}),
        )

    def step(
        self, key: PRNGKey, state: PlaygroundState, action: jax.Array, params: EnvParams
    ) -> tuple[PlaygroundState, TimeStep]:
        key_step, key_reset = jax.random.split(key)
        state, ts = self._step_no_reset(key_step, state, action, params)
        if self.auto_reset == "fresh":
            return reset_ended(state, ts, self._reset(key_reset, params, state.model))
        return self._restart_first(state, ts)

    def _restart_first(
        self, state: PlaygroundState, ts: TimeStep
    ) -> tuple[PlaygroundState, TimeStep]:
        """Returns an ended environment to its cached first physics state."""
        done = ts.last()
        data, obs = state.first
        inner = state.inner.replace(
            data=jax.tree.map(
                lambda a, b: jnp.where(done, a, b), data, state.inner.data
            ),
            obs=jax.tree.map(lambda a, b: jnp.where(done, a, b), obs, state.inner.obs),
            done=jnp.zeros_like(state.inner.done),
        )
        steps = jnp.where(done, 0, state.steps)
        observation = jax.tree.map(
            lambda a, b: jnp.where(done, a, b), self._observe(obs), ts.observation
        )
        return state._replace(inner=inner, steps=steps), ts._replace(
            observation=observation
        )

    def step_batch(
        self,
        keys: PRNGKey,
        states: PlaygroundState,
        actions: jax.Array,
        params: EnvParams,
    ) -> tuple[PlaygroundState, TimeStep]:
        """`step` of B environments, computing fresh resets when any ended.

        Under `vmap` a reset would run for every environment at every step
        (both sides of a `where`), and a reset costs a physics forward pass.
        Playground's episodes last hundreds of steps, and a time limit ends
        all that started together on the same step, so resets run (for all B,
        each from the key `step` would use: the same episodes) only in the
        steps where any ended, and compile once (MJX compiles slowly on CPU).
        """
        if self.auto_reset != "fresh":
            return super().step_batch(keys, states, actions, params)

        def reset(key: PRNGKey, state: PlaygroundState, params: EnvParams) -> tuple:
            return self._reset(key, params, state.model)  # the same model

        return step_resetting_if_any(
            self._step_no_reset, reset, keys, states, actions, params
        )
