"""REINFORCE with a learned baseline: the module of the "Adding an algorithm" guide.

Williams (1992), "Simple statistical gradient-following algorithms for
connectionist reinforcement learning"; the baseline as in Sutton et al.
(2000). Each update takes one gradient step on the batch: the policy gradient
of the returns minus the baseline V(s), plus V's squared error. Returns are
discounted to the end of the unroll and bootstrapped there (and through time
limits) from V: `gae_targets` with λ = 1.

Saved anywhere as `reinforce.py`, importing it registers `--algo reinforce`
(its last line); `tests/agents/test_example_algorithm.py` imports this very
file and trains it on CartPole, from Python and from the command line.
"""

import dataclasses
import functools

import jax
import jax.numpy as jnp

from purejaxdrl.agents import (
    Agent,
    AgentState,
    Algorithm,
    OptimizerFields,
    RewardFields,
    RunShape,
    actor_critic_acting,
    actor_critic_networks,
    annealed_learning_rate,
    check_agent_args,
    flat_gradient_step,
    flat_optimizer_state,
    gae_targets,
    learner_outputs,
    make_learner_optimizer,
    register,
)
from purejaxdrl.config import check_ranges
from purejaxdrl.networks import Network
from purejaxdrl.types import Metrics, Params, PRNGKey, Transition


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class ReinforceConfig(RewardFields, OptimizerFields):
    """REINFORCE's hyper-parameters (learning rate, γ, clipping: the groups').

    Attributes:
      baseline_cost: weight of the baseline's loss 0.5 (G - V(s))².
      reward_clip: rewards (after scaling) are clipped to [-c, c]; 0: not.
      gae_lambda: 1: REINFORCE's returns (to the end of the unroll).

    """

    learning_rate: float | jax.Array = 1e-3
    baseline_cost: float | jax.Array = 0.5
    reward_clip: float | jax.Array = 0.0
    gae_lambda: float | jax.Array = 1.0


def loss(
    params: Params,
    traj: Transition,
    advantage: jax.Array,
    target: jax.Array,
    key: PRNGKey,
    *,
    network: Network,
    config: ReinforceConfig,
) -> tuple[jax.Array, Metrics]:
    """-E[log π(a|s) (G - V(s))] + c 0.5 (G - V(s))², over the batch [T, B]."""
    del key  # nothing sampled
    policy, value = learner_outputs(network, params, traj)
    log_prob = network.distribution.log_prob(policy, traj.action)
    policy_loss = -jnp.mean(log_prob * jax.lax.stop_gradient(advantage))
    baseline_loss = 0.5 * jnp.mean(jnp.square(target - value))
    total = policy_loss + config.baseline_cost * baseline_loss
    return total, {"loss/policy": policy_loss, "loss/baseline": baseline_loss}


def make_reinforce(
    config: ReinforceConfig, network: Network, obs_example: jax.Array, run: RunShape
) -> Agent:
    """Builds REINFORCE (an `AgentFactory`): one gradient step per batch."""
    check_agent_args(validate, config, run)
    axis_name = run.axis_name
    learning_rate = annealed_learning_rate(
        config.learning_rate, num_updates=run.num_updates, anneal=config.anneal_lr
    )
    optimizer = make_learner_optimizer(
        learning_rate, max_grad_norm=config.max_grad_norm
    )
    objective = functools.partial(loss, network=network, config=config)

    def init(key: PRNGKey) -> AgentState:
        params = network.init(key, obs_example)
        opt_state = flat_optimizer_state(optimizer, params)
        return AgentState(params, opt_state, jnp.zeros((), jnp.int32))

    def update(
        state: AgentState, traj: Transition, key: PRNGKey
    ) -> tuple[AgentState, Metrics]:
        # The actors act with the current parameters: their values are V(s).
        advantage, target = gae_targets(traj, config)
        return flat_gradient_step(
            objective,
            optimizer,
            state,
            traj,
            advantage,
            target,
            key,
            axis_name=axis_name,
        )

    acting = actor_critic_acting(network)
    return Agent(init=init, acting=acting, update=update, axis_name=axis_name)


def validate(config: ReinforceConfig, shape: RunShape | None = None) -> None:
    """REINFORCE's range rules (any run shape fits it).

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    del shape
    check_ranges(
        "reinforce",
        config,
        positive=("learning_rate", "max_grad_norm", "reward_scale"),
        non_negative=("baseline_cost", "reward_clip"),
        unit=("gamma", "gae_lambda"),
    )


ALGORITHM = Algorithm(
    name="reinforce",
    summary="REINFORCE with a learned baseline, one step per batch",
    config_type=ReinforceConfig,
    make_agent=make_reinforce,
    make_networks=actor_critic_networks,
    validate=validate,
)

# Importing this module registers it: `--algo reinforce` (with `--env.imports
# reinforce` on the command line), and `algo="reinforce"` from Python.
register(ALGORITHM)
