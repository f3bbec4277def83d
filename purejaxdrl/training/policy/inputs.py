"""What an exported policy takes: observations checked and put as its agent saw them.

The observations' functions raise one ValueError naming the shapes a policy
takes where an observation fits none of them, instead of an error from inside
the network; `check_key` one naming the key a seed was given for.
"""

import operator
from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp

from purejaxdrl.env.base import Box


def check_key(key: Any) -> None:
    """A ValueError where `act` or `step` is given a seed (`act(obs, 0)`), not a key.

    Many RL libraries take an int seed there; JAX would refuse it from inside
    the sampler ("invalid PRNG key data"). A check of the argument's type and
    shape in Python: under `jit` it runs once, at tracing, and costs nothing.
    """
    dtype = getattr(key, "dtype", None)
    typed = dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)
    if jnp.ndim(key) == 0 and not typed:
        given = f"key={key!r}" if dtype is None else f"a key of {dtype}[]"
        raise ValueError(
            f"policy.act and policy.step take a random key, not a seed; got "
            f"{given}: pass jax.random.key(seed) (and a new one for each call, "
            "from jax.random.split)."
        )


def checked_batch(initial_state: Callable[[int], Any]) -> Callable[[int], Any]:
    """`initial_state`, refusing a batch that is no count with a ValueError.

    JAX's own error for `initial_state(-1)` is about broadcast shapes; 0
    (no episodes) is a count, and an empty state.
    """

    def initial_state_of(batch: int) -> Any:
        try:
            count = operator.index(batch)
        except TypeError:
            count = -1
        if count < 0 or isinstance(batch, bool):
            raise ValueError(
                f"initial_state(batch={batch!r}): batch must be an integer >= 0 "
                "(the number of episodes to step together); pass e.g. "
                "policy.initial_state(4)."
            )
        return initial_state(count)

    return initial_state_of


def as_acted_on(obs: jax.Array, spec: dict[str, Any]) -> jax.Array:
    """`obs` [..., *shape] as the run's agent saw it, or a ValueError.

    A run with `env.hide_observations` acted on the other entries: the policy
    takes those, or the environment's whole observation and hides them itself.
    """
    shape = tuple(spec["observation_shape"])
    hidden = spec.get("env_hide_observations") or []
    full = shape[-1] + len(hidden) if shape else None
    if hidden and obs.shape[-1:] == (full,):
        drop = {i % full for i in hidden}
        obs = obs[..., [i for i in range(full) if i not in drop]]
    if obs.shape[obs.ndim - len(shape) :] != shape:
        raise ValueError(
            f"{spec['env_id']}'s policy takes observations of shape "
            f"{list(shape)}{before_hiding(spec)} after any batch axes; got "
            f"{list(obs.shape)}{_mask_hint(obs, shape, spec)}."
        )
    return obs


def as_array(obs: Any, spec: dict[str, Any]) -> jax.Array:
    """`obs` as a float32 array; a ValueError for a dict, or a tuple of parts.

    A policy of an array observation given a Gymnasium Dict or Tuple space's
    own observation (the host adapter flattened it for the run) raised a
    bare TypeError ("float() argument must be ... not 'dict'"). A tuple of
    numbers is an array as ever.
    """
    try:
        if not isinstance(obs, Mapping):
            return jnp.asarray(obs, jnp.float32)
    except (TypeError, ValueError):
        if not isinstance(obs, tuple):
            raise
    kind = "dict" if isinstance(obs, Mapping) else "tuple"
    shape = list(spec["observation_shape"])
    raise ValueError(
        f"{spec['env_id']}'s policy takes observations of shape {shape} after "
        f"any batch axes, one array; got a {kind}{_FLATTEN}."
    )


def before_hiding(spec: dict[str, Any], lead: tuple[Any, ...] = ()) -> str:
    """` (or [*lead, 4], before hiding [1, 3])`: the whole observation's layout.

    Empty where the run hid no entries. A run with `env.hide_observations`
    takes its environment's whole observation too (`as_acted_on` hides them).
    """
    shape = tuple(spec["observation_shape"])
    hidden = spec.get("env_hide_observations") or []
    if not (hidden and shape):
        return ""
    full = (*lead, *shape[:-1], shape[-1] + len(hidden))
    return f" (or [{', '.join(map(str, full))}], before hiding {hidden})"


def _mask_hint(obs: jax.Array, shape: tuple[int, ...], spec: dict[str, Any]) -> str:
    """How a Gymnasium env's observation becomes what the run acted on.

    A masked policy's observation short by its action count lacks the mask
    the host adapter appended; any other names the flattening of a space
    that is not a Box (a Discrete observation one-hot), as the run saw it.
    """
    if not str(spec["env_id"]).startswith("gymnasium:"):
        return ""
    action = spec.get("action", {})
    actions = action.get("discrete")
    short = bool(shape) and actions and obs.shape[-1:] == (shape[-1] - actions,)
    if short and action.get("masked"):
        # The host adapter appends info["action_mask"] to the observation it acts on.
        return (
            f" ({actions} short: the run acted on info['action_mask'] appended, "
            "np.concatenate([obs, info['action_mask']], -1))"
        )
    return _FLATTEN


_FLATTEN = (
    " (a space that is not a Box is flattened, as the run saw it: "
    "gymnasium.spaces.flatten(env.observation_space, obs), a Discrete one one-hot)"
)


def with_all_entries(
    obs: Any, obs_spec: dict[str, Box], key: str, env_id: str
) -> dict[str, jax.Array]:
    """A dict observation with every entry, from the policy's entry alone.

    An exported asymmetric actor-critic acts on the policy's entry (`obs`
    itself, or a dict holding it); the critic's entries, which no action
    depends on, are zeros where missing. Every entry given must have its
    shape after any batch axes.
    """
    takes = ", ".join(f"{k!r}: {list(b.shape)}" for k, b in obs_spec.items())
    rule = (
        f"{env_id}'s policy takes dict observations {{{takes}}} (after any "
        f"batch axes), or its entry {key!r} alone"
    )
    if not isinstance(obs, dict):
        obs = {key: obs}
    if key not in obs:
        raise ValueError(f"{rule}; got a dict without {key!r}: {sorted(obs)}.")
    obs = {k: jnp.asarray(v) for k, v in obs.items()}
    for name, value in obs.items():
        box = obs_spec.get(name)
        size = 0 if box is None else len(box.shape)
        if box is None or value.shape[value.ndim - size :] != box.shape:
            raise ValueError(f"{rule}; got {name!r} of shape {list(value.shape)}.")
    mine = obs[key]
    batch = mine.shape[: mine.ndim - len(obs_spec[key].shape)]
    return {
        k: obs[k] if k in obs else jnp.zeros((*batch, *box.shape), jnp.float32)
        for k, box in obs_spec.items()
    }


def batched_step_inputs(
    obs: jax.Array,
    reset: Any,
    state: Any,
    spec: dict[str, Any],
    given: tuple[int, ...] | None = None,
) -> tuple[jax.Array, jax.Array]:
    """A recurrent policy's step inputs: B observations, B resets, a state of B.

    `obs` [B, *shape] (after `as_acted_on`); `reset` a bool [B], or one bool
    for all B; `state` from `initial_state(B)`. Anything else is one
    ValueError naming the shapes, instead of a broadcasting error in the core.
    `given` is the observation's shape as the caller passed it (default:
    `obs`'s), which the error quotes: with hidden entries, the whole
    observation's shape, not the one `as_acted_on` made of it.
    """
    shape = tuple(spec["observation_shape"])
    if obs.ndim != len(shape) + 1:
        given = obs.shape if given is None else given
        raise ValueError(
            f"a recurrent policy steps a batch: obs [B, {', '.join(map(str, shape))}]"
            f"{before_hiding(spec, ('B',))}; got {list(given)} (one observation: "
            "obs[None], with initial_state(1))."
        )
    batch = obs.shape[0]
    reset = jnp.asarray(reset, bool)
    if reset.shape not in ((), (batch,)):
        raise ValueError(
            f"reset must be one bool or bool [{batch}] (one per observation); got "
            f"{list(reset.shape)}."
        )
    sizes = {x.shape[0] if x.ndim else None for x in jax.tree.leaves(state)}
    if sizes != {batch}:
        raise ValueError(
            f"the state is of a batch of {sorted(sizes, key=str)}, the observations "
            f"of {batch}; start from policy.initial_state({batch})."
        )
    return obs, jnp.broadcast_to(reset, (batch,))
