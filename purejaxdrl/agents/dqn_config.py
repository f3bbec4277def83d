"""DQN's and Ape-X's hyper-parameters and their range rules."""

import dataclasses

import jax

from purejaxdrl.agents.base import RunShape
from purejaxdrl.agents.fields import QLearningFields
from purejaxdrl.agents.q_checks import (
    check_epsilon_falls,
    warn_greedy_priorities,
    warn_unused_epsilons,
    warn_unused_priorities,
)
from purejaxdrl.agents.q_learning import (
    check_n_step_fits,
    warn_target_never_used,
)
from purejaxdrl.agents.replay_sizes import check_replay_sizes, check_target_tau
from purejaxdrl.config import check_ranges


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class DQNConfig(QLearningFields):
    """DQN / Ape-X hyper-parameters.

    Static fields change shapes or program structure (changing them recompiles);
    the others are array leaves that can be traced. DQN's own
    fields are described below. Those it shares with R2D2 (optimiser, n-step
    targets, target network, replay sizes, ε schedule) are declared and
    described in `agents.fields` (`QLearningFields`); `help(DQNConfig)` and
    `purejaxdrl train --algo dqn --help` describe every field, the shared
    ones too. Ape-X is this
    config with prioritised, per_actor_epsilon and prefetch.

    Attributes:
      prioritised: proportional prioritised replay with initial priorities from
        the actors' TD errors (Ape-X); else uniform replay.
      prefetch: with prioritised replay, draw all `updates_per_step` batches
        of an update before its first gradient step and write their new
        priorities together after the last (Ape-X's learner prefetches its
        batches, so draws see priorities up to an update old); else each step
        draws from the priorities the previous step wrote. Uniform replay
        always draws ahead: its draws do not depend on the steps.
      beta_start: importance-sampling exponent β at the start, annealed to 1
        (prioritised replay only, as are `priority_alpha` and `priority_eps`).
      priority_eps: added to |TD| so that no priority is 0.

    """

    # Static.
    prioritised: bool = jax.tree.static(default=False)
    prefetch: bool = jax.tree.static(default=False)
    # Dynamic.
    beta_start: float | jax.Array = 0.4
    priority_eps: float | jax.Array = 1e-3


def validate(
    config: DQNConfig,
    shape: RunShape | None = None,
    name: str = "dqn",
    *,
    warn: bool = True,
) -> None:
    """The range rules of a DQN (or, `name` apex, Ape-X) config.

    With `warn`, warns about ε fields that its exploration mode does not use,
    and prioritised-replay fields set under uniform replay (`make_dqn`
    passes False: the run's check has warned already).

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    check_ranges(
        name,
        config,
        at_least_one=("n_step", "buffer_size", "batch_size", "min_replay")
        + ("updates_per_step", "target_every"),
        positive=("learning_rate", "max_grad_norm", "priority_eps"),
        non_negative=("epsilon_alpha", "priority_alpha"),
        unit=("gamma", "epsilon_start", "epsilon_end", "epsilon", "beta_start")
        + ("epsilon_fraction",),
    )
    check_replay_sizes(name, config, shape)
    check_n_step_fits(name, config, shape)
    check_target_tau(name, config)
    check_epsilon_falls(name, config)
    if warn:
        warn_unused_epsilons(name, config)
        warn_unused_priorities(name, config)
        warn_greedy_priorities(name, config)
        if shape is not None:
            per_update = shape.num_envs * shape.unroll_length  # transitions
            warn_target_never_used(name, config, shape, per_update)
