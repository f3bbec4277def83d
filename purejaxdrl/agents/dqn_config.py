"""DQN's and Ape-X's hyper-parameters and their range rules."""

import dataclasses
from typing import Any

import jax

from purejaxdrl.agents.base import RunShape
from purejaxdrl.agents.fields import QLearningFields
from purejaxdrl.agents.q_learning import warn_unused_epsilons, warn_unused_priorities
from purejaxdrl.agents.replay_sizes import check_buffer_fits
from purejaxdrl.config import check, check_ranges
from purejaxdrl.setup_warnings import warn_once


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class DQNConfig(QLearningFields):
    """DQN / Ape-X hyper-parameters.

    Static fields change shapes or program structure (changing them recompiles);
    the others are array leaves that can be traced. Below are DQN's own
    fields; those it shares with R2D2 (optimiser, n-step targets, target
    network, replay sizes, ε schedule) are declared and described in
    `agents.fields` (`QLearningFields`), and `purejaxdrl train --algo dqn
    --help` lists them all. Ape-X is this config with prioritised,
    per_actor_epsilon and prefetch.

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
        non_negative=("epsilon_fraction", "epsilon_alpha", "priority_alpha"),
        unit=("gamma", "epsilon_start", "epsilon_end", "epsilon", "beta_start"),
    )
    check(
        config.min_replay <= config.buffer_size,
        f"{name}.min_replay={config.min_replay} exceeds {name}.buffer_size="
        f"{config.buffer_size}: learning would never start; lower it.",
    )
    check_buffer_fits(name, config, shape)
    check_batch_fits(name, config)
    check_n_step_fits(name, config, shape)
    check_target_tau(name, config)
    if warn:
        warn_unused_epsilons(name, config)
        warn_unused_priorities(name, config)
        if shape is not None:
            per_update = shape.num_envs * shape.unroll_length  # transitions
            warn_target_never_used(name, config, shape, per_update)


def check_n_step_fits(name: str, config: Any, shape: RunShape | None) -> None:
    """That a replay learner's n-step targets fit in one unroll (or sequence).

    Targets stop at the unroll's end: a longer n would silently be the unroll.
    """
    if shape is not None:
        check(
            config.n_step <= shape.unroll_length,
            f"{name}.n_step={config.n_step} is longer than unroll_length="
            f"{shape.unroll_length}: targets stop at the unroll's end; use "
            f"--{name}.n-step {shape.unroll_length} or less, or raise "
            "--unroll-length.",
        )


def check_batch_fits(name: str, config: Any) -> None:
    """That a replay learner's batch is no larger than its buffer.

    Both are global and split evenly over the devices, so this holds on each
    device too. A batch larger than the whole buffer is sampled from fewer
    items than it holds: almost surely a mistake.
    """
    flag = name.replace("_", "-")
    check(
        config.batch_size <= config.buffer_size,
        f"{name}.batch_size={config.batch_size} exceeds {name}.buffer_size="
        f"{config.buffer_size}: a batch is sampled from the buffer; lower "
        f"--{flag}.batch-size or raise --{flag}.buffer-size.",
    )


def check_target_tau(name: str, config: Any) -> None:
    """That each target update moves the target network: τ in (0, 1].

    At τ = 0 `optax.incremental_update` keeps the initial, random network as
    the target for the whole run, and every TD target bootstraps from it.
    """
    tau = config.target_tau
    if isinstance(tau, jax.core.Tracer):
        return  # a sweep's values were checked one by one before stacking
    tau, flag = float(tau), name.replace("_", "-")
    check(
        0.0 < tau <= 1.0,
        f"{name}.target_tau={tau} must be in (0, 1]: 0 never updates the target "
        f"network; e.g. --{flag}.target-tau 0.005 with --{flag}.target-every 1, "
        "or 1 for copies.",
    )


def warn_target_never_used(
    name: str, config: Any, shape: RunShape, per_update: int
) -> None:
    """Warns once when the run ends before a target update is ever used.

    `per_update` is the items each update stores over all devices
    (`Algorithm.replay_items`: DQN's transitions, R2D2's sequences). The
    target moves after gradient steps `target_every`, 2 `target_every`, ...;
    with `target_every` at least the run's gradient steps, every TD target
    bootstraps from the initial, random network. A warning, not a refusal:
    a short smoke run at the default cadence (250, R2D2's 2500) is
    legitimate, and a finished run read back (eval, export) must still load.
    """
    # Learning starts at the update whose add stores `min_replay` items
    # (`replay_sizes.learning_updates`); each then takes updates_per_step steps.
    first = -(-config.min_replay // per_update) - 1
    steps = max(shape.num_updates - first, 0) * config.updates_per_step
    every = config.target_every
    if steps == 0 or every < steps:
        return  # no learning at all is `check_learning_starts`'s to refuse
    # The updates that take more than `every` steps.
    updates = first + every // config.updates_per_step + 1
    total = updates * shape.num_envs * shape.unroll_length
    flag = name.replace("_", "-")
    warn_once(
        f"{name}.target_every={every} is not less than the run's {steps} gradient "
        "steps: no TD target would use an updated target network, all would "
        "bootstrap from the initial one; lower "
        f"--{flag}.target-every below {steps}, or raise --total-steps to at "
        f"least {total}.",
        key=("target never used", name),
    )
