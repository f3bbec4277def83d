"""A user's environment against the contract its specs state, before training.

An environment registered with `env.register` is the user's code: an
observation of another shape than its `observation_spec`, or an int32 reward,
would otherwise surface as a flax shape error or a scan carry type error
dozens of frames deep. `check_contract` traces one `reset` and one `step`
with `jax.eval_shape` (nothing runs) and names the first disagreement;
`check_on_devices` traces them as 2+ devices' `shard_map` will.
"""

import inspect
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import METRICS, Box, Discrete, Env, EnvParams, Wrapper
from purejaxdrl.env.describe import dtype_name, named, structure, typed
from purejaxdrl.env.specs import specs_error
from purejaxdrl.env.user_frames import (
    SIGNATURES,
    arity_error,
    concrete_fix,
    error_text,
    user_frame,
)
from purejaxdrl.parallel import DATA_AXIS, varying
from purejaxdrl.rng import make_key
from purejaxdrl.types import TimeStep

# TimeStep's scalar fields: (shape, dtype) the runners carry.
_SCALARS = {"reward": jnp.float32, "discount": jnp.float32, "truncated": jnp.bool_}
# How the spec rule's message names the specs: the methods that made them.
_SPEC_NAMES = ("observation_spec(params)", "action_spec(params)")


def check_user_env(env: Any, env_id: str, key: jax.Array | None = None) -> None:
    """`check_contract` for an environment a user registered, once it is an `Env`.

    Args:
      env: what the user's factory made.
      env_id: the name it was registered under.
      key: a key of the run's implementation (`rng.make_key(seed,
        config.rng_impl)`); default: `make_key(0)`, the runs' default.

    Raises:
      ConfigError: (a ValueError) `env` is not a `purejaxdrl.env.Env` (a
        gymnax `Environment`, say), lacks a method an `Env` must define, its
        `default_params` is a method, not a property, or as `check_contract`.

    """
    if not isinstance(env, Env):
        gymnax = any(k.__module__.startswith("gymnax") for k in type(env).__mro__)
        hint = (
            f"; or, for a gymnax Environment, register({env_id!r}, lambda: "
            f"purejaxdrl.env.GymnaxEnv.wrap({type(env).__name__}()))"
            if gymnax
            else ""
        )
        raise ConfigError(
            f"{env_id}: its factory made {named(env)}, not a purejaxdrl.env.Env; "
            "subclass purejaxdrl.env.Env (docs: Bring your own environment)"
            f"{hint}."
        )
    own = ("reset", "step", "default_params", "observation_spec", "action_spec")
    missing = [name for name in own if getattr(type(env), name) is getattr(Env, name)]
    if missing:
        raise ConfigError(
            f"{env_id}: {type(env).__name__} must define {', '.join(missing)}, as "
            "every purejaxdrl.env.Env does (docs: Bring your own environment)."
        )
    params = env.default_params
    # A params pytree may be callable (an equinox Module): only a function is
    # the forgotten @property.
    if inspect.ismethod(params) or inspect.isfunction(params):
        raise ConfigError(
            f"{env_id}: {type(env).__name__}.default_params is a method; make it "
            "a @property returning the params pytree (put @property above its "
            "def), as every purejaxdrl.env.Env does."
        )
    check_contract(env, params, env_id, key)


def check_contract(
    env: Env, params: EnvParams, env_id: str, key: jax.Array | None = None
) -> None:
    """Raises ConfigError where `env`'s `reset` and `step` break its contract.

    Checked: `reset` and `step` return `(state, TimeStep)`; the observation
    and final observation against `observation_spec` (float32, its shape;
    per key for dict observations); `reward` and `discount` float32
    scalars, `truncated` a bool scalar;
    `info["metrics"]`, where there is one, a dict of float32 scalars; and
    `step`'s TimeStep and state of the same structures, shapes and dtypes as
    `reset`'s.

    `reset` and `step` are traced with `key`, default `make_key(0)`: a key of
    the implementation the run hands the environment, so that a key the
    environment makes of another (JAX's default, say) and keeps in its state
    is seen as the run's scan will see it.

    Raises:
      ConfigError: (a ValueError, so `except ValueError` still catches it;
        every break alike) naming the environment, the output, what it is,
        what the rule says, and where to fix it; where `step` breaks the
        contract (`reset` kept it), also the action it was traced with.

    """
    specs = []
    for name in ("observation_spec", "action_spec"):
        try:
            specs.append(getattr(env, name)(params))
        except ConfigError as e:  # Discrete(2.0), say: named with the env's id
            raise ConfigError(f"{env_id}: its {name} made {e}") from e
    spec, action_spec = specs
    problem = specs_error(spec, action_spec, names=_SPEC_NAMES)
    if problem is not None:
        raise ConfigError(f"{env_id}: {problem}")
    key = make_key(0) if key is None else key
    state, first = _pair(
        env_id, "reset", traced(env_id, "reset", env.reset, key, params)
    )
    _check_timestep(env_id, "reset", first, spec)
    action = _action(env, params)
    try:
        step = traced(env_id, "step", env.step, key, state, action, params)
        next_state, next_ = _pair(env_id, "step", step)
        _check_timestep(env_id, "step", next_, spec)
        _same_metrics(env_id, first.info, next_.info)
        _same(env_id, "TimeStep", first, next_)
        _same(env_id, "state", state, next_state)
    except ValueError as e:  # reset kept the contract: the action may be why
        if arity_error(e.__cause__, "step"):  # the action played no part
            raise
        e.args = (_traced_with(str(e), action, action_spec),)
        raise


def check_on_devices(
    env: Env, env_id: str, devices: int, key: jax.Array | None = None
) -> None:
    """One line, not a traceback, where `env` cannot step on `devices` devices.

    On 2+ devices the runners step environments inside `shard_map`, whose
    type check (unless `env.vma_checked` is False) tells per-device values
    (varying) from replicated ones: a `lax.scan`/`fori_loop`/`while_loop`
    whose carry starts from a constant but takes per-environment values, or
    a `lax.cond` with one branch of each, is correct JAX elsewhere and a
    TypeError there. On one device that check is off (`runners.anakin`), so
    only runs on more are traced here: `reset` and `step` (of `env` inside
    any wrappers, with its default params) on a one-device mesh, keys, state
    and action varying and params replicated, as the runners hand them over.
    Nothing runs; `check_user_env` should have passed first.

    Raises:
      ConfigError: naming the environment, the method and the fixes (the
        TypeError, with its traceback, is its cause).

    """
    while isinstance(env, Wrapper):
        env = env.env
    if devices < 2 or not env.vma_checked:
        return
    key = make_key(0) if key is None else key
    params = env.default_params
    mesh = jax.make_mesh(
        (1,), (DATA_AXIS,), axis_types=(AxisType.Auto,), devices=jax.local_devices()[:1]
    )

    def sharded(where: str, function: Callable, *args: Any) -> Any:
        def body(*args: Any) -> tuple:
            function(*jax.tree.map(lambda x: varying(x, DATA_AXIS), args), params)
            return ()

        per_device = jax.shard_map(
            body, mesh=mesh, in_specs=P(), out_specs=(), check_vma=True
        )
        try:
            jax.eval_shape(per_device, *args)
        except TypeError as e:
            raise ConfigError(_vma_message(env_id, type(env), where, e)) from e

    sharded("reset", env.reset, key)
    state, _ = jax.eval_shape(env.reset, key, params)
    sharded("step", env.step, key, state, _action(env, params))


def _vma_message(env_id: str, kind: type, where: str, error: TypeError) -> str:
    first = str(error).strip().split("\n")[0].rstrip(":.")
    return (
        f"{env_id}: its {where} fails shard_map's check of varying types, which "
        f"runs on 2+ devices ({first}): a lax.scan/fori_loop/while_loop carry "
        "(or a lax.cond branch) starts from a constant but takes per-environment "
        "values; start the carry from a value derived from the state or action "
        "(e.g. jnp.zeros_like(state.x)), or set vma_checked = False on "
        f"{kind.__name__} (docs: Bring your own environment), or train on one "
        "device (--devices 1)."
    )


def traced(env_id: str, where: str, function: Callable, *args: Any) -> Any:
    """`jax.eval_shape(function, *args)`, or one line where tracing it failed.

    The user's code, traced before training: an attribute its state lacks or
    two shapes that do not broadcast would otherwise end the run in a
    traceback dozens of frames deep, through JAX's and the adapter's. The
    line names the environment, the method, the error and the innermost
    line of the user's own code it came from (`where.where_in_user_code`);
    where the method was called with the wrong number of arguments, the
    signature purejaxdrl calls it with. The traceback is kept as the
    ConfigError's cause.

    Raises:
      ConfigError: chained from the error tracing raised (but a ConfigError,
        passed on as it is).

    """
    try:
        return jax.eval_shape(function, *args)
    except ConfigError:
        raise
    except Exception as e:
        text = error_text(e)
        if arity_error(e, where):
            fix = (
                f"purejaxdrl calls {SIGNATURES[where]}; give the method that signature"
            )
        else:
            fix = concrete_fix(e, where) or f"fix that in the environment's {where}"
        at = user_frame(e)
        raise ConfigError(
            f"{env_id}: tracing its {where} (jax.eval_shape, nothing run) raised "
            f"{type(e).__name__}{': ' + text if text else ''}"
            f"{f' (at {at})' if at else ''}; {fix} (in Python, this error's "
            "__cause__ holds the traceback)."
        ) from e


def _pair(env_id: str, where: str, out: Any) -> tuple[Any, TimeStep]:
    """`out`, where it is `(state, TimeStep)`; else one line saying what it is.

    gymnax's `reset` returns `(obs, state)` and its `step` five values, and a
    `(TimeStep, state)` pair is the contract swapped: each would otherwise fail
    later as an attribute or unpacking error that names neither.
    """
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], TimeStep):
        return out
    if isinstance(out, TimeStep):
        what = "a TimeStep alone, without the state"
    elif type(out) is tuple and len(out) == 2 and isinstance(out[0], TimeStep):
        what = "(TimeStep, state), the pair swapped"
    elif type(out) is tuple and len(out) == 2:
        what = f"a pair of {structure(out)}, with no TimeStep (gymnax's (obs, state)?)"
    elif type(out) is tuple and len(out) == 5 and where == "step":
        what = f"5 values {structure(out)}, gymnax's (obs, state, reward, done, info)"
    else:
        what = structure(out)
    made = "envs.restart(obs)" if where == "reset" else "purejaxdrl.types.TimeStep(...)"
    raise ConfigError(
        f"{env_id}: {where} returned {what}; return (state, TimeStep), state "
        f"first ({made} makes the TimeStep)."
    )


def _traced_with(message: str, action: Any, spec: Any) -> str:
    """`message`, ending with the action `step` was traced with, and whence.

    A `Box` spec's float action that `step` uses as an index broadcasts into
    the observation: the check names the observation's shape, and the note
    names the cause, so observation_spec is not bent to fit.
    """
    name = f"Discrete({spec.num_values})" if isinstance(spec, Discrete) else spec
    note = f"step was traced with action {typed(action)}, from action_spec {name}"
    if isinstance(spec, Box):
        note += "; a Discrete action is int32[]"
    return f"{message.removesuffix('.')} ({note})."


def _action(env: Env, params: EnvParams) -> jax.ShapeDtypeStruct:
    spec = env.action_spec(params)
    if isinstance(spec, Discrete):
        return jax.ShapeDtypeStruct((), jnp.int32)
    return jax.ShapeDtypeStruct(tuple(spec.shape), jnp.float32)


def _check_timestep(env_id: str, where: str, ts: Any, spec: Any) -> None:
    for field in ("observation", "final_observation"):
        _check_observation(env_id, f"{where}'s {field}", getattr(ts, field), spec)
    for field, dtype in _SCALARS.items():
        value, name = getattr(ts, field), dtype_name(dtype)
        if value.shape != () or value.dtype != dtype:
            raise ConfigError(
                f"{env_id}: {where}'s {field} is {typed(value)}, not {name}[]; "
                f"return one {name} scalar per environment (e.g. "
                f"jnp.asarray(x, jnp.{name}))."
            )
    _check_metrics(env_id, where, ts.info)


def _check_metrics(env_id: str, where: str, info: Any) -> None:
    """`info[METRICS]`, the values a run logs, a dict of float32 scalars."""
    metrics = info.get(METRICS, {}) if isinstance(info, dict) else {}
    if not isinstance(metrics, dict):
        raise ConfigError(
            f"{env_id}: {where}'s info[{METRICS!r}] is {typed(metrics)}; make it "
            "a dict of name -> float32 scalar, the values a run logs."
        )
    for name, value in metrics.items():
        if getattr(value, "shape", None) != () or value.dtype != jnp.float32:
            raise ConfigError(
                f"{env_id}: {where}'s info[{METRICS!r}][{name!r}] is "
                f"{typed(value)}, not float32[]; log one float32 scalar per "
                "environment and step (a per-step value, which runs sum over each "
                "episode), e.g. jnp.asarray(x, jnp.float32)."
            )


def _check_observation(env_id: str, what: str, obs: Any, spec: Any) -> None:
    if isinstance(spec, dict):
        if not isinstance(obs, dict) or set(obs) != set(spec):
            got = sorted(obs) if isinstance(obs, dict) else typed(obs)
            raise ConfigError(
                f"{env_id}: {what} is {got}, but observation_spec is a dict of "
                f"{sorted(spec)}; return the same keys."
            )
        for k in spec:
            _check_observation(env_id, f"{what}[{k!r}]", obs[k], spec[k])
        return
    if not isinstance(spec, Box):
        return  # categorical observations (built-in gymnax envs) have their own
    shape = tuple(spec.shape)
    if not hasattr(obs, "shape") or obs.shape != shape or obs.dtype != jnp.float32:
        raise ConfigError(
            f"{env_id}: {what} is {typed(obs)}, but observation_spec says "
            f"Box(shape={shape}) (float32{list(shape)}); make observation_spec "
            "and the observations agree."
        )


def _same_metrics(env_id: str, first: Any, next_: Any) -> None:
    """`reset` logs the names `step` logs (at 0)."""
    names = [
        sorted(info.get(METRICS, {})) if isinstance(info, dict) else []
        for info in (first, next_)
    ]
    if names[0] != names[1]:
        raise ConfigError(
            f"{env_id}: reset's info[{METRICS!r}] has {names[0]}, step's "
            f"{names[1]}; log the same names from both: reset's at 0, e.g. "
            "envs.restart(obs, metrics) with the names step logs."
        )


def _same(env_id: str, what: str, a: Any, b: Any) -> None:
    """`step`'s output `b` of the structure, shapes and dtypes of `reset`'s `a`."""
    a_leaves, a_tree = jax.tree.flatten_with_path(a)
    b_leaves, b_tree = jax.tree.flatten_with_path(b)
    if a_tree != b_tree:
        raise ConfigError(
            f"{env_id}: step's {what} has another structure than reset's "
            f"({b_tree} against {a_tree}); return the same structures from both."
        )
    for (path, x), (_, y) in zip(a_leaves, b_leaves, strict=True):
        if (x.shape, x.dtype) != (y.shape, y.dtype):
            where = jax.tree_util.keystr(path)
            raise ConfigError(
                f"{env_id}: {what}{where} is {typed(x)} after reset and "
                f"{typed(y)} after step; return the same shapes and dtypes from "
                f"both{_key_hint(x.dtype, y.dtype)}."
            )


def _key_hint(a: Any, b: Any) -> str:
    """How to keep one key implementation, where two keys' differ."""
    if a == b or not (_is_key(a) and _is_key(b)):
        return ""
    return (
        " (keys of one implementation: derive them from the key given with "
        "jax.random.split or fold_in, or pass impl=jax.random.key_impl(key) to "
        "jax.random.key and wrap_key_data)"
    )


def _is_key(dtype: Any) -> bool:
    return jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)
