"""A2C: synchronous advantage actor-critic (the synchronous form of A3C).

Mnih et al. (2016), "Asynchronous Methods for Deep Reinforcement Learning",
https://arxiv.org/abs/1602.01783. The asynchronous actor-learners of A3C become
one batch of environments stepped in lockstep; each update is one gradient step
on the whole batch, with n-step (λ = 1) or GAE advantages from the values the
actors computed with the same, current parameters.
"""

import dataclasses
import functools

import jax

from purejaxdrl.agents.actor_critic import (
    actor_critic_acting,
    actor_critic_networks,
    gae_targets,
    learner_outputs,
)
from purejaxdrl.agents.base import (
    Agent,
    AgentState,
    Algorithm,
    RunShape,
    check_agent_args,
)
from purejaxdrl.agents.fields import (
    ActorCriticFields,
    AdvantageFields,
    OptimizerChoiceFields,
)
from purejaxdrl.agents.optim import (
    check_optimizer,
    flat_gradient_step,
    flat_learner_init,
    learner_optimizer,
)
from purejaxdrl.agents.ppo import check_normalised_batch
from purejaxdrl.config import check_ranges
from purejaxdrl.networks import AnyNetwork
from purejaxdrl.rl.losses import actor_critic_loss, normalize_advantages
from purejaxdrl.types import Metrics, Params, PRNGKey, Transition


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class A2CConfig(OptimizerChoiceFields, AdvantageFields, ActorCriticFields):
    """A2C hyper-parameters: all of them shared with other learners.

    Static fields change program structure (changing them recompiles); the
    others are array leaves that can be traced, vmapped and swept. Each is
    declared and described in `agents.fields` (`ActorCriticFields`,
    `AdvantageFields`, `OptimizerChoiceFields`), and `help(A2CConfig)` and
    `purejaxdrl train --algo a2c --help` describe them all; A2C redeclares
    the defaults where they differ from the groups' (λ = 1: A3C's n-step returns).

    `value_cost` weighs 0.5 mean((G - V)²), as CleanRL's vf_coef does; OpenAI
    baselines' vf_coef c weighs mean((G - V)²), so porting its settings takes
    value_cost = 2c (its default 0.5 is value_cost 1.0 here).
    """

    # Static.
    normalize_advantages: bool = jax.tree.static(default=False)
    # Dynamic.
    learning_rate: float | jax.Array = 7e-4
    gae_lambda: float | jax.Array = 1.0


def loss(
    params: Params,
    traj: Transition,
    adv: jax.Array,
    target: jax.Array,
    key: PRNGKey,
    *,
    network: AnyNetwork,
    config: A2CConfig,
    axis_name: str | None,
) -> tuple[jax.Array, Metrics]:
    """A3C's objective on the whole batch (Mnih et al., 2016): `actor_critic_loss`.

    The policy gradient of the advantages `adv` (standardised over the global
    batch when `normalize_advantages`), the value loss to `target` and the
    entropy bonus, all [T, B].
    """
    dist = network.distribution
    policy, value = learner_outputs(network, params, traj)
    if config.normalize_advantages:
        adv = normalize_advantages(adv, axis_name)
    return actor_critic_loss(
        dist.log_prob(policy, traj.action),
        adv,
        value,
        target,
        dist.entropy(policy, key),
        value_cost=config.value_cost,
        entropy_cost=config.entropy_cost,
    )


def make_a2c(
    config: A2CConfig, network: AnyNetwork, obs_example: jax.Array, run: RunShape
) -> Agent:
    """Builds A2C (an `AgentFactory`): one on-policy gradient step per batch.

    Advantages and value targets come from `gae_targets` on the values
    stored with the transitions (on-policy: the actors act with the learner's
    current parameters), so truncated episodes bootstrap from their final
    observations. Any run shape fits.
    """
    # The run's own shape is checked by training's validate; a factory's
    # RunShape may be a placeholder (1 env x 1 step).
    check_agent_args(validate, config, run, fits=False)
    axis_name = run.axis_name
    acting = actor_critic_acting(network)
    learning_rate, optimizer = learner_optimizer(
        config, run.num_updates, eps=config.eps
    )
    objective = functools.partial(
        loss, network=network, config=config, axis_name=axis_name
    )

    def update(
        state: AgentState, traj: Transition, key: PRNGKey
    ) -> tuple[AgentState, Metrics]:
        adv, target = gae_targets(traj, config)
        new_state, metrics = flat_gradient_step(
            objective, optimizer, state, traj, adv, target, key, axis_name=axis_name
        )
        metrics["learning_rate"] = learning_rate(state.step)
        return new_state, metrics

    init = flat_learner_init(network, optimizer, obs_example)
    return Agent(init=init, acting=acting, update=update, axis_name=axis_name)


def validate(config: A2CConfig, shape: RunShape | None = None) -> None:
    """A2C's range rules, and a batch its advantages' normalisation can use.

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    check_optimizer("a2c", config)
    if shape is not None:
        check_normalised_batch("a2c", config, shape)
    check_ranges(
        "a2c",
        config,
        positive=("learning_rate", "max_grad_norm", "reward_scale", "eps"),
        non_negative=("entropy_cost", "value_cost", "reward_clip"),
        unit=("gamma", "gae_lambda"),
    )


ALGORITHM = Algorithm(
    name="a2c",
    summary="A2C: synchronous advantage actor-critic, one step per batch",
    config_type=A2CConfig,
    make_agent=make_a2c,
    make_networks=actor_critic_networks,
    validate=validate,
    recurrent=True,
)
