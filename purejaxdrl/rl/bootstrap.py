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
    steps need their final observations evaluated: they are gathered and
    evaluated B at a time (once per unroll when no time limit is shorter than
    it; not at all when no step was truncated), not all T * B of them.

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
    flat = truncated.reshape(t * b)
    count = flat.sum()
    final_obs = jax.tree.map(
        lambda x: x.reshape(t * b, *x.shape[2:]), final_observation
    )

    def more(carry: tuple[jax.Array, jax.Array]) -> jax.Array:
        return carry[0] < count

    def evaluate(carry: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        start, out = carry
        # Found inside the loop, so that an unroll without truncations (most of
        # them) does not pay for the search.
        (index,) = jnp.nonzero(flat, size=t * b, fill_value=t * b)  # t * b: none
        rows = jax.lax.dynamic_slice_in_dim(index, start, b)
        obs_rows = jax.tree.map(lambda x: x[jnp.minimum(rows, t * b - 1)], final_obs)
        out = out.at[rows].set(value_fn(params, obs_rows), mode="drop")
        return start + b, out

    # A loop, not lax.cond(count <= b, ...): under a sweep's vmap inside
    # shard_map, cond's batching rule fails a pvary type check; the loop does
    # not, and needs no fallback pass. zeros_like keeps the values' type (per
    # device, per run) for the carry.
    init = (jnp.int32(0), jnp.zeros_like(continuing).reshape(t * b))
    final = jax.lax.while_loop(more, evaluate, init)[1].reshape(t, b)
    return jnp.where(truncated, final, continuing)
