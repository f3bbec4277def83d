"""The records of an algorithm: the Agent it builds and the Algorithm it registers."""

import dataclasses
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


class Acting(NamedTuple):
    """How an agent's actors act: one step of B environments, with or without a core.

    The one acting interface: the rollout, the host actors and every agent use
    it alike, feed-forward or recurrent.

    Attributes:
      initial_state: B -> the carry of B environments about to start: a
        recurrent core's zero state (leaves [B, ...]); () without a core.
      step: (acting params, carry, obs [B, ...], reset bool [B], keys [B],
        env_ids int32 [B]) -> (carry, action [B, ...], extras): one step of B
        environments. `reset` marks observations that start an episode (the
        carry is zeroed for them first); one key per environment; `env_ids`
        are their global indices (Ape-X's and R2D2's per-actor ε). Extras
        hold `log_prob` [B] and `env_action` (what the environment receives),
        and `value` [B] where `values_while_acting`.
      value: (acting params, carry, obs) -> values of observations that
        continue the carry's episodes (final observations), without stepping
        it. Without a core the carry is () and `obs` may have any leading
        axes [..., *obs_shape]: the rollout values a whole unroll in one pass.
      values_while_acting: whether `step` also gives the values (`value` in
        its extras), from the same pass. True for a policy that carries a
        core (a recurrent actor-critic's, R2D2's even around a feed-forward
        Q-network): the rollout then stores the reset flags and the start
        carry, and values final observations from the carry. False: `step`
        leaves the critic out, and the rollout values the whole unroll after
        it, in one batched pass. Static: fixed when the Acting is built.

    """

    initial_state: Callable[[int], Any]
    step: Callable[..., tuple[Any, jax.Array, dict[str, jax.Array]]]
    value: Callable[[Params, Any, jax.Array], jax.Array]
    values_while_acting: bool


OneAct = Callable[..., tuple[jax.Array, dict[str, jax.Array]]]


def feed_forward(
    act: OneAct, value: Callable[[Params, jax.Array], jax.Array], per_env: bool = False
) -> Acting:
    """The Acting of an agent without a core, from how it acts on one observation.

    Args:
      act: (acting params, obs [...], key) -> (action, extras) for one
        environment; with `per_env`, (acting params, obs, key, env_id) for
        behaviour that differs per environment (Ape-X's ε_i).
      value: (acting params, obs [..., *obs_shape]) -> values [...].
      per_env: whether `act` takes the environment's global index.

    """

    def step(
        params: Params,
        carry: Any,
        obs: jax.Array,
        reset: jax.Array,
        keys: PRNGKey,
        env_ids: jax.Array,
    ) -> tuple[Any, jax.Array, dict[str, jax.Array]]:
        del reset  # nothing carried, nothing to zero
        if per_env:
            batched = jax.vmap(act, in_axes=(None, 0, 0, 0))
            action, extras = batched(params, obs, keys, env_ids)
        else:
            action, extras = jax.vmap(act, in_axes=(None, 0, 0))(params, obs, keys)
        return carry, action, extras

    return Acting(
        lambda batch: (),
        step,
        lambda params, _, obs: value(params, obs),
        values_while_acting=False,
    )


class Agent(NamedTuple):
    """An RL agent as a bundle of pure functions (cf. optax.GradientTransformation).

    Attributes:
      init: key -> AgentState; the same key gives the same parameters everywhere.
      acting: how its actors act (`Acting`), from `acting_params`.
      update: (state, transitions [T, B], key) -> (state, metrics); all-reduces
        over the agent's `axis_name` when it has one.
      acting_params: agent state -> what the actors act with: the learner's
        parameters by default; older ones with policy lag; (parameters, ε)
        for ε-greedy learners.
      axis_name: the mesh axis `update` all-reduces over (the runner checks it
        matches its mesh), or None for an agent that runs on one device.
      state_spec: a PartitionSpec prefix of the agent's state: P() (the whole
        learner state replicated) or, for agents that keep a replay buffer in
        their state, a state whose buffer field is P("data") (one shard per
        device).

    """

    init: Callable[[PRNGKey], AgentState]
    acting: Acting
    update: Callable[[AgentState, Transition, PRNGKey], tuple[AgentState, Metrics]]
    acting_params: Callable[[Any], Any] = learner_params
    axis_name: str | None = None
    state_spec: Any = P()


class RunShape(NamedTuple):
    """The run as its agent sees it: what its config must fit and how long it is.

    Counts are global. `num_devices` is 1 where configs are checked before
    devices are chosen.

    Attributes:
      num_envs: environments over all devices; replay buffers are sized from
        it.
      unroll_length: steps per environment per update.
      recurrent: whether the network has a recurrent core.
      dict_observations: whether observations are dicts (an asymmetric
        actor-critic's, `Algorithm.dict_observations`). The library's own
        runs leave it False: agents read the observation's structure from
        `obs_example`.
      num_devices: devices the learner's batch is split over.
      num_updates: total number of `update` calls (>= 1), for the schedules.
      axis_name: the mesh axis `update` all-reduces gradients and metrics
        over, or None on one device.
      requested_devices: the devices per process the run asks for (its
        config's `devices`; 1 where it leaves them to the run), known while
        `num_devices` is still 1: a refusal's fix fits them too.
      devices_field: the config field that sets `requested_devices`
        (`devices`; a host-env run's learner's, `host.learner_devices`),
        which a refusal's fix names, with its flag.

    """

    num_envs: int = 1
    unroll_length: int = 1
    recurrent: bool = False
    dict_observations: bool = False
    num_devices: int = 1
    num_updates: int = 1
    axis_name: str | None = None
    requested_devices: int = 1
    devices_field: str = "devices"


def distribution_sample(
    config: Any, spec: dict[str, Any], distribution: Any
) -> Callable[[jax.Array, PRNGKey], jax.Array]:
    """The default `Algorithm.exported_sampler`: a sample of the network's distribution.

    What an actor-critic's exported policy does: sample its logits (or its
    Gaussian), as its actors did.
    """
    del config, spec
    return distribution.sample


def no_policy_extras(config: Any, shape: RunShape, updates: int) -> dict[str, Any]:
    """The default `Algorithm.policy_extras`: nothing beyond the network."""
    del config, shape, updates
    return {}


class AgentFactory(Protocol):
    """The one signature of every agent factory (`make_ppo`, `make_dqn`, ...)."""

    def __call__(
        self, config: Any, network: Any, obs_example: jax.Array, run: RunShape
    ) -> Agent:
        """The agent of `config` on `network` for the run `run`.

        Args:
          config: the algorithm's hyper-parameters (its record's `config_type`).
          network: the learner network its record's `make_networks` returns.
          obs_example: one observation (unbatched), to initialise parameters.
          run: the run's shape, length and mesh axis (`RunShape`).

        """
        ...


def check_agent_args(
    validate: Callable[..., None], config: Any, run: RunShape, *, fits: bool = True
) -> None:
    """What every agent factory checks first: its config (`validate`), its budget.

    With `fits`, `validate` also checks that the config fits `run`'s
    environments and unroll (a learner that checks its batches itself, as
    PPO's does, passes False).
    """
    validate(config, run if fits else None)
    if run.num_updates < 1:
        raise ValueError(f"num_updates={run.num_updates} must be >= 1.")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Algorithm:
    """Everything the rest of the library knows about one algorithm.

    Each algorithm module defines one and `agents.registry` lists it; nothing
    outside `agents/` names an algorithm, it asks its record.

    Attributes:
      name: the `--algo` value, and the name of its section of a TrainConfig.
      summary: one line for `--help` and listings.
      config_type: its hyper-parameter dataclass.
      default_config: () -> its defaults; unless given, `config_type`'s
        (Ape-X gives DQN's config type other defaults).
      make_agent: its factory (`AgentFactory`).
      make_networks: (config, NetworkConfig, observation spec, action spec) ->
        (acting network, learner network): what the actors, evaluation and
        exported policies run, and what the factory takes.
      validate: (config, RunShape or None) -> None; raises ConfigError naming
        the value, the rule and the fix. With a RunShape it also checks that
        the config fits the run's environments and unroll.
      keeps_replay: config -> whether its agent state holds a replay buffer
        split over the devices (`Agent.state_spec` is not P()).
      replay_per_env: whether that replay is one shard per environment (its
        first axis the run's environments, as R2D2's), so that a resume may
        split it over another device count as it splits the environments;
        False: one shard per device, resumed only on as many devices.
      replay_items: (config, RunShape) -> (items one update adds to its
        replay, what an item is: "transitions"), for the rule that a run
        stores its config's `min_replay` items before its budget ends
        (`training.validate`); None for an algorithm that learns from the
        first update.
      env_multiple: (config, RunShape) -> the number that each device's
        environment count must be a multiple of (PPO's minibatches may split
        environments into groups); 1 for most. The library holds every run
        to it (`training.validate`, and again on the devices chosen) and
        chooses device counts and sweep layouts that keep it.
      host_refusal: (config, env.id) -> why the host-env runner refuses
        this config, one line naming the field and the fix, or None where it
        runs it (a training run on a host environment is refused with it).
        IMPALA's refuses a policy lag: the host runner lags by itself.
      recurrent: whether its agents take a network with a recurrent core
        (`--network.core lstm|gru|mingru`).
      dict_observations: whether its agents take dict observations (an
        asymmetric actor-critic: `network.policy_obs_key`, `value_obs_key`).
      preset_section: for a user's algorithm, the built-in algorithm whose
        preset sections it reads where a preset has none of its own (a
        variant of PPO: "ppo"), its run fields and hyper-parameters, not its
        target; every hyper-parameter such a section sets must be a field of
        `config_type`. None: such a preset gives the algorithm's defaults.
      action_kinds: the action spaces its agents act in: "discrete"
        (`Discrete`), "continuous" (`Box`), or both; another environment is
        refused before `make_networks` is called.
      policy_extras: (config, RunShape, updates done) -> what its exported
        policy keeps in policy.json beyond the network, for its
        `exported_sampler` (a dict of JSON values whose keys policy.json does
        not use otherwise). A Q-learner's (`q_learning.exported_epsilon`):
        {"epsilon": the ε it ended training with}. Default: {}.
      exported_sampler: (config, policy.json's contents, the acting network's
        `Distribution`) -> `sample(output [*batch, ...], key) -> action
        [*batch, ...]`: how an exported policy's `act` (and `step`) samples
        the acting network's first output, one key for the batch. Default
        (`distribution_sample`): the distribution's own sample, as an
        actor-critic acts. A Q-learner's head holds action values, not
        logits: it sets `q_learning.exported_epsilon_greedy` (ε-greedy with
        policy.json's `epsilon`), or its exports sample a softmax over Q.
        Evaluation acts with the distribution's mode (argmax Q) either way.

    """

    name: str
    summary: str
    config_type: type
    default_config: Callable[[], Any] | None = None
    make_agent: AgentFactory
    make_networks: Callable[..., tuple[Any, Any]]
    validate: Callable[[Any, RunShape | None], None]
    keeps_replay: Callable[[Any], bool] = lambda config: False
    replay_per_env: bool = False
    replay_items: Callable[[Any, RunShape], tuple[int, str]] | None = None
    env_multiple: Callable[[Any, RunShape], int] = lambda config, shape: 1
    host_refusal: Callable[[Any, str], str | None] = lambda config, env_id: None
    recurrent: bool = False
    dict_observations: bool = False
    preset_section: str | None = None
    action_kinds: tuple[str, ...] = ("discrete", "continuous")
    policy_extras: Callable[[Any, RunShape, int], dict[str, Any]] = no_policy_extras
    exported_sampler: Callable[..., Callable[[jax.Array, PRNGKey], jax.Array]] = (
        distribution_sample
    )

    def __post_init__(self) -> None:
        # `dataclasses.replace(record, config_type=New)` copies the filled-in
        # default (the old config type): the default follows the new type.
        default = self.default_config
        if default is None or (
            isinstance(default, type) and not issubclass(default, self.config_type)
        ):
            object.__setattr__(self, "default_config", self.config_type)
