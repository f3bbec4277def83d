"""Shared records: TimeStep, Transition, and array aliases."""

from collections.abc import Mapping
from typing import Any, NamedTuple, TypeAlias

import jax
import jax.numpy as jnp

__all__ = [
    "Array",
    "PRNGKey",
    "PyTree",
    "Params",
    "Metrics",
    "TimeStep",
    "Transition",
]

Array: TypeAlias = jax.Array
"""A JAX array."""
PRNGKey: TypeAlias = jax.Array
"""A typed random key, made by `jax.random.key` (not a raw `jax.random.PRNGKey`)."""
PyTree: TypeAlias = Any
"""A pytree: nested tuples, lists, dicts and NamedTuples of arrays."""
Params: TypeAlias = PyTree
"""A network's parameters, the pytree its `init` returns."""
Metrics: TypeAlias = Mapping[str, jax.Array]
"""Arrays by metric name (`loss/total`, ...): what a loss or an update reports."""


class TimeStep(NamedTuple):
    """What an environment emits after `reset` or `step`; one environment, unbatched.

    Attributes:
      observation: the observation to act on; already the first observation of the
        next episode when this step ended one (auto-reset).
      reward: float32 [], the reward of the transition into this step.
      discount: float32 [], 0 only when the episode terminated (never on truncation).
      truncated: bool [], True when a time limit ended the episode without
        termination. Never True together with discount == 0.
      final_observation: the observation reached by the transition, before any
        auto-reset; bootstrap values are computed from it.
      info: extra arrays with the same structure after `reset` and `step`.

    """

    observation: PyTree
    reward: jax.Array
    discount: jax.Array
    truncated: jax.Array
    final_observation: PyTree
    info: dict[str, jax.Array]

    def last(self) -> jax.Array:
        """Whether this step ended an episode (terminated or truncated), bool []."""
        return jnp.logical_or(self.discount == 0.0, self.truncated)


class Transition(NamedTuple):
    """One step of experience; time-major `[T, B, ...]` after `unroll`.

    The transition goes from `observation` (time t-1) through `action` to the next
    step (time t), whose reward, discount and truncation flag it stores.

    Attributes:
      observation: observation acted on, [T, B, *obs_shape].
      action: the policy's sample (pre-squash for tanh-Gaussian policies).
      reward: float32 [T, B].
      discount: float32 [T, B], 0 where the next step terminated the episode.
      truncated: bool [T, B], True where a time limit ended the episode.
      log_prob: float32 [T, B], behaviour policy log-probability of `action`.
      value: float32 [T, B], value of `observation` under the acting parameters.
      bootstrap_value: float32 [T, B], value of the next step's
        `final_observation` (so truncation bootstraps from the true next state);
        0 where the episode terminated, which bootstraps from nothing.
      final_observation: the next step's observation before any auto-reset,
        [T, B, *obs_shape]; for learners that recompute values (V-trace). Unused
        fields cost nothing: the whole update is one compiled program.
      info: per-step info from the environment (e.g. episode statistics).
      reset: bool [T, B], True where `observation` starts an episode (the step
        before ended one): a recurrent core's state is zeroed there. Filled
        where the policy gives values as it acts (a recurrent core's, or
        R2D2's: `Acting.values_while_acting`); else None.
      core_state: the policy's carry before the first step, leaves [B, ...]
        (not time-major): the learner re-unrolls the trajectory from it. ()
        without a core (feed-forward agents, R2D2 on a feed-forward network).

    """

    observation: PyTree
    action: jax.Array
    reward: jax.Array
    discount: jax.Array
    truncated: jax.Array
    log_prob: jax.Array
    value: jax.Array
    bootstrap_value: jax.Array
    final_observation: PyTree
    info: dict[str, jax.Array]
    reset: jax.Array | None = None
    core_state: PyTree = ()
