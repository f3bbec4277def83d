"""n-step Q-learning targets within one time-major stream `[T]`."""

import contextlib
import math
import numbers
import operator

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.rl.streams import as_streams


def n_step_targets(
    r_t: jax.Array,
    discount_t: jax.Array,
    truncated_t: jax.Array,
    n: int,
    gamma: jax.Array | float,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The n-step return from each step of one unroll, stopped at episode ends.

    For the transition leaving step t, with k_t = min(n, T - t, steps to the
    end of its episode): G_t = Σ_{j<k} γ^j (Π_{i<j} discount_{t+i}) r_{t+j},
    and the target is G_t + γ_boot Q(x') with γ_boot = γ^k Π_{j<k}
    discount_{t+j} (the environment's discounts weigh the rewards too) and x' the
    final observation of step t + k - 1. Termination makes γ_boot 0 (never
    bootstrap past it); truncation ends the sum but keeps γ^k, bootstrapping
    from the true last observation (Mnih et al., 2016; Hessel et al., 2018).
    Transitions in the last n - 1 steps of the unroll use the shorter horizon
    they have, so no step waits for the next unroll.

    γ_boot is exactly 0 where the target must not bootstrap. Callers mask the
    bootstrap value there, `jnp.where(γ_boot == 0, 0, Q(x'))`, rather than
    multiply by γ_boot: the final observation of a terminated step may be
    anything, inf or NaN included, and 0 * inf is NaN (as `gae`,
    `lambda_returns` and `vtrace` ignore such values).

    Args:
      r_t: rewards of the transitions leaving steps [0, T), float32 [T] (one
        stream: vmap over a batch axis; T = 0 gives empty outputs).
      discount_t: the environment's discounts (0 on termination), float32 [T].
      truncated_t: time-limit truncation flags, bool [T] (0./1. floats are
        taken as flags, as `episode_aware_gae` takes them).
      n: the horizon, an int >= 1: a Python int, a numpy integer or a
        concrete 0-d integer array, never a traced one (static: it unrolls
        the sum).
      gamma: the discount γ.

    Returns:
      (G [T], γ_boot [T], bootstrap index [T] into the unroll's final
      observations), float32, float32, int32.

    Raises:
      ValueError: for a horizon n that is not an int >= 1, a bool
        discount_t (done flags: pass 1.0 - done), or inputs that are not [T]
        of one shape (naming their shapes; for a batch [T, B],
        `jax.vmap(n_step_targets, in_axes=(1, 1, 1, None, None), out_axes=1)`).

    """
    n = _check_horizon(n)
    r_t, discount_t, truncated_t = as_streams(
        "n_step_targets",
        {"r_t": r_t, "discount_t": discount_t, "truncated_t": truncated_t},
        rank=1,
        batch_fix="for a batch [T, B], vmap it: jax.vmap(n_step_targets, "
        "in_axes=(1, 1, 1, None, None), out_axes=1)",
        gamma_apart=True,
    )
    # Flags as bool: `~` of 0./1. floats failed naming neither argument nor fix.
    truncated_t = truncated_t.astype(bool)
    length = r_t.shape[0]
    t = jnp.arange(length)
    ret = jnp.zeros_like(r_t)
    boot = jnp.ones_like(r_t)
    index = t
    alive = jnp.ones(length, bool)
    for j in range(n):  # static n: unrolled
        k = jnp.minimum(t + j, length - 1)
        valid = alive & (t + j < length)
        ret = ret + jnp.where(valid, boot * r_t[k], 0.0)
        boot = jnp.where(valid, boot * gamma * discount_t[k], boot)
        index = jnp.where(valid, k, index)
        alive = valid & (discount_t[k] > 0) & ~truncated_t[k]
    return ret, boot, index.astype(jnp.int32)


def _check_horizon(n: object) -> int:
    """The horizon as a Python int: one concrete integer >= 1, else a one-line error.

    Any concrete integer passes, as `range` takes it (`operator.index`): a
    Python int, a numpy integer or a 0-d integer array (numpy's or JAX's).
    Else a float n failed in `range` ("'float' object cannot be interpreted as
    an integer") and a traced one in the comparison, naming neither.
    """
    if not isinstance(n, bool | jax.core.Tracer):  # True is 1 to operator.index
        with contextlib.suppress(TypeError):
            value = operator.index(n)
            if value >= 1:
                return value
    scalar = _one_number(n)
    if isinstance(n, jax.core.Tracer):  # n sets the unrolled loop's length
        fix = "a Python int (mark it static under jit: static_argnums=3)"
    elif (
        isinstance(scalar, numbers.Real)
        and not isinstance(scalar, bool)
        and scalar >= 1
    ):
        fix = (
            f"n={int(scalar)}"
            if float(scalar).is_integer()
            else "a whole number of steps"
        )
    elif isinstance(scalar, numbers.Real):  # 0 or less, or a bool
        fix = "n=1 for one-step targets, or more"
    else:
        fix = "one Python int, the number of steps"
    raise ValueError(
        f"n_step_targets takes the horizon n as a Python int >= 1; got "
        f"n={_shown(n)} ({type(n).__name__}); pass {fix}."
    )


def _one_number(n: object) -> object:
    """The value of n where it is one concrete real number, else None."""
    if isinstance(n, numbers.Real):
        return n
    if isinstance(n, jax.core.Tracer) or getattr(n, "shape", None) != ():
        return None
    dtype = getattr(n, "dtype", None)
    return n.item() if dtype is not None and np.dtype(dtype).kind in "biuf" else None


def _shown(n: object) -> str:
    """How a message shows n: an array's shape and dtype, never its whole repr."""
    shape = getattr(n, "shape", None)
    if (
        isinstance(shape, tuple)
        and not isinstance(n, numbers.Number)
        and (isinstance(n, jax.core.Tracer) or math.prod(shape) != 1)
    ):
        traced = "a traced" if isinstance(n, jax.core.Tracer) else "an"
        return f"{traced} array of shape {shape} and dtype {getattr(n, 'dtype', '?')}"
    return _cut(" ".join(repr(n).split()))  # one short line whatever the repr


def _cut(text: str, width: int = 80) -> str:
    """`text`, or its head of at most `width` characters ending " ...".

    Cut at a space, where there is one, so no number is shown in part
    (`[0, 1, ..., 21, 2` read as a list ending in 2).
    """
    if len(text) <= width:
        return text
    head = text[: width - 4]
    if text[width - 4] != " " and " " in head:
        head = head[: head.rindex(" ")]
    return f"{head.rstrip()} ..."
