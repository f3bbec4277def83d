"""Bootstrap values of `[T, B]` steps: from the next step's value where they can be."""

from collections.abc import Callable

import jax
import jax.numpy as jnp

from purejaxdrl.types import Params, PyTree


def bootstrap_values(
    value_fn: Callable[[Params, PyTree], jax.Array],
    params: Params,
    next_values: jax.Array,
    discount: jax.Array,
    truncated: jax.Array,
    final_observation: PyTree,
) -> jax.Array:
    """The value of each step's final observation, 0 where the step terminated.

    Unless step t ended an episode, its final observation is the one acted on at
    t + 1, whose value the caller has anyway: `next_values[t]`. A terminated
    step bootstraps from nothing (discount 0): its value is 0. Only truncated
    steps need their final observations evaluated. On a CPU they are gathered
    and evaluated B at a time (once per unroll when no time limit is shorter
    than it; not at all when no step was truncated), not all T * B of them.
    On an accelerator all T * B are evaluated in one pass: a loop whose trip
    count is data-dependent makes the host copy its condition back and wait for
    the device every iteration, so nothing launched after it overlaps the
    device's work (`scripts/hlo_kernels.py` counts such loops); one more
    batched forward pass costs the device less. `lax.platform_dependent` picks
    when the program is lowered: a CPU program holds only the gathering loop.

    Args:
      value_fn: `(params, observations [N, *obs_shape]) -> values [N]`.
      params: the parameters to evaluate with.
      next_values: values of the observations acted on after each step, float32
        [T, B] (row t: those of step t + 1; the last row: of the observations
        after the unroll).
      discount: 0 where the step terminated its episode, [T, B].
      truncated: where the step ended its episode by a time limit, bool [T, B].
      final_observation: each step's final observation, [T, B, ...].

    Returns:
      Bootstrap values, float32 [T, B].

    """
    t, b = truncated.shape
    continuing = jnp.where(discount == 0.0, 0.0, next_values)
    # A step marked both truncated and terminated is a termination: value 0.
    truncated = truncated & (discount != 0.0)
    final_obs = jax.tree.map(
        lambda x: x.reshape(t * b, *x.shape[2:]), final_observation
    )
    flat = truncated.reshape(t * b)
    # zeros_like keeps the values' type (per device, per run) in both branches.
    zeros = jnp.zeros_like(continuing).reshape(t * b)

    def gathered(obs: PyTree) -> jax.Array:
        return gather_truncated(value_fn, params, flat, obs, zeros, b)

    def every(obs: PyTree) -> jax.Array:
        return zeros + value_fn(params, obs)

    final = jax.lax.platform_dependent(final_obs, cpu=gathered, default=every)
    return jnp.where(truncated, final.reshape(t, b), continuing)


def gather_truncated(
    value_fn: Callable[[Params, PyTree], jax.Array],
    params: Params,
    truncated: jax.Array,
    observations: PyTree,
    zeros: jax.Array,
    batch: int,
) -> jax.Array:
    """Values of the truncated rows of `observations`, `batch` rows at a time.

    Args:
      value_fn: `(params, observations [batch, *obs_shape]) -> values [batch]`.
      params: the parameters to evaluate with.
      truncated: which rows to evaluate, bool [N].
      observations: [N, ...].
      zeros: float32 [N] zeros, of the type the values must have.
      batch: rows evaluated per loop iteration.

    Returns:
      float32 [N]: the value of each truncated row, 0 elsewhere.

    """
    n = truncated.shape[0]
    count = truncated.sum()

    def more(carry: tuple[jax.Array, jax.Array]) -> jax.Array:
        return carry[0] < count

    def evaluate(carry: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        start, out = carry
        # Found inside the loop, so that an unroll without truncations (most of
        # them) does not pay for the search.
        (index,) = jnp.nonzero(truncated, size=n, fill_value=n)  # n: none
        rows = jax.lax.dynamic_slice_in_dim(index, start, batch)
        obs_rows = jax.tree.map(lambda x: x[jnp.minimum(rows, n - 1)], observations)
        out = out.at[rows].set(value_fn(params, obs_rows), mode="drop")
        return start + batch, out

    # A loop, not lax.cond(count <= batch, ...): under a sweep's vmap inside
    # shard_map, cond's batching rule fails a pvary type check; the loop does
    # not, and needs no fallback pass.
    return jax.lax.while_loop(more, evaluate, (jnp.int32(0), zeros))[1]
