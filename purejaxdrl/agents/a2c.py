"""A2C: synchronous advantage actor-critic (the synchronous form of A3C).

Mnih et al. (2016), "Asynchronous Methods for Deep Reinforcement Learning",
https://arxiv.org/abs/1602.01783. The asynchronous actor-learners of A3C become
one batch of environments stepped in lockstep; each update is one gradient step
on the whole batch, with n-step (λ = 1) or GAE advantages from the values the
actors computed with the same, current parameters.
"""

import dataclasses
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree

from purejaxdrl.agents.actor_critic import actor_critic_acting, learner_outputs
from purejaxdrl.agents.base import Agent, AgentState, Algorithm, RunShape
from purejaxdrl.agents.common import (
    actor_critic_networks,
    annealed_learning_rate,
    check_optimizer,
    flat_gradient_step,
    learning_rewards,
    make_optimizer,
)
from purejaxdrl.agents.fields import (
    ActorCriticFields,
    AdvantageFields,
    OptimizerChoiceFields,
)
from purejaxdrl.config import check_ranges
from purejaxdrl.networks import Network
from purejaxdrl.rl.losses import actor_critic_loss, normalize_advantages
from purejaxdrl.rl.returns import episode_aware_gae
from purejaxdrl.types import Metrics, PRNGKey, Transition


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class A2CConfig(OptimizerChoiceFields, AdvantageFields, ActorCriticFields):
    """A2C hyper-parameters: all of them shared with other learners.

    Static fields change program structure (changing them recompiles); the
    others are array leaves that can be traced, vmapped and swept. Each is
    declared and described in `agents.fields` (`ActorCriticFields`,
    `AdvantageFields`, `OptimizerChoiceFields`), and `purejaxdrl train --algo
    a2c --help` lists them all; below are A2C's defaults where they differ
    from the groups' (λ = 1: A3C's n-step returns).
    """

    # Static.
    normalize_advantages: bool = jax.tree.static(default=False)
    # Dynamic.
    learning_rate: float | jax.Array = 7e-4
    gae_lambda: float | jax.Array = 1.0


_METRIC_NAMES = ("loss/total", "loss/policy", "loss/value", "entropy")


def make_a2c(
    config: A2CConfig,
    network: Network,
    obs_example: jax.Array,
    *,
    num_updates: int,
    axis_name: str | None = None,
) -> Agent:
    """Builds A2C: one on-policy gradient step per batch, no clipping.

    Advantages and value targets come from `episode_aware_gae` on the values
    stored with the transitions (on-policy: the actors act with the learner's
    current parameters), so truncated episodes bootstrap from their final
    observations. The loss is `actor_critic_loss`: policy gradient, value loss
    and entropy bonus (Mnih et al., 2016).

    Args:
      config: hyper-parameters.
      network: actor-critic network.
      obs_example: one observation (unbatched), to initialise parameters.
      num_updates: total number of `update` calls, for learning-rate annealing.
      axis_name: mesh axis over which `update` averages gradients and metrics
        (and normalises advantages); None on one device.

    Returns:
      The Agent (state: AgentState).

    Raises:
      ValueError: for an unknown optimiser or num_updates < 1.

    """
    validate(config)
    if num_updates < 1:
        raise ValueError(f"num_updates={num_updates} must be >= 1.")
    dist = network.distribution
    acting = actor_critic_acting(network)
    learning_rate = annealed_learning_rate(
        config.learning_rate, num_updates=num_updates, anneal=config.anneal_lr
    )
    optimizer = make_optimizer(
        config.optimizer,
        learning_rate,
        max_grad_norm=config.max_grad_norm,
        eps=config.eps,
        decay=config.rms_decay,
    )

    def init(key: PRNGKey) -> AgentState:
        params = network.init(key, obs_example)
        flat, _ = ravel_pytree(params)
        return AgentState(params, optimizer.init(flat), jnp.zeros((), jnp.int32))

    def loss(
        flat: jax.Array,
        unravel: Callable,
        traj: Transition,
        adv: jax.Array,
        target: jax.Array,
        key: PRNGKey,
    ) -> tuple[jax.Array, jax.Array]:
        policy, v = learner_outputs(network, unravel(flat), traj)
        if config.normalize_advantages:
            adv = normalize_advantages(adv, axis_name)
        return actor_critic_loss(
            dist.log_prob(policy, traj.action),
            adv,
            v,
            target,
            dist.entropy(policy, key),
            value_cost=config.value_cost,
            entropy_cost=config.entropy_cost,
        )

    def update(
        state: AgentState, traj: Transition, key: PRNGKey
    ) -> tuple[AgentState, Metrics]:
        adv, target = episode_aware_gae(
            learning_rewards(traj.reward, config.reward_scale, config.reward_clip),
            traj.discount,
            traj.truncated,
            traj.value,
            traj.bootstrap_value,
            config.gamma,
            config.gae_lambda,
        )
        flat, unravel = ravel_pytree(state.params)
        flat, opt_state, stacked = flat_gradient_step(
            loss,
            optimizer,
            flat,
            state.opt_state,
            unravel,
            traj,
            adv,
            target,
            key,
            axis_name=axis_name,
        )
        metrics = dict(zip(_METRIC_NAMES, stacked, strict=True))
        metrics["learning_rate"] = learning_rate(state.step)
        return AgentState(unravel(flat), opt_state, state.step + 1), metrics

    return Agent(init=init, acting=acting, update=update, axis_name=axis_name)


def validate(config: A2CConfig, shape: RunShape | None = None) -> None:
    """A2C's range rules (any run shape fits it).

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    del shape
    check_optimizer("a2c", config.optimizer)
    check_ranges(
        "a2c",
        config,
        positive=("learning_rate", "max_grad_norm", "reward_scale", "eps"),
        non_negative=("entropy_cost", "value_cost", "reward_clip"),
        unit=("gamma", "gae_lambda", "rms_decay"),
    )


ALGORITHM = Algorithm(
    name="a2c",
    summary="A2C: synchronous advantage actor-critic, one step per batch",
    config_type=A2CConfig,
    default_config=A2CConfig,
    make_agent=make_a2c,
    make_networks=actor_critic_networks,
    validate=validate,
    recurrent=True,
)
