"""Dense layers' matmul, with a weight gradient that XLA:CPU runs packed.

XLA:CPU hands a dot to its packed library kernels (YNNPACK) only when the
left operand is contracted along its minor dimension. A dense layer's weight
gradient, xᵀg, contracts the batch, which is x's major dimension, so XLA
runs it with its generic Eigen kernel: in PPO's update on Playground's
4 x 32 networks over 960-sample minibatches those dots took as long as all
the forward and input-gradient dots together (55 ms of an update's 186 ms of
kernels). Here, on CPU, x is first transposed into a buffer of its own (an
optimisation barrier keeps XLA from folding the transpose back into the
dot), and xᵀg becomes a packed dot. On GPUs and TPUs, whose matmuls read
transposed operands natively, the gradient is autodiff's own
(`lax.platform_dependent` picks per backend when the program is lowered).
The forward pass and the input gradient are plain `x @ w` on every backend;
only the order of the weight gradient's sums can differ.

The cost: `matmul` is a `jax.custom_vjp`, which JAX differentiates in reverse
mode only. `jax.grad`, `jax.vjp`, `jax.jacrev` and reverse over reverse
(`jax.hessian`, grad of grad) work; forward mode (`jax.jvp`, `jax.jacfwd`,
`jax.linearize`) raises "can't apply forward-mode autodiff (jvp) to a
custom_vjp function". So does every network, since every dense layer uses
it: take Hessian- or Fisher-vector products (TRPO's) by reverse over reverse,
`jax.grad(lambda p: jnp.vdot(jax.grad(f)(p), v))`. A `custom_jvp` would allow
both modes, but its transpose is autodiff's, which loses the packed dot.
"""

from typing import Any

import jax
from jax import lax


@jax.custom_vjp
def matmul(x: jax.Array, w: jax.Array) -> jax.Array:
    """`x [..., n] @ w [n, m]`, with the weight gradient described above."""
    return x @ w


def _forward(x: jax.Array, w: jax.Array) -> tuple[jax.Array, tuple]:
    return x @ w, (x, w)


def _backward(residuals: tuple, g: jax.Array) -> tuple[jax.Array, jax.Array]:
    x, w = residuals
    # Through jax.vjp, not written out: autodiff sums a gradient over the
    # devices of a shard_map where the primal is replicated and g is not.
    dx = jax.vjp(lambda x: x @ w, x)[1](g)[0]

    def packed(x: jax.Array, g: jax.Array) -> jax.Array:
        xt = lax.optimization_barrier(x.reshape(-1, x.shape[-1]).T)
        return jax.vjp(lambda w: xt.T @ w, w)[1](g.reshape(-1, g.shape[-1]))[0]

    def native(x: jax.Array, g: jax.Array) -> jax.Array:
        return jax.vjp(lambda w: x @ w, w)[1](g)[0]

    dw = lax.platform_dependent(x, g, cpu=packed, default=native)
    return dx, dw


matmul.defvjp(_forward, _backward)


def dot_general(
    lhs: jax.Array,
    rhs: jax.Array,
    dimension_numbers: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> jax.Array:
    """`lax.dot_general` as `nn.Dense` calls it: `matmul` where it applies.

    That is a dense layer's product, `lhs [..., n]` contracted with a matrix
    `rhs [n, m]` at default precision; anything else goes to `lax.dot_general`.
    """
    dense = (((lhs.ndim - 1,), (0,)), ((), ()))
    default = precision is None and preferred_element_type is None
    if rhs.ndim == 2 and dimension_numbers == dense and default:
        return matmul(lhs, rhs)
    return lax.dot_general(
        lhs,
        rhs,
        dimension_numbers,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
