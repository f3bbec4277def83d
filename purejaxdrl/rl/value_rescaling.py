"""R2D2's invertible value rescaling h and its inverse.

Pohlen et al. (2018), "Observe and Look Further", https://arxiv.org/abs/1805.11593;
used by R2D2 (Kapturowski et al., 2019) in place of reward clipping: the
network learns h(Q), whose scale grows like sqrt(|Q|), and targets are
h(r + γ^n h^-1(Q')).
"""

import jax
import jax.numpy as jnp


def rescale(x: jax.Array, eps: float | jax.Array = 1e-3) -> jax.Array:
    """h(x) = sign(x) (sqrt(|x| + 1) - 1) + eps x.

    sqrt(|x| + 1) - 1 is computed as |x| / (sqrt(|x| + 1) + 1): the same number
    without the cancellation that loses most of its digits in float32 near 0.
    """
    a = jnp.abs(x)
    return jnp.sign(x) * (a / (jnp.sqrt(a + 1.0) + 1.0)) + eps * x


def unscale(y: jax.Array, eps: float | jax.Array = 1e-3) -> jax.Array:
    """h^-1(y): the root of h(x) = y (Pohlen et al., 2018, proposition A.2).

    With u = sqrt(|x| + 1), h(x) = y is eps u^2 + u - (1 + eps + |y|) = 0 on
    the side of sign(y), whose positive root gives
    h^-1(y) = sign(y) (((sqrt(1 + 4 eps (|y| + 1 + eps)) - 1) / (2 eps))^2 - 1).
    The root is u = 2 c / (s + 1), c = |y| + 1 + eps, s = sqrt(1 + 4 eps c),
    and h^-1(y) = sign(y) (u - 1) (u + 1) with
    u - 1 = (2 c - 1 - s) / (s + 1) = 4 c |y| / ((2 c - 1 + s) (s + 1)):
    the same numbers without the cancellations of sqrt(1 + a) - 1 and
    u^2 - 1, which lose most of their digits in float32 near 0.
    """
    a = jnp.abs(y)
    c = a + 1.0 + eps
    s = jnp.sqrt(1.0 + 4.0 * eps * c)
    u_minus_1 = 4.0 * c * a / ((2.0 * c - 1.0 + s) * (s + 1.0))
    return jnp.sign(y) * u_minus_1 * (u_minus_1 + 2.0)
