"""n-step Q-learning targets within one time-major stream `[T]`."""

import jax
import jax.numpy as jnp

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
    end of its episode): G_t = Σ_{j<k} γ^j r_{t+j}, and the target is
    G_t + γ_boot Q(x') with γ_boot = γ^k Π_{j<k} discount_{t+j} and x' the
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
      truncated_t: time-limit truncation flags, bool [T].
      n: the horizon (static, >= 1).
      gamma: the discount γ.

    Returns:
      (G [T], γ_boot [T], bootstrap index [T] into the unroll's final
      observations), float32, float32, int32.

    Raises:
      ValueError: for a horizon n < 1, or inputs that are not [T] of one shape
        (naming their shapes; for a batch [T, B], `jax.vmap(n_step_targets,
        in_axes=(1, 1, 1, None, None), out_axes=1)`).

    """
    r_t, discount_t, truncated_t = as_streams(
        "n_step_targets",
        {"r_t": r_t, "discount_t": discount_t, "truncated_t": truncated_t},
        rank=1,
        batch_fix="for a batch [T, B], vmap it: jax.vmap(n_step_targets, "
        "in_axes=(1, 1, 1, None, None), out_axes=1)",
    )
    if n < 1:
        raise ValueError(f"n_step_targets needs a horizon n >= 1, got n={n}.")
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
