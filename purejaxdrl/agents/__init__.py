"""Algorithms: one module each, each exporting its `ALGORITHM` record.

The algorithms: `ppo`, `a2c`, `impala`, `dqn`, `apex`, `r2d2`, `pqn` and `sac`.
Their helper modules:
`ppo_minibatches` (PPO's minibatches, the same on any device count),
`dqn_config` (DQN's and Ape-X's hyper-parameters and their range rules),
`r2d2_sequences` (R2D2's stored sequences, burn-in and TD errors), `q_checks`
(the Q-learners' setting checks), `action_kinds` (the kinds of actions an
algorithm acts in), `host_rules` (which configs the host-env runner trains),
`record_checks` (a record's functions checked) and `section_checks` (a user's
record's config checked as a run's section).

A record (`base.Algorithm`) names the algorithm and bundles its config type,
agent factory (returning an `Agent` of pure functions), network factory,
validation and state layout; `registry` lists the records, and `register`
adds a user's, defined outside the package (`registered`: for a test, and
taken out again after). Every algorithm's factory and
config are exported here (Ape-X's `make_apex` is DQN's factory under its own
name, with DQN's config and its own defaults), and so is each algorithm's
module (`ppo`: its loss and validation, which a variant reuses). So are the
pieces the guide "Adding an algorithm" builds one from: the agent's parts and
signature (`base`), the config field groups (`fields`), the actor-critic
helpers (`actor_critic`) and the shared optimiser and gradient steps
(`optim`: `learner_optimizer`, `flat_learner_init`, one step per update with
`flat_gradient_step`, or PPO's epochs of minibatch steps with
`flat_gradient_epochs`, and `check_optimizer` for `OptimizerChoiceFields`),
and a replay learner's Q-learning pieces (`q_learning`: the target-network
step, ε-greedy acting and export) and size rules (`replay_sizes`: each
device's shard sizes, when learning starts).
Nothing outside this package branches on an algorithm's name. Agents import
`rl`, `replay`, `networks`, `env` specs and the shared modules (`config`,
`types`, `parallel`, `rng`); never `runners`, `training`, `sweeps`, `observe`
or `cli`.
"""

from purejaxdrl.agents import (
    a2c,
    apex,
    dqn,
    impala,
    ppo,
    pqn,
    q_learning,
    r2d2,
    replay_sizes,
    sac,
)
from purejaxdrl.agents.a2c import A2CConfig, make_a2c
from purejaxdrl.agents.actor_critic import (
    actor_critic_acting,
    actor_critic_networks,
    gae_targets,
    learner_outputs,
)
from purejaxdrl.agents.apex import make_apex
from purejaxdrl.agents.base import (
    Acting,
    Agent,
    AgentFactory,
    AgentState,
    Algorithm,
    RunShape,
    check_agent_args,
    feed_forward,
)
from purejaxdrl.agents.dqn import DQNConfig, DQNState, make_dqn
from purejaxdrl.agents.fields import (
    ActorCriticFields,
    AdvantageFields,
    EpsilonFields,
    LearnerFields,
    OptimizerChoiceFields,
    OptimizerFields,
    QLearningFields,
    ReplayFields,
    RewardFields,
)
from purejaxdrl.agents.impala import IMPALAConfig, IMPALAState, make_impala
from purejaxdrl.agents.optim import (
    annealed_learning_rate,
    check_optimizer,
    flat_gradient_epochs,
    flat_gradient_step,
    flat_learner_init,
    flat_optimizer_state,
    learner_optimizer,
    local_copy,
    make_learner_optimizer,
)
from purejaxdrl.agents.ppo import PPOConfig, make_ppo
from purejaxdrl.agents.pqn import PQNConfig, make_pqn
from purejaxdrl.agents.r2d2 import R2D2Config, R2D2State, make_r2d2
from purejaxdrl.agents.registry import (
    algorithm,
    algorithms,
    make_agent,
    names,
    register,
    registered,
)
from purejaxdrl.agents.sac import SACConfig, SACState, make_sac

__all__ = [
    "A2CConfig",
    "Acting",
    "ActorCriticFields",
    "AdvantageFields",
    "Agent",
    "AgentFactory",
    "AgentState",
    "Algorithm",
    "DQNConfig",
    "DQNState",
    "EpsilonFields",
    "IMPALAConfig",
    "IMPALAState",
    "LearnerFields",
    "OptimizerChoiceFields",
    "OptimizerFields",
    "PPOConfig",
    "PQNConfig",
    "QLearningFields",
    "R2D2Config",
    "R2D2State",
    "ReplayFields",
    "RewardFields",
    "RunShape",
    "SACConfig",
    "SACState",
    "a2c",
    "actor_critic_acting",
    "actor_critic_networks",
    "algorithm",
    "algorithms",
    "annealed_learning_rate",
    "apex",
    "check_agent_args",
    "check_optimizer",
    "dqn",
    "feed_forward",
    "flat_gradient_epochs",
    "flat_gradient_step",
    "flat_learner_init",
    "flat_optimizer_state",
    "gae_targets",
    "impala",
    "learner_optimizer",
    "learner_outputs",
    "local_copy",
    "make_a2c",
    "make_agent",
    "make_apex",
    "make_dqn",
    "make_impala",
    "make_learner_optimizer",
    "make_ppo",
    "make_pqn",
    "make_r2d2",
    "make_sac",
    "names",
    "ppo",
    "pqn",
    "q_learning",
    "r2d2",
    "register",
    "registered",
    "replay_sizes",
    "sac",
]
