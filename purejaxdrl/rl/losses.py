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


def normalize_advantages(
    adv_t: jax.Array,
    axis_name: str | None = None,
    *,
    axis: int | tuple[int, ...] | None = None,
) -> jax.Array:
    """Standardises advantages over `axis` (all of them by default), across devices.

    Two passes (mean, then mean squared deviation) rather than E[x²] - E[x]²:
    advantages often have a mean large against their spread, where the one-pass
    formula cancels catastrophically and its rounding depends on the device count.

    Args:
      adv_t: advantages, float32, any shape.
      axis_name: mesh axis whose devices hold the rest of the batch, or None.
      axis: the axes to standardise over; the others index separate batches
        (PPO's `[M, N]` minibatches: M statistics, each from one all-reduce).

    Returns:
      Advantages with zero mean and unit variance over `axis` and `axis_name`.

    """
    mean = jnp.mean(adv_t, axis=axis, keepdims=True)
    if axis_name is not None:
        mean = jax.lax.pmean(mean, axis_name)
    var = jnp.mean(jnp.square(adv_t - mean), axis=axis, keepdims=True)
    if axis_name is not None:
        var = jax.lax.pmean(var, axis_name)
    return (adv_t - mean) / (jnp.sqrt(var) + 1e-8)


def policy_gradient_loss(log_prob_t: jax.Array, adv_t: jax.Array) -> jax.Array:
    """REINFORCE-with-baseline policy-gradient loss, negated to be minimised.

    L = -mean(log π(a|s) Â), whose gradient is the policy gradient estimate of
    A3C (Mnih et al., 2016, https://arxiv.org/abs/1602.01783) and, with V-trace
    advantages, of IMPALA (Espeholt et al., 2018, section 4.2). The advantages
    are held constant: no gradient flows into them.

    Args:
      log_prob_t: log-probabilities of the actions taken under the learner's
        policy, float32 [N].
      adv_t: advantage estimates, float32 [N].

    Returns:
      Scalar loss.

    """
    chex.assert_equal_shape([log_prob_t, adv_t])
    return -jnp.mean(log_prob_t * jax.lax.stop_gradient(adv_t))


def actor_critic_loss(
    log_prob_t: jax.Array,
    adv_t: jax.Array,
    v_t: jax.Array,
    target_t: jax.Array,
    entropy_t: jax.Array,
    *,
    value_cost: jax.Array | float,
    entropy_cost: jax.Array | float,
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """The A3C / IMPALA objective: policy gradient, baseline and entropy bonus.

    L = L_pg + value_cost L_v - entropy_cost mean(H), with L_pg from
    `policy_gradient_loss` and L_v = 0.5 mean((v - target)²) from `value_loss`
    (Mnih et al., 2016, arXiv:1602.01783; Espeholt et al., 2018, section 4.2).

    The arrays share one shape, any (A2C passes [T, B]): each part is a mean
    over all their elements.

    Args:
      log_prob_t: learner log-probabilities of the actions taken, float32.
      adv_t: advantages (held constant), float32.
      v_t: learner values of the states acted in, float32.
      target_t: value targets (held constant), float32.
      entropy_t: policy entropies at those states, float32.
      value_cost: weight of the baseline loss L_v (0.5 mean((v - target)²):
        OpenAI baselines' vf_coef c is value_cost 2c).
      entropy_cost: weight of the entropy bonus.

    Returns:
      (total loss, its parts: `loss/total`, `loss/policy`, `loss/value` and the
      mean `entropy`, float32 [] each).

    """
    pg_loss = policy_gradient_loss(log_prob_t, adv_t)
    v_loss = value_loss(v_t, jax.lax.stop_gradient(target_t))
    entropy = jnp.mean(entropy_t)
    total = pg_loss + value_cost * v_loss - entropy_cost * entropy
    parts = {"loss/total": total, "loss/policy": pg_loss, "loss/value": v_loss}
    return total, parts | {"entropy": entropy}
