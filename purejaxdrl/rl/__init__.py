"""RL math on ONE stream of experience: returns, V-trace, losses, exploration.

Each function takes time-major `[T]` (or flat `[N]`) arrays and is batched
with `vmap` at its call site: `returns` (GAE, λ-returns, Peng's Q(λ)),
`vtrace`, `nstep` (`n_step_targets`), `bootstrap`, `losses`, `distributions`,
`exploration`, `value_rescaling` (R2D2's h and its inverse); `streams`
converts the estimators' inputs and checks their layout and discounts. Pure
functions of arrays; imports only `types` and `scans` (the recursions' loops,
unrolled off CPU).
"""

from purejaxdrl.rl.bootstrap import bootstrap_values
from purejaxdrl.rl.distributions import (
    Distribution,
    categorical,
    mask_logits,
    tanh_gaussian,
)
from purejaxdrl.rl.exploration import actor_epsilons, epsilon_greedy
from purejaxdrl.rl.losses import (
    actor_critic_loss,
    clipped_surrogate_loss,
    normalize_advantages,
    policy_gradient_loss,
    value_loss,
)
from purejaxdrl.rl.nstep import n_step_targets
from purejaxdrl.rl.returns import (
    episode_aware_gae,
    episode_aware_q_lambda,
    gae,
    lambda_returns,
)
from purejaxdrl.rl.vtrace import VTraceOutput, vtrace

__all__ = [
    "Distribution",
    "VTraceOutput",
    "actor_critic_loss",
    "actor_epsilons",
    "bootstrap_values",
    "categorical",
    "clipped_surrogate_loss",
    "episode_aware_gae",
    "episode_aware_q_lambda",
    "epsilon_greedy",
    "gae",
    "lambda_returns",
    "mask_logits",
    "n_step_targets",
    "normalize_advantages",
    "policy_gradient_loss",
    "tanh_gaussian",
    "value_loss",
    "vtrace",
]
