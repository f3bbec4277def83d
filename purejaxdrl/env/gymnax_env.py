"""Adapter from gymnax (>= 1.0, six-value `step`) environments to `Env`."""

import difflib
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import (
    Box,
    Discrete,
    Env,
    EnvParams,
    EnvState,
    UnknownEnvironmentError,
    check_lengths,
    check_option_types,
    check_options,
    keyword_defaults,
    keyword_names,
    restart,
    strong_types,
)
from purejaxdrl.env.contract import traced
from purejaxdrl.setup_warnings import SetupWarning, user_stacklevel
from purejaxdrl.types import PRNGKey, TimeStep

# Environments whose `step` runs a loop from a constant carry that picks up
# per-environment state (Asterix's spawning): under `shard_map`'s type check
# the carry's types differ. Found by training each MinAtar game on 2 devices.
_UNCHECKED = frozenset({"Asterix-MinAtar"})

# Lengths that must be at least 1: the time limit almost every gymnax
# environment has (below it, each episode is cut at its first step, or never),
# and bsuite's chains (below it no episode ends, or the observation divides
# by zero). Such runs trained in silence, with a meaningless or no return.
AT_LEAST = {
    "max_steps_in_episode": (1, "its time limit, in steps"),
    "memory_length": (1, "the steps to remember before the query"),
    "chain_length": (1, "the chain's length, in steps"),
}


class GymnaxEnv(Env):
    """Adapts a gymnax environment: float32 observations, rewards and discounts.

    Observations of a `Discrete` observation space (FrozenLake) are one-hot encoded;
    continuous actions in [-1, 1] are rescaled to the environment's bounds.
    Options are the environment's constructor arguments, or fields of its
    default parameters (`make("MemoryChain-bsuite", memory_length=20)`).
    A gymnax environment of your own (not in gymnax's registry) is adapted by
    `GymnaxEnv.wrap`.
    """

    def __init__(self, env_id: str, **kwargs):
        import gymnax  # local: importing gymnax costs ~1 s

        if env_id not in gymnax.registered_envs:
            raise UnknownEnvironmentError(_unknown(env_id, gymnax.registered_envs))
        # Options naming a field of the environment's parameters set it (e.g.
        # MemoryChain-bsuite's memory_length); the others go to its constructor.
        probe, probe_params = _make(env_id)
        fields = set(getattr(probe_params, "__dataclass_fields__", {}))
        # Checked even where the constructor is `(*args, **kwargs)`: that is
        # object's (MountainCar-v0, the bandits), which takes no argument.
        arguments, _ = keyword_names(type(probe).__init__)
        check_options(env_id, kwargs, fields | arguments)
        defaults = keyword_defaults(type(probe).__init__)
        defaults |= {f: getattr(probe_params, f) for f in fields}
        kwargs = check_option_types(env_id, kwargs, defaults)
        check_lengths(env_id, kwargs, defaults, AT_LEAST)
        overrides = {k: kwargs.pop(k) for k in list(kwargs) if k in fields}
        env, params = _make(env_id, **kwargs)
        if overrides:
            params = params.replace(**overrides)
        self._adopt(env_id, env, params)

    @classmethod
    def wrap(cls, env: Any, params: Any = None) -> "GymnaxEnv":
        """Adapts `env`, a gymnax `Environment` of your own, with `params`.

        For `env.register`: `register("MyTask-v0", lambda: GymnaxEnv.wrap(MyTask()))`.

        Args:
          env: an instance of a subclass of gymnax's `Environment`.
          params: its parameters (default: `env.default_params`).

        """
        adapter = cls.__new__(cls)
        name = getattr(env, "name", type(env).__name__)
        params = env.default_params if params is None else params
        _check_time_limit(name, params)
        adapter._adopt(name, env, params)
        adapter._check_traced(params)
        _warn_if_legacy(name, env)
        return adapter

    def _check_traced(self, params: Any) -> None:
        """Traces a user's class (nothing runs) against gymnax >= 1.0's rules.

        Its state must have gymnax's `time` (gymnax's `step` reads it for the
        time limit); its observations must have its observation space's shape
        (the adapter's reshape would fail on another size, and hide another
        shape of the same size); and a class that calls `self.discount`
        must define `is_terminated`. Each is one line, not a traceback.

        Raises:
          ConfigError: naming the class, the rule and the fix.

        """
        from gymnax.environments.environment import Environment

        env, key = self.env, jax.random.key(0)
        obs, state = traced(self.env_id, "reset_env", env.reset_env, key, params)
        if not hasattr(state, "time"):
            raise ConfigError(
                f"{self.env_id}: its state ({type(state).__name__}) has no `time`, "
                "which gymnax >= 1.0's step reads for the time limit "
                "(params.max_steps_in_episode); subclass gymnax's EnvState "
                "(gymnax.environments.environment.EnvState) or add a `time` "
                "field, and count it up in step_env."
            )
        self._check_shape("reset_env", obs)

        def step(key: PRNGKey, state: EnvState, action: jax.Array) -> Any:
            return env.step(key, state, self._env_action(action), params)

        action = _action_struct(self._action_spec)
        try:
            obs = traced(self.env_id, "step_env", step, key, state, action)[0]
        except ConfigError as e:
            cause = e.__cause__
            undefined = type(env).is_terminated is Environment.is_terminated
            if isinstance(cause, NotImplementedError) and undefined:
                raise ConfigError(_no_is_terminated(self.env_id, env, cause)) from cause
            raise
        self._check_shape("step_env", obs)

    def _check_shape(self, where: str, obs: Any) -> None:
        """Refuses `where`'s observation when its shape is not the space's."""
        shape = getattr(obs, "shape", None)
        if self._obs_categories is not None or shape == self._obs_shape:
            return
        got = f"{jnp.dtype(obs.dtype).name}{list(shape)}" if shape is not None else obs
        raise ConfigError(
            f"{self.env_id}: {where}'s observation is {got}, but its "
            f"observation_space is a Box of shape {self._obs_shape}; make them "
            "agree (get_obs's array, or the space's shape)."
        )

    def _adopt(self, env_id: str, env: Any, params: Any) -> None:
        """Takes `env` and `params` as the adapted environment and its defaults."""
        self.env_id, self.env = env_id, env
        # Concrete arrays, not Python scalars: no weak types reach `jit`.
        self._default_params = strong_types(params)
        obs_space = self.env.observation_space(params)
        self._obs_categories = getattr(obs_space, "n", None)
        if self._obs_categories is not None:
            self._obs_shape = (int(self._obs_categories),)
        elif hasattr(obs_space, "shape"):
            self._obs_shape = tuple(int(d) for d in obs_space.shape)
        else:
            raise ConfigError(
                f"{env_id}: its observation space is a {type(obs_space).__name__}; "
                "the gymnax adapter takes a Box or a Discrete one: return an "
                "array from its get_obs (e.g. the parts concatenated)."
            )
        act_space = self.env.action_space(params)
        if hasattr(act_space, "n"):
            self._action_spec = Discrete(int(act_space.n))
            self._low = self._high = self._scaled_action_bounds = None
            return
        self._act_shape = tuple(int(d) for d in act_space.shape)
        self._low = jnp.asarray(act_space.low, jnp.float32).reshape(-1)
        self._high = jnp.asarray(act_space.high, jnp.float32).reshape(-1)
        if not (jnp.isfinite(self._low).all() and jnp.isfinite(self._high).all()):
            raise ConfigError(
                f"{env_id}: its action space has bounds that are not finite "
                f"({act_space.low}, {act_space.high}); the policy's actions in "
                "[-1, 1] are scaled to the bounds, so give the space finite "
                "ones, scaling the actions inside the environment if needed."
            )
        # A scalar action (shape ()) is a policy's vector of one.
        self._action_spec = Box((int(np.prod(self._act_shape)),))
        # What [-1, 1] is scaled to, per dimension: an exported policy records it
        # (`specs.action_bounds`; private, so a user env's own name is not read).
        low, high = (
            np.broadcast_to(np.asarray(b), self._act_shape).ravel()
            for b in (act_space.low, act_space.high)
        )
        self._scaled_action_bounds = tuple(map(float, low)), tuple(map(float, high))

    @property
    def default_params(self) -> EnvParams:
        return self._default_params

    @property
    def vma_checked(self) -> bool:
        return self.env_id not in _UNCHECKED

    def observation_spec(self, params: EnvParams) -> Box:
        return Box(self._obs_shape)

    def action_spec(self, params: EnvParams) -> Discrete | Box:
        return self._action_spec

    def _observation(self, obs: jax.Array) -> jax.Array:
        if self._obs_categories is not None:
            return jax.nn.one_hot(obs, self._obs_categories, dtype=jnp.float32)
        return jnp.asarray(obs, jnp.float32).reshape(self._obs_shape)

    def _env_action(self, action: jax.Array) -> jax.Array:
        if self._low is None:
            return action.astype(jnp.int32)
        scaled = self._low + 0.5 * (action + 1.0) * (self._high - self._low)
        return jnp.clip(scaled, self._low, self._high).reshape(self._act_shape)

    def reset(self, key: PRNGKey, params: EnvParams) -> tuple[EnvState, TimeStep]:
        obs, state = self.env.reset(key, params)
        return strong_types(state), restart(self._observation(obs))

    def step(
        self, key: PRNGKey, state: EnvState, action: jax.Array, params: EnvParams
    ) -> tuple[EnvState, TimeStep]:
        obs, state, reward, terminated, truncated, info = self.env.step(
            key, state, self._env_action(action), params
        )
        terminated = jnp.asarray(terminated, jnp.bool_)
        return strong_types(state), TimeStep(
            observation=self._observation(obs),
            reward=jnp.asarray(reward, jnp.float32),
            discount=1.0 - terminated.astype(jnp.float32),
            # When both fire, termination wins: no bootstrap past a true end.
            truncated=jnp.logical_and(jnp.asarray(truncated, jnp.bool_), ~terminated),
            final_observation=self._observation(info["final_observation"]),
            info={},
        )


def _unknown(env_id: str, names: list[str]) -> str:
    """Why `GymnaxEnv(env_id)` is refused, with the names spelt alike."""
    close = difflib.get_close_matches(env_id, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return (
        f"{env_id!r} is not in gymnax's registry{hint}; pass one of "
        "gymnax.registered_envs, or, for a gymnax Environment of your own, use "
        "GymnaxEnv.wrap(env)."
    )


def _make(env_id: str, **kwargs: Any) -> tuple[Any, Any]:
    """`gymnax.make`, with a failed download (MNISTBandit-bsuite's) one line.

    gymnax downloads MNIST into /tmp/mnist when MNISTBandit-bsuite is made;
    offline, urllib's URLError (an OSError) ended the run in a traceback (as
    did a damaged file, gzip's BadGzipFile).

    Raises:
      ConfigError: naming the files, where they go and the error.

    """
    import gymnax

    try:
        return gymnax.make(env_id, **kwargs)
    except OSError as e:
        if env_id != "MNISTBandit-bsuite":
            raise
        raise ConfigError(
            f"{env_id}: gymnax reads MNIST from /tmp/mnist when it is made, "
            "downloading the files missing there, and that failed "
            f"({type(e).__name__}: {e}); connect to the internet, or put "
            "train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, "
            "t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz in /tmp/mnist."
        ) from e


def _check_time_limit(name: str, params: Any) -> None:
    """Refuses a user's params whose time limit cuts every episode at one step.

    gymnax's base `EnvParams` declares `max_steps_in_episode: int = 1`, so a
    params class that does not declare its own inherits 1, and gymnax's
    `step` truncates each episode after its first step: such a run trained in
    silence on one-step episodes, with a return of 0. Only `wrap` checks it:
    gymnax's registry has a legitimate one-step task (MNISTBandit-bsuite).

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    limit = getattr(params, "max_steps_in_episode", None)
    if limit is None or np.size(limit) == 0 or np.min(np.asarray(limit)) > 1:
        return
    value = np.asarray(limit).min().item()
    raise ConfigError(
        f"{name}: params.max_steps_in_episode is {value!r} (gymnax's EnvParams "
        "default where a params class does not declare it): every episode "
        "would be truncated after one step; declare `max_steps_in_episode: int "
        f"= N` (the time limit, N > 1) in {type(params).__name__}, or pass a "
        "larger one through your factory's options (--env.option); a one-step "
        "task terminates in step_env."
    )


def _warn_if_legacy(name: str, env: Any) -> None:
    """Warns once at wrap if `env` is written the gymnax < 1.0 way.

    Such a class overrides `is_terminal` (with the time limit in it) and
    returns it as `step_env`'s done; gymnax >= 1.0 takes that as a natural
    termination, so each time-out trains with discount 0, not bootstrapped.
    Checked on the class, once: nothing is added to the compiled step.
    """
    from gymnax.environments.environment import Environment

    kind = type(env)
    legacy = getattr(kind, "is_terminal", None) is not Environment.is_terminal
    if legacy and getattr(kind, "is_terminated", None) is Environment.is_terminated:
        warnings.warn(
            f"{name} overrides is_terminal, as gymnax < 1.0 environments did; "
            "under gymnax >= 1.0 step_env must return natural termination "
            "only (implement is_terminated), the time limit is "
            "params.max_steps_in_episode, and self.discount is not called: a "
            "done that includes the time limit trains each time-out as a "
            "termination (see docs/guide/bring-your-own-env.md).",
            SetupWarning,
            stacklevel=user_stacklevel(),
        )


def _action_struct(spec: Discrete | Box) -> jax.ShapeDtypeStruct:
    """A policy's action of `spec`, abstract: int32 [] or float32 [n]."""
    if isinstance(spec, Discrete):
        return jax.ShapeDtypeStruct((), jnp.int32)
    return jax.ShapeDtypeStruct(tuple(spec.shape), jnp.float32)


def _no_is_terminated(name: str, env: Any, error: BaseException) -> str:
    """Why a class without `is_terminated` raised NotImplementedError tracing.

    The gymnax < 1.0 template returns `{"discount": self.discount(state,
    params)}` from step_env; gymnax >= 1.0's `discount` calls
    `is_terminated`, which its base class leaves unimplemented.
    """
    frames, tb = [], error.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    via = (
        "self.discount, which under gymnax >= 1.0 calls "
        if "discount" in frames
        else ""
    )
    return (
        f"{name}: step_env calls {via}is_terminated, which {type(env).__name__} "
        "does not define (gymnax's Environment raises NotImplementedError); "
        "implement is_terminated(state, params), returning natural termination "
        'only (not the time limit), or drop "discount" from step_env\'s info.'
    )
