"""RL math on one stream of experience: returns, losses, distributions."""

from purejaxdrl.rl.distributions import Distribution, categorical, tanh_gaussian
from purejaxdrl.rl.losses import (
    clipped_surrogate_loss,
    normalize_advantages,
    value_loss,
)
from purejaxdrl.rl.returns import episode_aware_gae, gae

__all__ = [
    "Distribution",
    "categorical",
    "clipped_surrogate_loss",
    "episode_aware_gae",
    "gae",
    "normalize_advantages",
    "tanh_gaussian",
    "value_loss",
]
