"""The Env interface every adapter and wrapper implements, and its specs."""

import dataclasses
import inspect
import operator
from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.config import ConfigError

# Re-exported: the adapters import them from here.
from purejaxdrl.env.option_names import check_options as check_options
from purejaxdrl.env.option_spelling import both
from purejaxdrl.env.option_types import check_option_types as check_option_types
from purejaxdrl.types import PRNGKey, PyTree, TimeStep

EnvState = Any
"""An environment's state: any pytree; each `Env` defines its own."""
EnvParams = Any
"""An environment's parameters: any pytree, so they can be vmapped."""
InnerStep = Callable[[EnvState, EnvParams], tuple[EnvState, TimeStep]]
"""A wrapped env's `step` or `step_batch`, its keys and actions given."""


class UnknownEnvironmentError(ConfigError, KeyError):
    """An environment id nobody registered (a ConfigError and a KeyError).

    Raised by `make`, and by an adapter given an id its library lacks
    (`GymnaxEnv("CartPol-v1")`).

    Attributes:
      imports_advice: the message's closing advice on importing a module of
        the user's that registers the id (`--env.imports`), or "": a caller
        that knows the right way for its input (a policy folder's
        `env_imports`) says that instead.

    """

    imports_advice: str = ""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclasses.dataclass(frozen=True)
class Discrete:
    """A discrete action space with `num_values` actions, int32 [] actions.

    Attributes:
      num_values: A, the number of actions.
      legal: for an environment with illegal actions, how its observations say
        which are legal: `legal(obs [..., *obs_shape]) -> bool [..., A]`, a
        pure function (an env whose state the observation does not show
        appends A 0/1 flags to it). The networks mask the illegal actions'
        logits or Q-values with it (`networks.heads`), so acting, evaluation
        and every learner that re-applies the network to stored observations
        respect it. None: every action is always legal.

    """

    num_values: int
    legal: Callable[[jax.Array], jax.Array] | None = None

    def __post_init__(self) -> None:
        # A float or 0 here failed deep inside flax's initialisers. One action
        # is allowed: every head and sampler handles A = 1.
        n = self.num_values
        try:
            count = operator.index(n) if not isinstance(n, bool) else None
        except TypeError:  # a float, a float array, a string, a tracer
            count = None
        if count is None or count < 1:
            whole = isinstance(n, float | np.floating) and float(n).is_integer()
            fix = f"Discrete({int(n)})" if whole and n >= 1 else "e.g. Discrete(2)"
            raise ConfigError(
                f"Discrete(num_values={n!r}): the number of actions must be an "
                f"integer >= 1 (a Python or numpy int); pass an int: {fix}."
            )
        object.__setattr__(self, "num_values", count)


@dataclasses.dataclass(frozen=True)
class Box:
    """A float32 array space. Continuous actions are always in [-1, 1].

    `shape` may be given as an int (`Box(4)`) or a list (`Box([4])`): it is
    kept as a tuple of ints, which specs are compared and hashed by.
    """

    shape: tuple[int, ...]

    def __post_init__(self) -> None:
        shape = self.shape
        if isinstance(shape, int | np.integer):
            shape = (shape,)
        try:
            shape = tuple(int(n) for n in shape)
        except (TypeError, ValueError):
            raise ConfigError(
                f"Box({self.shape!r}): the shape must be a tuple of ints, e.g. "
                "Box((4,)) or Box(4)."
            ) from None
        object.__setattr__(self, "shape", shape)


def strong_types(tree: PyTree) -> PyTree:
    """`tree` with every leaf a strongly typed array of its own (canonical) dtype.

    Python scalars in a foreign env's params or state (gymnax's `time = 0`, its
    `gravity = 9.8`) become weakly typed arrays under `jit`. Weak types change
    promotion rules and make two equal states look different to a compiled
    program (a restored checkpoint would not match it), so adapters remove them.
    """

    def strong(x: Any) -> jax.Array:
        return jax.lax.convert_element_type(x, jnp.asarray(x).dtype)

    return jax.tree.map(strong, tree)


def keyword_names(function: Callable[..., Any]) -> tuple[set[str], bool]:
    """(the keyword arguments `function` names, whether it takes **kwargs too)."""
    params = inspect.signature(function).parameters.values()
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    named = {p.name for p in params if p.kind in kinds} - {"self"}
    return named, any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def keyword_defaults(function: Callable[..., Any]) -> dict[str, Any]:
    """The default values of `function`'s keyword arguments that have one."""
    params = inspect.signature(function).parameters.values()
    return {p.name: p.default for p in params if p.default is not p.empty}


def check_lengths(
    env_id: str,
    options: dict[str, Any],
    defaults: dict[str, Any],
    at_least: Mapping[str, tuple[int, str]],
) -> None:
    """Refuses a length option of `env_id` below its minimum in `at_least`.

    `at_least`: option name -> (minimum, what it is), the adapter's own table
    (`gymnax_env.AT_LEAST`, `craftax_env.AT_LEAST`).

    Raises:
      ConfigError: naming the option, its value, the minimum, what it is and
        its default.

    """
    for name, (least, what) in at_least.items():
        value = options.get(name)
        # Only the env's own lengths: another env's name has no default here.
        if name not in defaults or value is None or value >= least:
            continue
        default = np.asarray(defaults[name]).item()  # not Array(5)
        raise ConfigError(
            f"env.options {name}={value!r} must be >= {least} ({what}; "
            f"{env_id}'s default: {default!r}); pass e.g. {both(name, default)}."
        )


def keep_unmasked(spec: Discrete | Box, wrapper: str) -> Discrete | Box:
    """`spec`, unless it has a `legal` mask that `wrapper` would break.

    A wrapper that changes observations (normalises them, hides entries)
    changes what `Discrete.legal` reads, so it refuses such an environment
    rather than let its networks mask the wrong actions.

    Raises:
      ConfigError: (a ValueError) naming the wrapper and the fix.

    """
    if isinstance(spec, Discrete) and spec.legal is not None:
        raise ConfigError(
            f"{wrapper} changes the observations this environment's legal-action "
            "mask (action_spec().legal) reads; turn it off for this environment."
        )
    return spec


METRICS = "metrics"
"""`TimeStep.info[METRICS]`: an environment's values to log, name -> float32 [].

Per step (brax's and Playground's `State.metrics`: reward components,
velocities; Craftax's achievements). `EpisodeStatistics` sums each over an
episode, and a run's records hold their means over the episodes ended as
`env/<name>`, the episode sums brax's and Playground's trainers report.
"""


def logged_names(metrics: Mapping[str, Any]) -> list[str]:
    """The names in a library's metrics that runs log: its real scalars.

    Entries of another shape (a per-foot array) or kind are left out: a
    record holds one number per name. Values may be abstract (`eval_shape`'s).
    """
    names = []
    for name, value in metrics.items():
        if hasattr(value, "dtype"):  # arrays, numpy scalars, eval_shape's structs
            dtype = np.dtype(value.dtype)
        elif isinstance(value, bool | int | float):
            dtype = np.result_type(value)
        else:  # a nested dict, a string: not one number (the contract names it)
            continue
        if np.shape(value) == () and dtype.kind in "biuf":
            names.append(str(name))
    return names


def metrics_info(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """A step's `TimeStep.info`: its `logged_names` metrics, float32 (or {})."""
    logged = {k: jnp.asarray(metrics[k], jnp.float32) for k in logged_names(metrics)}
    return {METRICS: logged} if logged else {}


def restart(
    observation: jax.Array, metrics: Mapping[str, jax.Array] | None = None
) -> TimeStep:
    """The TimeStep that starts an episode: reward 0, discount 1, no truncation.

    Same structure and dtypes as a `step`'s TimeStep, so they can share a scan:
    `metrics`: a step's, or their abstract values (a library's reset state
    holds them): `info[METRICS]` holds their `logged_names` at 0.
    """
    names = logged_names(metrics or {})
    info = {METRICS: {k: jnp.zeros((), jnp.float32) for k in names}} if names else {}
    return TimeStep(
        observation=observation,
        reward=jnp.zeros((), jnp.float32),
        discount=jnp.ones((), jnp.float32),
        truncated=jnp.zeros((), jnp.bool_),
        final_observation=observation,
        info=info,
    )


class Env:
    """One auto-resetting environment; batching is `jax.vmap`'s job.

    `reset` and `step` return identical pytree structures and dtypes, so their
    outputs can be carried through `lax.scan`. Dynamics parameters are a pytree
    argument so they can be vmapped (domain randomisation) or updated by the runner
    (observation statistics).
    """

    def reset(self, key: PRNGKey, params: EnvParams) -> tuple[EnvState, TimeStep]:
        """Starts an episode. Returns the state and a TimeStep with reward 0."""
        raise NotImplementedError

    def step(
        self, key: PRNGKey, state: EnvState, action: jax.Array, params: EnvParams
    ) -> tuple[EnvState, TimeStep]:
        """Advances one step, resetting (with `key`) when the episode ends."""
        raise NotImplementedError

    def step_batch(
        self, keys: PRNGKey, states: EnvState, actions: jax.Array, params: EnvParams
    ) -> tuple[EnvState, TimeStep]:
        """`step` for B environments at once (keys [B], leaves [B, ...]).

        `jax.vmap(step)`; what the runners call. An environment whose reset
        costs far more than its step (Craftax generates a world) overrides it
        to reset only the environments that ended, with the same results.
        """
        return jax.vmap(self.step, in_axes=(0, 0, 0, None))(
            keys, states, actions, params
        )

    @property
    def default_params(self) -> EnvParams:
        """Parameters that reproduce the environment's standard dynamics."""
        raise NotImplementedError(
            f"{type(self).__name__} must define default_params (a property: its "
            "EnvParams, or None if it has none)."
        )

    def observation_spec(self, params: EnvParams) -> Box | dict[str, Box]:
        """Shape of one (float32) observation, or a dict of them per entry."""
        raise NotImplementedError(
            f"{type(self).__name__} must define observation_spec(params)."
        )

    def action_spec(self, params: EnvParams) -> Discrete | Box:
        """The action space: Discrete, or a 1-D Box of actions in [-1, 1]."""
        raise NotImplementedError(
            f"{type(self).__name__} must define action_spec(params)."
        )

    def update_statistics(
        self, params: EnvParams, info: dict[str, jax.Array], axis_name: str | None
    ) -> EnvParams:
        """Updates statistics kept in `params` from a batch of step infos.

        The runner calls this after each unroll with infos `[T, B, ...]`. Plain
        environments keep no statistics; wrappers such as `NormalizeObservation`
        override it. Statistics are combined over `axis_name` when given.
        """
        del info, axis_name
        return params

    @property
    def vma_checked(self) -> bool:
        """Whether the env's code type-checks under `shard_map`'s `check_vma`.

        Inside `shard_map` every value is typed as varying over the mesh's
        axes or not, and a `lax.scan` whose carry starts from a constant but
        picks up per-device state fails that check. Environments written that
        way (Craftax) say False, and the runners turn the check off for them
        (on one device it is off for every environment: nothing is varying
        there). Nothing else changes: agents differentiate their own copy of the
        parameters (`agents.optim.local_copy`) and average gradients
        explicitly, which means the same with or without the check.
        """
        return True


class Wrapper(Env):
    """Delegates everything to `env`; subclasses override what they change."""

    def __init__(self, env: Env):
        self.env = env

    def reset(self, key: PRNGKey, params: EnvParams) -> tuple[EnvState, TimeStep]:
        return self.env.reset(key, params)

    def step(
        self, key: PRNGKey, state: EnvState, action: jax.Array, params: EnvParams
    ) -> tuple[EnvState, TimeStep]:
        return self.around_step(
            lambda s, p: self.env.step(key, s, action, p), state, params
        )

    def step_batch(
        self, keys: PRNGKey, states: EnvState, actions: jax.Array, params: EnvParams
    ) -> tuple[EnvState, TimeStep]:
        # A wrapper that changes `step` vmaps its own (unless it also says how
        # to batch it); one that does not passes the inner batched step (which
        # may reset only the environments that ended) through `around_step`.
        if type(self).step is not Wrapper.step:
            return super().step_batch(keys, states, actions, params)
        return self.around_step(
            lambda s, p: self.env.step_batch(keys, s, actions, p), states, params
        )

    def around_step(
        self, step: InnerStep, state: EnvState, params: EnvParams
    ) -> tuple[EnvState, TimeStep]:
        """What this wrapper makes of a step of the env it wraps; nothing here.

        `step(state, params)` is the wrapped env's `step` or, for B environments
        at once, its `step_batch`: a wrapper that changes steps elementwise
        overrides this, not `step` and `step_batch`.
        """
        return step(state, params)

    @property
    def default_params(self) -> EnvParams:
        return self.env.default_params

    def observation_spec(self, params: EnvParams) -> Box:
        return self.env.observation_spec(params)

    def action_spec(self, params: EnvParams) -> Discrete | Box:
        return self.env.action_spec(params)

    @property
    def vma_checked(self) -> bool:
        return self.env.vma_checked

    def update_statistics(
        self, params: EnvParams, info: dict[str, jax.Array], axis_name: str | None
    ) -> EnvParams:
        return self.env.update_statistics(params, info, axis_name)

    def __getattr__(self, name: str) -> PyTree:
        # Reach attributes of the wrapped env (e.g. `unwrapped`), as gym does.
        if name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)
