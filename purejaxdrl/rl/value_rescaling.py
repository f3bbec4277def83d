"""R2D2's invertible value rescaling h and its inverse.

Pohlen et al. (2018), "Observe and Look Further", https://arxiv.org/abs/1805.11593;
used by R2D2 (Kapturowski et al., 2019) in place of reward clipping: the
network learns h(Q), whose scale grows like sqrt(|Q|), and targets are
h(r + γ^n h^-1(Q')).
"""

import jax
import jax.numpy as jnp


def rescale(x: jax.Array, eps: float | jax.Array = 1e-3) -> jax.Array:
    """h(x) = sign(x) (sqrt(|x| + 1) - 1) + eps x."""
    return jnp.sign(x) * (jnp.sqrt(jnp.abs(x) + 1.0) - 1.0) + eps * x


def unscale(y: jax.Array, eps: float | jax.Array = 1e-3) -> jax.Array:
    """h^-1(y): the root of h(x) = y (Pohlen et al., 2018, proposition A.2).

    With u = sqrt(|x| + 1), h(x) = y is eps u^2 + u - (1 + eps + |y|) = 0 on
    the side of sign(y), whose positive root gives
    h^-1(y) = sign(y) (((sqrt(1 + 4 eps (|y| + 1 + eps)) - 1) / (2 eps))^2 - 1).
    The root is computed as 2 c / (sqrt(1 + 4 eps c) + 1), c = |y| + 1 + eps,
    the same number without the cancellation of sqrt(1 + a) - 1 in float32.
    """
    c = jnp.abs(y) + 1.0 + eps
    u = 2.0 * c / (jnp.sqrt(1.0 + 4.0 * eps * c) + 1.0)
    return jnp.sign(y) * (u * u - 1.0)
