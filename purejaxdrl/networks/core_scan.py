"""A core's recurrence over a sequence, with a hand-written backward pass.

Reverse-mode differentiation of a `lax.scan` that closes over the recurrent
kernel U [H, G*H] adds a whole [H, G*H] gradient into its carry at every step:
on a CPU, for small batches, that memory traffic is most of a recurrent
learner's time. Here the backward scan carries only the state's cotangents
and emits the gates' pre-activation cotangents dA_t; U's gradient is then one
matmul over all T x B rows, sum_t h_t^T dA_t.
`tests/networks/test_recurrent_networks.py` checks values and gradients
against plain autodiff of `Core.step`. Being a `jax.custom_vjp`, the scan is
differentiable in reverse mode only: `jax.jvp` and `jax.jacfwd` raise on it.

The scans (`scans.platform_scan`) unroll 4 steps on GPUs and TPUs, none on CPUs. Each
step is a few small matmuls, far too little to fill a GPU, so there a step's
cost is kernel launches and loop overhead, which unrolling shares out. On one
NVIDIA H200, masked-CartPole GRU PPO with 512 envs x 32 steps trains at 1.58M
steps/s not unrolled, 2.33M unrolled 4, 2.44M unrolled 16 and 2.70M unrolled
fully (feed-forward: 6.6M); 4 keeps its compile under 9 s, 16 took 13 s. On a
CPU an unroll of 4 was no faster and a full unroll 2x slower.

A forward-only scan (no gradient: R2D2's target network, the LSTM's states
for bootstrap values) reads each step's inputs from its carry on a CPU
(`scans.prefetch_scan`): there XLA fuses a scan's slice of its inputs into the
step's sigmoids and tanh, and such a fusion is not vectorised.
"""

import functools

import jax
import jax.numpy as jnp

from purejaxdrl.scans import platform_scan
from purejaxdrl.types import PyTree

_sigmoid = jax.nn.sigmoid


def core_step(
    kind: str,
    u: jax.Array,
    bias_n: jax.Array,
    state: PyTree,
    x: jax.Array,
    reset: jax.Array,
) -> tuple[PyTree, jax.Array]:
    """One step of the core `kind` for B sequences (`Core.step`'s equations).

    Args:
      kind: `lstm` or `gru`.
      u: the recurrent kernel, [H, G*H].
      bias_n: the GRU's new-gate recurrent bias [H] (unused by the LSTM).
      state: leaves [B, H]; zeroed where `reset` before it is used.
      x: the input's projection (`Core.project`), [B, G*H].
      reset: bool [B].

    Returns:
      (the new state, the output h [B, H]).

    """
    if kind == "gru":
        new, _ = _gru_forward(u, bias_n, state, x, reset)
        return new, new
    (c, h), _ = _lstm_forward(u, *state, x, reset)
    return (c, h), h


def _gru_forward(u, bias_n, h, x, reset):
    # One GRU step, returning what the backward pass needs.
    h = jnp.where(reset[:, None], 0.0, h)
    size = h.shape[-1]
    g = h @ u
    r = _sigmoid(x[:, :size] + g[:, :size])
    z = _sigmoid(x[:, size : 2 * size] + g[:, size : 2 * size])
    hn = g[:, 2 * size :] + bias_n
    n = jnp.tanh(x[:, 2 * size :] + r * hn)
    new = (1.0 - z) * n + z * h
    return new, (h, r, z, n, hn)


def _gru_backward(u, saved, dh_new):
    h, r, z, n, hn = saved
    dn = dh_new * (1.0 - z) * (1.0 - n * n)
    dz = dh_new * (h - n) * z * (1.0 - z)
    dr = dn * hn * r * (1.0 - r)
    d_g = jnp.concatenate([dr, dz, dn * r], axis=-1)  # cotangent of h @ u
    d_x = jnp.concatenate([dr, dz, dn], axis=-1)
    dh = dh_new * z + d_g @ u.T
    return dh, d_x, d_g, (dn * r).sum(0)


def _lstm_forward(u, c, h, x, reset):
    c = jnp.where(reset[:, None], 0.0, c)
    h = jnp.where(reset[:, None], 0.0, h)
    i, f, g, o = jnp.split(x + h @ u, 4, axis=-1)
    i, f, g, o = _sigmoid(i), _sigmoid(f), jnp.tanh(g), _sigmoid(o)
    c_new = f * c + i * g
    tc = jnp.tanh(c_new)
    return (c_new, o * tc), (c, h, i, f, g, o, tc)


def _lstm_backward(u, saved, dc_new, dh_new):
    c, h, i, f, g, o, tc = saved
    dc = dc_new + dh_new * o * (1.0 - tc * tc)
    d_a = jnp.concatenate(
        [
            dc * g * i * (1.0 - i),
            dc * c * f * (1.0 - f),
            dc * i * (1.0 - g * g),
            dh_new * tc * o * (1.0 - o),
        ],
        axis=-1,
    )
    return dc * f, d_a @ u.T, d_a


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def core_scan(
    kind: str,
    u: jax.Array,
    bias_n: jax.Array,
    state: PyTree,
    x: jax.Array,
    reset: jax.Array,
) -> tuple[PyTree, jax.Array]:
    """Runs the core `kind` over a sequence: `core_step` scanned over T.

    Args as `core_step`'s, with a leading time axis on the inputs' projections
    `x` [T, B, G*H] and on `reset` [T, B] (the state is zeroed before step t
    where True); `state` is the start state.

    Returns:
      (the final state, the outputs h [T, B, H]).

    """

    # Without a gradient (the backward pass below uses `_fwd`), nothing but
    # the outputs is kept.
    def step(carry: PyTree, xs: tuple) -> tuple[PyTree, jax.Array]:
        return core_step(kind, u, bias_n, carry, *xs)

    return platform_scan(step, state, (x, reset), prefetch=True)


def _scan_forward(kind, u, bias_n, state, x, reset):
    if kind == "gru":

        def step(h, xs):
            new, saved = _gru_forward(u, bias_n, h, *xs)
            return new, (new, saved)

    else:

        def step(carry, xs):
            (c, h), saved = _lstm_forward(u, *carry, *xs)
            return (c, h), (h, saved)

    final, (outputs, saved) = platform_scan(step, state, (x, reset))
    return (final, outputs), saved


def _fwd(kind, u, bias_n, state, x, reset):
    out, saved = _scan_forward(kind, u, bias_n, state, x, reset)
    # state and an empty slice of x: only their types, for `_like` below.
    return out, (u, bias_n, saved, reset, state, x[:0])


def _like(cotangent: jax.Array, primal: jax.Array) -> jax.Array:
    # Inside shard_map a cotangent computed from per-device data varies over
    # axes its primal (replicated parameters) does not: sum it over them, as
    # autodiff's transpose of the implicit broadcast does.
    extra = jax.typeof(cotangent).mat.varying - jax.typeof(primal).mat.varying
    return jax.lax.psum(cotangent, tuple(extra)) if extra else cotangent


def _bwd(kind, residuals, cotangents):
    u, bias_n, saved, reset, state, x_type = residuals
    d_final, d_outputs = cotangents

    if kind == "gru":

        def step(dh, xs):
            saved_t, dy, reset_t = xs
            dh, d_x, d_g, d_bias = _gru_backward(u, saved_t, dh + dy)
            # The step zeroed the state where reset: no gradient flows back.
            return jnp.where(reset_t[:, None], 0.0, dh), (d_x, d_g, d_bias)

        d_start, (d_x, d_g, d_bias) = platform_scan(
            step, d_final, (saved, d_outputs, reset), reverse=True
        )
        h_used = saved[0]
        d_bias_n = d_bias.sum(0)
    else:

        def step(carry, xs):
            dc, dh = carry
            saved_t, dy, reset_t = xs
            dc, dh, d_a = _lstm_backward(u, saved_t, dc, dh + dy)
            keep = ~reset_t[:, None]
            return (jnp.where(keep, dc, 0.0), jnp.where(keep, dh, 0.0)), d_a

        d_start, d_x = platform_scan(
            step, d_final, (saved, d_outputs, reset), reverse=True
        )
        d_g = d_x
        h_used = saved[1]
        d_bias_n = jnp.zeros_like(bias_n)
    # U's gradient in one matmul over every step and sequence.
    d_u = jnp.einsum("tbh,tbg->hg", h_used, d_g)
    d_start = jax.tree.map(_like, d_start, state)
    return (
        _like(d_u, u),
        _like(d_bias_n, bias_n),
        d_start,
        _like(d_x, x_type),
        None,
    )


core_scan.defvjp(_fwd, _bwd)
