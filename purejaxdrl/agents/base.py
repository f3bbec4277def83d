"""The records of an algorithm: the Agent it builds and the Algorithm it registers."""

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

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


class CoreActing(NamedTuple):
    """How an agent with a recurrent core acts: the actors carry its state.

    Attributes:
      initial_state: B -> the zero core state, leaves [B, ...].
      act: (acting params, state [B], obs [B, ...], reset bool [B], keys [B],
        env_ids int32 [B]) -> (state, action [B, ...], extras): one step of B
        environments (`reset`: the observation starts an episode, so the state
        is zeroed first), with one key per environment and their global
        indices (R2D2's per-actor ε). Extras hold `log_prob` [B], `env_action`
        and `value` [B] (the same pass gives it).
      value: (params, state [B], obs [B, ...]) -> value [B] of observations that
        continue the state's episodes (final observations), without stepping.

    """

    initial_state: Callable[[int], Any]
    act: Callable[..., tuple[Any, jax.Array, dict[str, jax.Array]]]
    value: Callable[[Params, Any, jax.Array], jax.Array]


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
      core: for agents with a recurrent core, how they act (`act` and `value`
        are then unused by the runners); None for feed-forward agents.

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
    core: CoreActing | None = None


class RunShape(NamedTuple):
    """The shape of a run that an algorithm's config must fit (global counts).

    `num_devices` is 1 where configs are checked before devices are chosen.
    """

    num_envs: int = 1
    unroll_length: int = 1
    recurrent: bool = False
    num_devices: int = 1


DEFAULT_SHAPE = RunShape()  # a factory's without one: 1 env, 1 step, 1 device


class AgentFactory(Protocol):
    """The one signature of every agent factory (`make_ppo`, `make_dqn`, ...).

    Args:
      config: the algorithm's hyper-parameters (its record's `config_type`).
      network: the learner network its record's `make_networks` returns.
      obs_example: one observation (unbatched), to initialise parameters.
      shape: the run's shape; replay buffers are sized from it.
      num_updates: total number of `update` calls (>= 1), for the schedules.
      axis_name: the mesh axis `update` all-reduces gradients and metrics
        over, or None on one device.

    """

    def __call__(
        self,
        config: Any,
        network: Any,
        obs_example: jax.Array,
        *,
        shape: RunShape = ...,
        num_updates: int,
        axis_name: str | None = None,
    ) -> Agent: ...


def check_agent_args(
    validate: Callable[..., None],
    config: Any,
    num_updates: int,
    shape: RunShape | None = None,
) -> None:
    """What every agent factory checks first: its config (`validate`), its budget."""
    validate(config, shape)
    if num_updates < 1:
        raise ValueError(f"num_updates={num_updates} must be >= 1.")


class Algorithm(NamedTuple):
    """Everything the rest of the library knows about one algorithm.

    Each algorithm module defines one and `agents.registry` lists it; nothing
    outside `agents/` names an algorithm, it asks its record.

    Attributes:
      name: the `--algo` value, and the name of its section of a TrainConfig.
      summary: one line for `--help` and listings.
      config_type: its hyper-parameter dataclass.
      default_config: () -> its defaults (an algorithm may share another's
        config type with other defaults, as Ape-X does DQN's).
      make_agent: its factory (`AgentFactory`).
      make_networks: (config, NetworkConfig, observation spec, action spec) ->
        (acting network, learner network): what the actors, evaluation and
        exported policies run, and what the factory takes.
      validate: (config, RunShape or None) -> None; raises ConfigError naming
        the value, the rule and the fix. With a RunShape it also checks that
        the config fits the run's environments and unroll.
      keeps_replay: config -> whether its agent state holds a replay buffer
        split over the devices (`Agent.state_spec` is not P()).
      env_multiple: (config, RunShape) -> the number that each device's
        environment count must be a multiple of (PPO's minibatches may split
        environments into groups); 1 for most.
      recurrent: whether its agents take a network with a recurrent core
        (`--network.core lstm|gru|mingru`).

    """

    name: str
    summary: str
    config_type: type
    default_config: Callable[[], Any]
    make_agent: AgentFactory
    make_networks: Callable[..., tuple[Any, Any]]
    validate: Callable[[Any, RunShape | None], None]
    keeps_replay: Callable[[Any], bool] = lambda config: False
    env_multiple: Callable[[Any, RunShape], int] = lambda config, shape: 1
    recurrent: bool = False
