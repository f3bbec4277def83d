"""PQN: Q(λ) learning from fresh parallel rollouts, no replay, no target network.

Gallici et al. (2025), "Simplifying Deep Temporal Difference Learning",
https://arxiv.org/abs/2407.04811 (reference code: mttga/purejaxql). Many
environments act ε-greedily on the online Q-network; each update computes
Peng's Q(λ) targets over the unroll from that network's own max-Q values (those
the actors computed as they acted, `Transition.value` and `bootstrap_value`),
then takes epochs x minibatches of RAdam steps on 0.5 (Q(s, a) - G)², with the
gradients' global norm clipped. A LayerNorm before each dense hidden
activation (`--network.norm layer_norm`; conv layers take none, unlike
purejaxql's) is what keeps this stable without a target network. With
`--network.core`, PQN-RNN: the learner re-unrolls each sequence from the core
state its actor started it with.

Unlike the peers' implementations (purejaxql, Stoix, rejax), a time-limit
truncation bootstraps from max_a Q of the true final observation; only a
termination ends the return (`rl.returns.episode_aware_q_lambda`).
"""

import dataclasses
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from purejaxdrl.agents.actor_critic import learner_outputs
from purejaxdrl.agents.base import (
    Agent,
    AgentState,
    Algorithm,
    RunShape,
    check_agent_args,
)
from purejaxdrl.agents.fields import EpsilonFields, OptimizerFields, RewardFields
from purejaxdrl.agents.optim import (
    flat_gradient_epochs,
    flat_learner_init,
    learner_optimizer,
)
from purejaxdrl.agents.ppo import check_minibatches, checked_split, env_multiple
from purejaxdrl.agents.q_checks import (
    check_epsilon_falls,
    warn_unused_epsilons,
)
from purejaxdrl.agents.q_learning import (
    epsilon_greedy_acting,
    exploration,
    exported_epsilon,
    exported_epsilon_greedy,
    make_q_acting,
)
from purejaxdrl.config import check_ranges
from purejaxdrl.networks import (
    AnyNetwork,
    NetworkConfig,
    RecurrentNetwork,
    make_q_network,
)
from purejaxdrl.rl.returns import episode_aware_q_lambda
from purejaxdrl.setup_warnings import warn_once
from purejaxdrl.types import Metrics, Params, PRNGKey, PyTree, Transition


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class PQNConfig(EpsilonFields, RewardFields, OptimizerFields):
    """PQN hyper-parameters; the defaults are purejaxql's MinAtar settings.

    Static fields change shapes or loop counts (changing them recompiles); the
    others are array leaves that can be traced, vmapped and swept. PQN's
    own fields are described below. Those it shares with other learners
    (learning rate, discount, gradient clipping, learning-rate decay, reward
    scale, the ε schedule or Ape-X's per-environment ε) are declared and
    described in `agents.fields`; `help(PQNConfig)` and `--algo pqn --help`
    describe every field, the shared ones too.
    The network should have `norm: layer_norm` (the presets' PQN sections do;
    `pqn_networks` warns without it).

    Attributes:
      num_epochs: passes over each update's unroll.
      num_minibatches: minibatches each pass is split into, one RAdam step
        each (with a recurrent core: whole environment sequences, so it must
        divide num_envs).
      q_lambda: λ of the Q(λ) targets; 0 gives one-step Q-learning, 1 the
        discounted rewards to the end of the unroll or the episode, plus max-Q
        there (of the true final observation at a time limit; none at a
        termination).
      eps: RAdam's ε (optax's default).

    """

    # Static.
    num_epochs: int = jax.tree.static(default=2)
    num_minibatches: int = jax.tree.static(default=32)
    # Dynamic.
    learning_rate: float | jax.Array = 5e-4
    max_grad_norm: float | jax.Array = 10.0
    epsilon_fraction: float | jax.Array = 0.1
    q_lambda: float | jax.Array = 0.65
    eps: float | jax.Array = 1e-8


class Batch(NamedTuple):
    """An unroll and its Q(λ) targets, leaves [T, B, ...]: what PQN learns from.

    `reset` and the start states (leaves [B, ...]) only for a recurrent core.
    """

    observation: PyTree
    action: jax.Array
    target: jax.Array
    reset: jax.Array | tuple = ()
    core_state: PyTree = ()


def loss(
    params: Params, batch: Batch, *, network: AnyNetwork
) -> tuple[jax.Array, Metrics]:
    """PQN's loss on one minibatch: 0.5 (Q(s, a) - G)², G the Q(λ) target."""
    q, _ = learner_outputs(network, params, batch)
    q_taken = jnp.take_along_axis(q, batch.action[..., None], axis=-1)[..., 0]
    td = batch.target - q_taken
    total = 0.5 * jnp.mean(td * td)
    return total, {
        "loss/total": total,
        "td/abs_mean": jnp.mean(jnp.abs(td)),
        "q/taken_mean": jnp.mean(q_taken),
    }


def q_lambda_targets(traj: Transition, config: PQNConfig) -> jax.Array:
    """Q(λ) targets [T, B] from the actors' own max-Q values, rewards scaled.

    `traj.bootstrap_value` is max_a Q of each step's final observation under
    the acting parameters, 0 where the step terminated: the learner's own on
    device environments, one or two versions behind on host environments
    (whose actors run beside the learner).
    """
    return episode_aware_q_lambda(
        traj.reward * config.reward_scale,
        traj.discount,
        traj.truncated,
        traj.bootstrap_value,
        config.gamma,
        config.q_lambda,
    )


def pqn_networks(
    config: PQNConfig, network: NetworkConfig, obs_spec: Any, action_spec: Any
) -> tuple[AnyNetwork, AnyNetwork]:
    """A plain (not dueling) Q-network, twice: to act and to learn.

    Recurrent when `network.core` is not `none` (PQN-RNN). Warns once when its
    dense layers have no LayerNorm: a warning, not an error, as a run may
    mean to test just that (and none where a trained policy is read back:
    `quiet_setup_warnings`).
    """
    del config  # the architecture is the run's
    q = make_q_network(network, obs_spec, action_spec, dueling=False)
    if network.norm != "layer_norm" and network.hidden_sizes:
        warn_once(
            f"pqn with network.norm={network.norm!r}: PQN has no target network "
            "and its LayerNorm is what keeps it stable; without --network.norm "
            "layer_norm (network.norm='layer_norm' in Python) it may diverge.",
            key=("pqn", "network.norm"),
        )
    return q, q


def make_pqn(
    config: PQNConfig, network: AnyNetwork, obs_example: jax.Array, run: RunShape
) -> Agent:
    """Builds PQN (an `AgentFactory`): Q(λ) on each fresh unroll, no replay.

    `update` takes time-major transitions [T, B] (B: this device's
    environments), computes their Q(λ) targets and takes `num_epochs` x
    `num_minibatches` gradient steps, all-reduced over `axis_name`; the
    minibatches are PPO's (`ppo.minibatch_split`, or whole sequences with a
    recurrent core), the same global ones on any number of devices. The actors
    act ε-greedily with the learner's parameters: ε annealed over
    `epsilon_fraction` of the updates, or Ape-X's ε_i per environment.
    """
    # `update` checks the shape of the batch it is given, not `run`'s.
    check_agent_args(validate, config, run, fits=False)
    axis_name = run.axis_name
    steps_per_update = config.num_epochs * config.num_minibatches
    learning_rate, optimizer = learner_optimizer(
        config,
        run.num_updates,
        steps_per_update=steps_per_update,
        name="radam",
        eps=config.eps,
    )
    recurrent = isinstance(network, RecurrentNetwork)
    epsilon_now, epsilons = exploration(config, run.num_updates, run.num_envs)
    objective = functools.partial(loss, network=network)

    def acting_params(state: AgentState) -> tuple[Params, jax.Array]:
        return state.params, epsilon_now(state.step)

    def update(
        state: AgentState, traj: Transition, key: PRNGKey
    ) -> tuple[AgentState, Metrics]:
        target = q_lambda_targets(traj, config)
        batch = Batch(traj.observation, traj.action, target)
        batch, split = checked_split(
            validate, config, batch, traj, recurrent, run.num_devices,
            axis_name=axis_name,
        )  # fmt: skip

        def minibatches(key: PRNGKey) -> tuple[Batch]:
            return (split(batch, key),)

        new_state, metrics = flat_gradient_epochs(
            objective,
            optimizer,
            state,
            minibatches,
            jax.random.split(key, config.num_epochs),
            axis_name=axis_name,
        )
        metrics["learning_rate"] = learning_rate(state.step * steps_per_update)
        metrics["epsilon"] = epsilon_now(state.step)
        return new_state, metrics

    if recurrent:
        acting = make_q_acting(network, epsilons)
    else:
        acting = epsilon_greedy_acting(network, epsilons)
    return Agent(
        init=flat_learner_init(network, optimizer, obs_example),
        acting=acting,
        update=update,
        acting_params=acting_params,
        axis_name=axis_name,
    )


def validate(config: PQNConfig, shape: RunShape | None = None) -> None:
    """PQN's range rules, and with `shape` that its minibatches split the batch.

    Warns about ε fields that its exploration mode does not use.

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    check_ranges(
        "pqn",
        config,
        at_least_one=("num_epochs", "num_minibatches"),
        positive=("learning_rate", "max_grad_norm", "eps", "reward_scale"),
        non_negative=("epsilon_alpha",),
        unit=("gamma", "q_lambda", "epsilon_start", "epsilon_end", "epsilon")
        + ("epsilon_fraction",),
    )
    check_minibatches("pqn", config, shape)  # as PPO's
    check_epsilon_falls("pqn", config)
    warn_unused_epsilons("pqn", config)


ALGORITHM = Algorithm(
    name="pqn",
    recurrent=True,
    summary="PQN: Q(λ) on fresh parallel rollouts, LayerNorm, no replay or target",
    config_type=PQNConfig,
    make_agent=make_pqn,
    make_networks=pqn_networks,
    validate=validate,
    env_multiple=env_multiple,
    action_kinds=("discrete",),
    policy_extras=exported_epsilon,  # an exported policy is ε-greedy
    exported_sampler=exported_epsilon_greedy,
)
