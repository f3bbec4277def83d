"""V-trace off-policy targets (Espeholt et al., 2018). Acts on ONE stream `[T]`."""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from purejaxdrl.rl.streams import as_streams, lambda_stream
from purejaxdrl.scans import RECURSION_UNROLL, platform_scan


class VTraceOutput(NamedTuple):
    """What `vtrace` returns, both time-major float32 `[T]`.

    Attributes:
      target_tm1: the V-trace value targets v_s for the source states x_s, s in
        [0, T-1] (section 4.1); the baseline regresses V(x_s) towards them.
      pg_advantage_tm1: ρ_s (r_s + γ_s v_{s+1} - V(x_s)), the policy-gradient
        advantages of section 4.2, to multiply with ∇ log π(a_s | x_s).

    """

    target_tm1: jax.Array
    pg_advantage_tm1: jax.Array


def vtrace(
    v_tm1: jax.Array,
    v_t: jax.Array,
    r_t: jax.Array,
    discount_t: jax.Array,
    log_rho_tm1: jax.Array,
    truncated_t: jax.Array | None = None,
    *,
    lambda_: jax.Array | float = 1.0,
    clip_rho_threshold: jax.Array | float = 1.0,
    clip_c_threshold: jax.Array | float = 1.0,
    clip_pg_rho_threshold: jax.Array | float = 1.0,
) -> VTraceOutput:
    """V-trace value targets and policy-gradient advantages for one trajectory.

    Espeholt et al. (2018), "IMPALA", https://arxiv.org/abs/1802.01561, with
    the importance weights ρ_s = min(ρ̄, π(a_s|x_s) / μ(a_s|x_s)) and the
    trace coefficients c_s = λ min(c̄, π(a_s|x_s) / μ(a_s|x_s)) (the λ variant,
    section 4.1, remark 2). Backwards from the end of the stream:

      δ_s = ρ_s (r_s + γ_s V(x'_s) - V(x_s))
      v_s - V(x_s) = δ_s + γ_s c_s (v_{s+1} - V(x_{s+1}))     (remark 1)
      A_s = ρ^pg_s (r_s + γ_s v_{s+1} - V(x_s))                (section 4.2)

    where x'_s is the state reached from x_s (the final observation, before any
    auto-reset) and γ_s is 0 on termination. Episode ends inside the stream:
    termination stops both the bootstrap and the recursion (γ_s = 0); truncation
    bootstraps from V(x'_s) but stops the recursion, so neither v_s nor A_s sees
    the next episode. At the end of the stream (and on truncation) v_{s+1} is
    the bootstrap value V(x'_s).

    No gradient is stopped here: pass constants (`jax.lax.stop_gradient`) for
    the values and log-ratios, as the paper treats v_s and A_s as fixed targets.
    Write for one stream; batch with `jax.vmap(..., in_axes=1, out_axes=1)`.

    Args:
      v_tm1: values V(x_s) of the source states at times [0, T-1], float32 [T].
      v_t: values V(x'_s) of the states reached at times [1, T], float32 [T]
        (within an episode, V(x'_s) = V(x_{s+1}) = v_tm1[s + 1]; ignored where
        discount_t is 0, even inf or NaN).
      r_t: rewards at times [1, T], float32 [T] (integer or low-precision
        rewards are promoted, with every input, to at least float32; lists
        are converted).
      discount_t: γ times the env discount (0 on termination), float32 [T].
      log_rho_tm1: log π(a_s|x_s) - log μ(a_s|x_s), learner minus behaviour
        log-probabilities of the actions taken, float32 [T].
      truncated_t: time-limit truncation at times [1, T], bool [T]; None when no
        episode in the stream was truncated.
      lambda_: λ of the trace coefficients, scalar or float32 [T] (a list is
        converted).
      clip_rho_threshold: ρ̄, the truncation level of the importance weights in
        the value targets (it sets the fixed point, the value of π_ρ̄).
      clip_c_threshold: c̄, the truncation level of the trace coefficients (it
        sets the speed of convergence).
      clip_pg_rho_threshold: truncation level of ρ in the policy gradient.

    Returns:
      VTraceOutput(target_tm1, pg_advantage_tm1), each float32 [T] (the
      inputs' common float dtype, at least float32).

    Raises:
      ValueError: for an empty stream (T = 0), or stream inputs (truncated_t
        included) that are not [T] of one shape: naming their shapes, and
        for a batch [T, B] the vmap above; a `lambda_` neither scalar nor [T];
        a bool discount_t (done flags: pass gamma * (1 - done)).

    """
    streams = {"v_tm1": v_tm1, "v_t": v_t, "r_t": r_t, "discount_t": discount_t,
               "log_rho_tm1": log_rho_tm1}  # fmt: skip
    if truncated_t is not None:
        streams["truncated_t"] = truncated_t
    v_tm1, v_t, r_t, discount_t, log_rho_tm1, *truncated = as_streams(
        "vtrace",
        streams,
        rank=1,
        batch_fix="for a batch [T, B], vmap it: jax.vmap(vtrace, in_axes=1, "
        "out_axes=1)",
    )
    if r_t.shape[0] == 0:
        # Else a bare IndexError from deep inside: the scan's start reads a step.
        raise ValueError(
            f"vtrace needs a stream of T >= 1 steps, got r_t of shape "
            f"{r_t.shape}; pass at least one step."
        )
    truncated_t = truncated[0] if truncated else jnp.zeros(r_t.shape, jnp.bool_)
    lambda_ = lambda_stream("vtrace", lambda_, r_t, name="lambda_")
    # One float dtype, at least float32, for every input and the scan's carry:
    # integer or bf16 rewards would otherwise mismatch the carry.
    dtype = jnp.result_type(v_tm1, v_t, r_t, discount_t, log_rho_tm1, jnp.float32)
    v_tm1, v_t, r_t, discount_t, log_rho_tm1 = (
        x.astype(dtype) for x in (v_tm1, v_t, r_t, discount_t, log_rho_tm1)
    )
    rho_tm1 = jnp.exp(log_rho_tm1)
    clipped_rho_tm1 = jnp.minimum(clip_rho_threshold, rho_tm1)
    c_tm1 = lambda_ * jnp.minimum(clip_c_threshold, rho_tm1)
    # 1 while the next step belongs to the same episode: a truncation ends the
    # recursion (a termination does too, through its zero discount).
    same_episode_t = 1.0 - truncated_t.astype(r_t.dtype)
    # `where`, not a product with 0: an inf or NaN V(x'_s) at a terminated
    # step must not reach these targets (0 * inf is NaN).
    v_t = jnp.where(discount_t == 0, 0.0, v_t)
    delta_tm1 = clipped_rho_tm1 * (r_t + discount_t * v_t - v_tm1)

    def body(acc: jax.Array, xs: tuple[jax.Array, ...]) -> tuple[jax.Array, jax.Array]:
        delta, discount, c, same_episode = xs
        acc = delta + discount * c * same_episode * acc
        return acc, acc

    # err_s = v_s - V(x_s); err_T = 0 because v_T is the bootstrap value itself.
    _, err_tm1 = platform_scan(
        body,
        jnp.zeros_like(r_t[0]),
        (delta_tm1, discount_t, c_tm1, same_episode_t),
        reverse=True,
        unroll=RECURSION_UNROLL,
    )
    target_tm1 = v_tm1 + err_tm1
    # v_{s+1} = V(x_{s+1}) + err_{s+1} within an episode; the bootstrap value
    # V(x'_s) after a truncation and at the end of the stream.
    err_next = jnp.concatenate([err_tm1[1:], jnp.zeros_like(err_tm1[:1])])
    target_t = v_t + same_episode_t * err_next
    clipped_pg_rho_tm1 = jnp.minimum(clip_pg_rho_threshold, rho_tm1)
    pg_advantage_tm1 = clipped_pg_rho_tm1 * (r_t + discount_t * target_t - v_tm1)
    return VTraceOutput(target_tm1, pg_advantage_tm1)
