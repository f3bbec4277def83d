"""The Agent record every algorithm returns."""

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import optax
from jax.sharding import PartitionSpec as P

from purejaxdrl.types import Metrics, Params, PRNGKey, Transition


class AgentState(NamedTuple):
    """Learner state: parameters, optimiser state and the number of updates."""

    params: Params
    opt_state: optax.OptState
    step: jax.Array


def learner_params(state: AgentState) -> Params:
    """The learner's current parameters: what on-policy agents act with."""
    return state.params


class Agent(NamedTuple):
    """An RL agent as a bundle of pure functions (cf. optax.GradientTransformation).

    Attributes:
      init: key -> AgentState; the same key gives the same parameters everywhere.
      act: (params, obs [B, ...], key) -> (action [B, ...], extras), extras holding
        `log_prob` [B] and the `env_action` to send to the environment.
      value: (params, obs [..., *obs_shape]) -> values [...].
      update: (state, transitions [T, B], key) -> (state, metrics); all-reduces
        over the agent's `axis_name` when it has one.
      acting_params: agent state -> the parameters the actors act with. The
        learner's own by default; an agent with policy lag returns older ones.
      axis_name: the mesh axis `update` all-reduces over (the runner checks it
        matches its mesh), or None for an agent that runs on one device.
      actor_act: (acting params, obs [B, ...], key, env_id int32 [B]) -> as
        `act`, for agents whose behaviour differs per environment (Ape-X:
        each its own ε); the runner's actors use it instead of `act`.
      state_spec: a PartitionSpec prefix of the agent's state: P() (the whole
        learner state replicated) or, for agents that keep a replay buffer in
        their state, a state whose buffer field is P("data") (one shard per
        device).

    """

    init: Callable[[PRNGKey], AgentState]
    act: Callable[[Params, jax.Array, PRNGKey], tuple[jax.Array, dict[str, jax.Array]]]
    value: Callable[[Params, jax.Array], jax.Array]
    update: Callable[[AgentState, Transition, PRNGKey], tuple[AgentState, Metrics]]
    acting_params: Callable[[Any], Params] = learner_params
    axis_name: str | None = None
    actor_act: (
        Callable[
            [Params, jax.Array, PRNGKey, jax.Array],
            tuple[jax.Array, dict[str, jax.Array]],
        ]
        | None
    ) = None
    state_spec: Any = P()
