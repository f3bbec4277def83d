"""Action distributions as bundles of pure functions over their parameters."""

import math
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.types import PRNGKey

# Bounds of the Gaussian's log standard deviation: below, the policy collapses and
# log-probs explode; above, exploration is noise.
LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0

# Gauss-Hermite rule for E[g(u)], u ~ N(μ, σ²): Σ_i w_i g(μ + √2 σ x_i) / √π.
# 32 nodes keep the tanh-Gaussian entropy within 3e-5 nats per action dimension
# for σ <= e^0.5 and 1.5e-3 at σ = e (0.08 at the bound σ = e^2, where the
# integrand's bend at 0 is narrow next to the nodes' spacing).
_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite.hermgauss(32)
_GH_NODES = (math.sqrt(2.0) * _GH_NODES).astype(np.float32)
_GH_WEIGHTS = (_GH_WEIGHTS / math.sqrt(math.pi)).astype(np.float32)


class Distribution(NamedTuple):
    """Functions of a policy head's output `params` (cf. distrax, functional).

    `sample` returns what the agent stores (for tanh-Gaussians the pre-squash
    sample u); `to_env` maps it to the env action; `log_prob` and `entropy` are of
    the distribution over what `to_env` returns.
    """

    sample: Callable[[jax.Array, PRNGKey], jax.Array]
    log_prob: Callable[[jax.Array, jax.Array], jax.Array]
    entropy: Callable[[jax.Array, PRNGKey], jax.Array]
    mode: Callable[[jax.Array], jax.Array]
    to_env: Callable[[jax.Array], jax.Array]


def _categorical_sample(logits: jax.Array, key: PRNGKey) -> jax.Array:
    return jax.random.categorical(key, logits).astype(jnp.int32)


def _categorical_log_prob(logits: jax.Array, action: jax.Array) -> jax.Array:
    logp = jax.nn.log_softmax(logits)
    return jnp.take_along_axis(logp, action[..., None], axis=-1)[..., 0]


def _categorical_entropy(logits: jax.Array, key: PRNGKey | None = None) -> jax.Array:
    del key
    logp = jax.nn.log_softmax(logits)
    p = jnp.exp(logp)
    # p log p is 0 where p is 0 (a masked, -inf logit), but exp(-inf) * -inf is
    # NaN. The log is replaced before the product, not the product after it: a
    # `where` around the product would still send 0 * -inf = NaN back through
    # the product's gradient.
    safe_logp = jnp.where(p > 0.0, logp, 0.0)
    return -jnp.sum(p * safe_logp, axis=-1)


def mask_logits(logits: jax.Array, legal: jax.Array) -> jax.Array:
    """`logits` with the illegal actions' set to -inf: what a categorical can't draw.

    A row with no legal action is left as it is: -inf everywhere would make
    log-softmax NaN, and such a row (say an environment's terminal observation)
    has no action to choose anyway.

    Args:
      logits: unnormalised log-probabilities (or Q-values), float32 [..., A].
      legal: which actions are legal, bool [..., A].

    Returns:
      float32 [..., A]; `sample`, `mode`, `log_prob` and `entropy` of
      `categorical()` then act on the legal actions only.

    """
    legal = jnp.logical_or(legal, ~jnp.any(legal, axis=-1, keepdims=True))
    return jnp.where(legal, logits, -jnp.inf)


def categorical() -> Distribution:
    """Categorical over the last axis of `logits` [..., A]; actions int32 [...]."""
    return Distribution(
        sample=_categorical_sample,
        log_prob=_categorical_log_prob,
        entropy=_categorical_entropy,
        mode=lambda logits: jnp.argmax(logits, axis=-1).astype(jnp.int32),
        to_env=lambda action: action,
    )


def _split(params: jax.Array) -> tuple[jax.Array, jax.Array]:
    mean, raw_log_std = jnp.split(params, 2, axis=-1)
    # A smooth squash into [LOG_STD_MIN, LOG_STD_MAX] keeps gradients everywhere.
    log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (
        jnp.tanh(raw_log_std) + 1.0
    )
    return mean, log_std


def _tanh_log_det_jacobian(u: jax.Array) -> jax.Array:
    # log(1 - tanh(u)^2) = 2 (log 2 - u - softplus(-2u)), stable for large |u|.
    return 2.0 * (math.log(2.0) - u - jax.nn.softplus(-2.0 * u))


def _gaussian_log_prob(mean: jax.Array, log_std: jax.Array, u: jax.Array) -> jax.Array:
    z = (u - mean) * jnp.exp(-log_std)
    return -0.5 * jnp.square(z) - log_std - 0.5 * math.log(2.0 * math.pi)


def _tanh_gaussian_sample(params: jax.Array, key: PRNGKey) -> jax.Array:
    mean, log_std = _split(params)
    return mean + jnp.exp(log_std) * jax.random.normal(key, mean.shape, mean.dtype)


def _tanh_gaussian_log_prob(params: jax.Array, u: jax.Array) -> jax.Array:
    # Density of a = tanh(u) evaluated through the pre-squash sample u: never
    # through atanh(a), which is infinite at |a| = 1 in float32.
    mean, log_std = _split(params)
    logp = _gaussian_log_prob(mean, log_std, u) - _tanh_log_det_jacobian(u)
    return jnp.sum(logp, axis=-1)


def _tanh_gaussian_entropy(params: jax.Array, key: PRNGKey | None = None) -> jax.Array:
    # No closed form after the squash: H = H(N(μ, σ²)) - E[log|det J|], the
    # expectation by Gauss-Hermite quadrature per action dimension. Sampling it
    # (brax's one-sample estimate) made the entropy depend on the key's draws
    # over the local batch, so on how a batch is split across devices; the
    # quadrature is deterministic, so `key` is unused (kept for
    # `Distribution.entropy`'s signature).
    del key
    mean, log_std = _split(params)
    u = mean[..., None] + jnp.exp(log_std)[..., None] * _GH_NODES
    expected_log_det = jnp.sum(_GH_WEIGHTS * _tanh_log_det_jacobian(u), axis=-1)
    gaussian = 0.5 + 0.5 * math.log(2.0 * math.pi) + log_std
    return jnp.sum(gaussian + expected_log_det, axis=-1)


def tanh_gaussian() -> Distribution:
    """Diagonal Gaussian squashed by tanh; `params` [..., 2A] = (mean, raw log-std).

    `entropy` is that of the squashed actions a = tanh(u), u ~ N(μ, σ²):
    Σ_d [½ log(2πe σ_d²) + E[log(1 - tanh(u_d)²)]], the expectation by a
    32-node Gauss-Hermite rule (deterministic, differentiable, key unused).
    `mode` is μ, the pre-squash mode; `to_env(mode)` = tanh(μ) (the squashed
    actions' median) is what evaluation and exported policies act with.
    """
    return Distribution(
        sample=_tanh_gaussian_sample,
        log_prob=_tanh_gaussian_log_prob,
        entropy=_tanh_gaussian_entropy,
        mode=lambda params: _split(params)[0],
        to_env=jnp.tanh,
    )
