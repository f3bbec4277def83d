"""Policy-gradient losses. All functions act on a flat batch of samples `[N]`."""

import chex
import jax
import jax.numpy as jnp


def clipped_surrogate_loss(
    ratio_t: jax.Array, adv_t: jax.Array, epsilon: jax.Array | float
) -> jax.Array:
    """PPO clipped surrogate objective, negated to be minimised.

    L = -mean(min(ρ A, clip(ρ, 1 - ε, 1 + ε) A)), with ρ = π(a|s) / μ(a|s).
    See Schulman et al. (2017), https://arxiv.org/abs/1707.06347.

    Args:
      ratio_t: importance ratios ρ, float32 [N].
      adv_t: advantage estimates (constants), float32 [N].
      epsilon: clipping threshold ε.

    Returns:
      Scalar loss.

    """
    chex.assert_equal_shape([ratio_t, adv_t])
    clipped = jnp.clip(ratio_t, 1.0 - epsilon, 1.0 + epsilon)
    return -jnp.mean(jnp.minimum(ratio_t * adv_t, clipped * adv_t))


def value_loss(
    v_t: jax.Array,
    target_t: jax.Array,
    v_old_t: jax.Array | None = None,
    epsilon: jax.Array | float = 0.2,
) -> jax.Array:
    """Half mean squared error of the value, optionally clipped as in PPO2.

    With `v_old_t`, the prediction may move at most ε from it before the loss stops
    rewarding the move: 0.5 mean(max((v - G)², (v_old + clip(v - v_old, ±ε) - G)²)).

    Args:
      v_t: predicted values, float32 [N].
      target_t: value targets (constants), float32 [N].
      v_old_t: values predicted when the data was collected, float32 [N], or None.
      epsilon: clipping range for the value change.

    Returns:
      Scalar loss.

    """
    chex.assert_equal_shape([v_t, target_t])
    loss = jnp.square(v_t - target_t)
    if v_old_t is not None:
        v_clipped = v_old_t + jnp.clip(v_t - v_old_t, -epsilon, epsilon)
        loss = jnp.maximum(loss, jnp.square(v_clipped - target_t))
    return 0.5 * jnp.mean(loss)


def normalize_advantages(adv_t: jax.Array, axis_name: str | None = None) -> jax.Array:
    """Standardises advantages over the batch, across devices of `axis_name`."""
    mean = jnp.mean(adv_t)
    mean_sq = jnp.mean(jnp.square(adv_t))
    if axis_name is not None:
        mean, mean_sq = jax.lax.pmean((mean, mean_sq), axis_name)
    std = jnp.sqrt(jnp.maximum(mean_sq - jnp.square(mean), 0.0))
    return (adv_t - mean) / (std + 1e-8)
