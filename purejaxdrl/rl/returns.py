"""Return and advantage estimators. Each acts on ONE time-major stream `[T]`."""

import jax
import jax.numpy as jnp

from purejaxdrl.rl.streams import as_streams, lambda_stream
from purejaxdrl.scans import RECURSION_UNROLL, platform_scan

_GAE_VMAP = (
    "for a batch [T, B], use episode_aware_gae, or vmap it: "
    "jax.vmap(gae, in_axes=(1, 1, None, 1, 1), out_axes=1) (None: a scalar λ)"
)
_LAMBDA_RETURNS_VMAP = (
    "for a batch [T, B], use episode_aware_q_lambda, or vmap it: "
    "jax.vmap(lambda_returns, in_axes=(1, 1, None, 1), out_axes=1) (None: a "
    "scalar λ)"
)


def gae(
    r_t: jax.Array,
    discount_t: jax.Array,
    lambda_t: jax.Array | float,
    v_tm1: jax.Array,
    v_t: jax.Array,
) -> jax.Array:
    """Generalised advantage estimates for one trajectory (Schulman et al., 2016).

    A_{t-1} = δ_t + discount_t λ_t A_t, with δ_t = r_t + discount_t v_t - v_{t-1}.
    See https://arxiv.org/abs/1506.02438.

    Episode ends inside the trajectory are handled by the caller's inputs:
    termination sets `discount_t = 0` (no bootstrap, no recursion past it);
    truncation keeps `discount_t = γ` with `v_t` the value of the final
    observation (bootstrap) but sets `lambda_t = 0` so the next episode's
    advantages do not leak backwards.

    Write for one stream; batch with
    `jax.vmap(gae, in_axes=(1, 1, None, 1, 1), out_axes=1)` (`None` for a
    scalar λ, 1 for λ [T, B]), or call `episode_aware_gae`.

    Args:
      r_t: rewards at times [1, T], float32 [T] (integer or low-precision
        rewards are promoted, with every input, to at least float32; lists
        are converted).
      discount_t: γ times the env discount at times [1, T], float32 [T].
      lambda_t: λ, a scalar or float32 [T] (0 where the episode was
        truncated; a list is converted).
      v_tm1: values of the source states at times [0, T-1], float32 [T].
      v_t: bootstrap values of the destination states at times [1, T], float32 [T]
        (ignored where discount_t is 0, even inf or NaN).

    Returns:
      Advantages at times [0, T-1], float32 [T] (the inputs' common float
      dtype, at least float32).

    Raises:
      ValueError: for an empty stream (T = 0), inputs that are not [T] of
        one shape (naming their shapes, and the vmap above for a batch), a
        λ that is neither a scalar nor [T], or a bool discount_t (done flags:
        pass gamma * (1 - done)).

    """
    r_t, discount_t, v_tm1, v_t = as_streams(
        "gae",
        {"r_t": r_t, "discount_t": discount_t, "v_tm1": v_tm1, "v_t": v_t},
        rank=1,
        batch_fix=_GAE_VMAP,
    )
    if r_t.shape[0] == 0:
        # Else a bare IndexError from deep inside: the scan's start reads a step.
        raise ValueError(
            f"gae needs a stream of T >= 1 steps, got r_t of shape "
            f"{r_t.shape}; pass at least one step."
        )
    lambda_t = lambda_stream("gae", lambda_t, r_t)
    # One float dtype, at least float32, for every input and the scan's carry:
    # integer rewards would truncate λ to 0 and bf16 ones mismatch the carry.
    dtype = jnp.result_type(r_t, discount_t, lambda_t, v_tm1, v_t, jnp.float32)
    r_t, discount_t, v_tm1, v_t = (
        x.astype(dtype) for x in (r_t, discount_t, v_tm1, v_t)
    )
    lambda_t = jnp.broadcast_to(jnp.asarray(lambda_t, dtype), r_t.shape)
    # `where`, not a product with 0: an inf or NaN bootstrap value at a
    # terminated step must not reach the return (0 * inf is NaN).
    v_t = jnp.where(discount_t == 0, 0.0, v_t)
    delta_t = r_t + discount_t * v_t - v_tm1

    def body(acc: jax.Array, xs: tuple[jax.Array, ...]) -> tuple[jax.Array, jax.Array]:
        delta, discount, lambda_ = xs
        acc = delta + discount * lambda_ * acc
        return acc, acc

    _, adv_tm1 = platform_scan(
        body,
        jnp.zeros_like(r_t[0]),
        (delta_t, discount_t, lambda_t),
        reverse=True,
        unroll=RECURSION_UNROLL,
    )
    return adv_tm1


def episode_aware_gae(
    r_t: jax.Array,
    discount_t: jax.Array,
    truncated_t: jax.Array,
    v_tm1: jax.Array,
    v_t: jax.Array,
    gamma: jax.Array | float,
    lambda_: jax.Array | float,
) -> tuple[jax.Array, jax.Array]:
    """GAE and value targets for a time-major batch `[T, B]` of auto-reset envs.

    Args:
      r_t: rewards, float32 [T, B].
      discount_t: env discounts (0 on termination), float32 [T, B].
      truncated_t: time-limit truncation flags, bool [T, B].
      v_tm1: values of the observations acted on, float32 [T, B].
      v_t: values of the final observations reached, float32 [T, B] (any
        value where the step terminated, inf or NaN included: it is ignored).
      gamma: the agent's discount γ.
      lambda_: the GAE λ.

    Returns:
      (advantages, value targets = advantages + v_tm1), each float32 [T, B].

    Raises:
      ValueError: for inputs that are not [T, B] of one shape (naming their
        shapes; one stream [T] goes to `gae`), an empty stream (T = 0), or a
        bool discount_t (done flags: pass 1.0 - done).

    """
    r_t, discount_t, truncated_t, v_tm1, v_t = as_streams(
        "episode_aware_gae",
        {
            "r_t": r_t,
            "discount_t": discount_t,
            "truncated_t": truncated_t,
            "v_tm1": v_tm1,
            "v_t": v_t,
        },  # fmt: skip
        rank=2,
        batch_fix="for one stream [T], call gae (or pass each as x[:, None])",
        gamma_apart=True,
    )
    lambda_t = lambda_ * (1.0 - truncated_t.astype(r_t.dtype))
    adv = jax.vmap(gae, in_axes=1, out_axes=1)(
        r_t, gamma * discount_t, lambda_t, v_tm1, v_t
    )
    return adv, adv + v_tm1


def lambda_returns(
    r_t: jax.Array,
    discount_t: jax.Array,
    lambda_t: jax.Array | float,
    v_t: jax.Array,
) -> jax.Array:
    """λ-returns for one trajectory; Peng's Q(λ) with v_t = max_a Q(x_t, a).

    G_{t-1} = r_t + discount_t [(1 - λ_t) v_t + λ_t G_t], and the last step
    bootstraps from its v alone (G_{T-1} = r_T + discount_T v_T). With
    v_t = max_a Q(x_t, a) these are the Q(λ) targets of Peng and Williams
    (1996) as PQN uses them (Gallici et al., 2025, arXiv:2407.04811).

    Episode ends inside the trajectory are handled by the caller's inputs, as
    for `gae`: termination sets `discount_t = 0` (the return is the reward
    alone, whatever else is set); truncation keeps `discount_t = γ` with `v_t`
    the value of the final observation (bootstrap) and sets `lambda_t = 0`, so
    the next episode's return does not leak backwards.

    Args:
      r_t: rewards at times [1, T], float32 [T] (integer or low-precision
        rewards are promoted, with every input, to at least float32; lists
        are converted).
      discount_t: γ times the env discount at times [1, T], float32 [T].
      lambda_t: λ, a scalar or float32 [T] (0 where the episode was
        truncated; a list is converted).
      v_t: bootstrap values of the destination states at times [1, T], float32 [T]
        (ignored where discount_t is 0, even inf or NaN).

    Returns:
      Returns at times [0, T-1], float32 [T] (the inputs' common float dtype,
      at least float32).

    Raises:
      ValueError: for an empty stream (T = 0), or inputs that are not [T] of
        one shape (naming their shapes, and how to batch them: `jax.vmap(
        lambda_returns, in_axes=(1, 1, None, 1), out_axes=1)` with a scalar
        λ, or `episode_aware_q_lambda`), a λ that is neither a scalar nor
        [T], or a bool discount_t (done flags: pass gamma * (1 - done)).

    """
    r_t, discount_t, v_t = as_streams(
        "lambda_returns",
        {"r_t": r_t, "discount_t": discount_t, "v_t": v_t},
        rank=1,
        batch_fix=_LAMBDA_RETURNS_VMAP,
    )
    if r_t.shape[0] == 0:
        # Else a bare IndexError from deep inside: the scan's start reads a step.
        raise ValueError(
            f"lambda_returns needs a stream of T >= 1 steps, got r_t of shape "
            f"{r_t.shape}; pass at least one step."
        )
    lambda_t = lambda_stream("lambda_returns", lambda_t, r_t)
    # One float dtype, at least float32, as in `gae`.
    dtype = jnp.result_type(r_t, discount_t, lambda_t, v_t, jnp.float32)
    r_t, discount_t, v_t = (x.astype(dtype) for x in (r_t, discount_t, v_t))
    lambda_t = jnp.broadcast_to(jnp.asarray(lambda_t, dtype), r_t.shape)
    # `where`, not a product with 0, as in `gae`: inf or NaN at a terminated
    # step must not reach the returns.
    v_t = jnp.where(discount_t == 0, 0.0, v_t)

    def body(acc: jax.Array, xs: tuple[jax.Array, ...]) -> tuple[jax.Array, jax.Array]:
        r, discount, lambda_, v = xs
        acc = r + discount * ((1.0 - lambda_) * v + lambda_ * acc)
        return acc, acc

    # Starting from v_T makes the last step's return r_T + discount_T v_T
    # whatever its λ.
    _, g_tm1 = platform_scan(
        body,
        v_t[-1],
        (r_t, discount_t, lambda_t, v_t),
        reverse=True,
        unroll=RECURSION_UNROLL,
    )
    return g_tm1


def episode_aware_q_lambda(
    r_t: jax.Array,
    discount_t: jax.Array,
    truncated_t: jax.Array,
    max_q_t: jax.Array,
    gamma: jax.Array | float,
    lambda_: jax.Array | float,
) -> jax.Array:
    """Peng's Q(λ) targets for a time-major batch `[T, B]` of auto-reset envs.

    A time limit bootstraps from max_a Q of the true final observation and cuts
    the λ-recursion there; a termination ends the return at its reward, even
    when the time limit fires on the same step. The peers' PQN (purejaxql,
    Stoix, rejax) end the return at any `done`, truncations included.

    Args:
      r_t: rewards, float32 [T, B].
      discount_t: env discounts (0 on termination), float32 [T, B].
      truncated_t: time-limit truncation flags, bool [T, B].
      max_q_t: max_a Q(x, a) of each step's final observation, float32 [T, B]
        (any value where the step terminated, inf or NaN included: it is
        ignored).
      gamma: the agent's discount γ.
      lambda_: the Q(λ) λ.

    Returns:
      Q(λ) targets of the actions taken, float32 [T, B].

    Raises:
      ValueError: for inputs that are not [T, B] of one shape (naming their
        shapes; one stream [T] goes to `lambda_returns`), an empty stream, or
        a bool discount_t (done flags: pass 1.0 - done).

    """
    r_t, discount_t, truncated_t, max_q_t = as_streams(
        "episode_aware_q_lambda",
        {
            "r_t": r_t,
            "discount_t": discount_t,
            "truncated_t": truncated_t,
            "max_q_t": max_q_t,
        },  # fmt: skip
        rank=2,
        batch_fix="for one stream [T], call lambda_returns (or pass each as "
        "x[:, None])",
        gamma_apart=True,
    )
    lambda_t = lambda_ * (1.0 - truncated_t.astype(r_t.dtype))
    return jax.vmap(lambda_returns, in_axes=1, out_axes=1)(
        r_t, gamma * discount_t, lambda_t, max_q_t
    )
