"""DQN's and Ape-X's hyper-parameters and their range rules."""

import dataclasses

import jax

from purejaxdrl.agents.base import RunShape
from purejaxdrl.config import check, check_ranges


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class DQNConfig:
    """DQN / Ape-X hyper-parameters.

    Static fields change shapes or program structure (changing them recompiles);
    the others are array leaves that can be traced.

    Attributes:
      prioritised: proportional prioritised replay with initial priorities from
        the actors' TD errors (Ape-X); else uniform replay.
      per_actor_epsilon: each environment explores with its own fixed
        ε_i = epsilon^(1 + epsilon_alpha i / (N - 1)) (Ape-X); else one ε
        annealed from epsilon_start to epsilon_end.
      dueling: a dueling head (Q = V + A - mean A).
      n_step: n of the n-step returns.
      buffer_size: transitions held by the replay, over all devices.
      batch_size: transitions per gradient step, over all devices.
      min_replay: transitions stored (over all devices) before learning starts.
      updates_per_step: gradient steps per runner update (replay ratio knob).
      target_every: gradient steps between target-network updates.
      anneal_lr: decay the learning rate linearly to 0 over training.
      prefetch: with prioritised replay, draw all `updates_per_step` batches
        of an update before its first gradient step and write their new
        priorities together after the last (Ape-X's learner prefetches its
        batches, so draws see priorities up to an update old); else each step
        draws from the priorities the previous step wrote. Uniform replay
        always draws ahead: its draws do not depend on the steps.
      learning_rate: Adam's step size.
      target_tau: each target update moves the target network this fraction
        of the way to the online one (1: a copy, DQN's; 0.005 with
        target_every 1: Polyak averaging).
      gamma: discount γ.
      max_grad_norm: gradients are clipped to this global norm.
      epsilon_start, epsilon_end, epsilon_fraction: the annealed ε goes from
        start to end linearly over this fraction of training.
      epsilon, epsilon_alpha: Ape-X's ε and α (0.4 and 7 in the paper).
      priority_alpha: prioritisation exponent α.
      beta_start: importance-sampling exponent β at the start, annealed to 1.
      priority_eps: added to |TD| so that no priority is 0.

    """

    # Static.
    prioritised: bool = jax.tree.static(default=False)
    per_actor_epsilon: bool = jax.tree.static(default=False)
    dueling: bool = jax.tree.static(default=True)
    n_step: int = jax.tree.static(default=3)
    buffer_size: int = jax.tree.static(default=100_000)
    batch_size: int = jax.tree.static(default=256)
    min_replay: int = jax.tree.static(default=1_000)
    updates_per_step: int = jax.tree.static(default=1)
    target_every: int = jax.tree.static(default=250)
    anneal_lr: bool = jax.tree.static(default=False)
    prefetch: bool = jax.tree.static(default=False)
    priority_alpha: float = jax.tree.static(default=0.6)
    # Dynamic.
    learning_rate: float | jax.Array = 2.5e-4
    target_tau: float | jax.Array = 1.0
    gamma: float | jax.Array = 0.99
    max_grad_norm: float | jax.Array = 10.0
    epsilon_start: float | jax.Array = 1.0
    epsilon_end: float | jax.Array = 0.05
    epsilon_fraction: float | jax.Array = 0.5
    epsilon: float | jax.Array = 0.4
    epsilon_alpha: float | jax.Array = 7.0
    beta_start: float | jax.Array = 0.4
    priority_eps: float | jax.Array = 1e-3


def validate(
    config: DQNConfig, shape: RunShape | None = None, name: str = "dqn"
) -> None:
    """The range rules of a DQN (or, `name` apex, Ape-X) config.

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    del shape
    check_ranges(
        name,
        config,
        at_least_one=("n_step", "buffer_size", "batch_size", "min_replay")
        + ("updates_per_step", "target_every"),
        positive=("learning_rate", "max_grad_norm", "priority_eps"),
        non_negative=("epsilon_fraction", "epsilon_alpha", "priority_alpha"),
        unit=("gamma", "epsilon_start", "epsilon_end", "epsilon", "beta_start")
        + ("target_tau",),
    )
    check(
        config.min_replay <= config.buffer_size,
        f"{name}.min_replay={config.min_replay} exceeds {name}.buffer_size="
        f"{config.buffer_size}: learning would never start; lower it.",
    )
