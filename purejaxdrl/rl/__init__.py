"""RL math: returns, V-trace, losses, distributions, bootstrap values."""

from purejaxdrl.rl.bootstrap import bootstrap_values
from purejaxdrl.rl.distributions import Distribution, categorical, tanh_gaussian
from purejaxdrl.rl.losses import (
    actor_critic_loss,
    clipped_surrogate_loss,
    normalize_advantages,
    policy_gradient_loss,
    value_loss,
)
from purejaxdrl.rl.returns import episode_aware_gae, gae
from purejaxdrl.rl.vtrace import VTraceOutput, vtrace

__all__ = [
    "Distribution",
    "VTraceOutput",
    "actor_critic_loss",
    "bootstrap_values",
    "categorical",
    "clipped_surrogate_loss",
    "episode_aware_gae",
    "gae",
    "normalize_advantages",
    "policy_gradient_loss",
    "tanh_gaussian",
    "value_loss",
    "vtrace",
]
