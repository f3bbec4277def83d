"""IMPALA: actor-critic with V-trace off-policy correction and policy lag.

Espeholt et al. (2018), "IMPALA: Scalable Distributed Deep-RL with Importance
Weighted Actor-Learner Architectures", https://arxiv.org/abs/1802.01561.

Here actors and learner run in one compiled program, so actors are only as stale
as `policy_lag` makes them: they act with the learner's parameters from K
updates earlier, kept in a ring buffer in the agent's state, and V-trace corrects
for the difference between that behaviour policy and the learner's.
"""

import dataclasses
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
from jax.flatten_util import ravel_pytree
from jax.sharding import PartitionSpec as P

from purejaxdrl.agents.actor_critic import (
    actor_critic_acting,
    actor_critic_networks,
    learner_outputs_and_bootstrap,
    learning_rewards,
    replay_example,
)
from purejaxdrl.agents.base import Agent, Algorithm, RunShape, check_agent_args
from purejaxdrl.agents.fields import ActorCriticFields, OptimizerChoiceFields
from purejaxdrl.agents.optim import (
    check_optimizer,
    flat_gradient_step,
    flat_optimizer_state,
    learner_optimizer,
)
from purejaxdrl.config import check, check_ranges
from purejaxdrl.config_docs import field_example
from purejaxdrl.networks import AnyNetwork
from purejaxdrl.parallel import DATA_AXIS
from purejaxdrl.replay import Buffer, device_key, make_sequence_buffer
from purejaxdrl.rl.losses import actor_critic_loss
from purejaxdrl.rl.vtrace import vtrace
from purejaxdrl.setup_warnings import warn_once
from purejaxdrl.types import Metrics, Params, PRNGKey, PyTree, Transition


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class IMPALAConfig(OptimizerChoiceFields, ActorCriticFields):
    """IMPALA hyper-parameters; defaults are the paper's Atari optimiser and loss.

    Rewards are not clipped unless `reward_clip` is set (the paper clips
    Atari's to [-1, 1]; the Atari presets set 1).

    Static fields change shapes or program structure (changing them recompiles);
    the others are array leaves that can be traced, vmapped and swept. IMPALA's
    own fields are described below. Those it shares with other learners
    (learning rate, discount, rewards, loss weights, optimiser) are declared
    and described in `agents.fields` (`ActorCriticFields`,
    `OptimizerChoiceFields`); `help(IMPALAConfig)` and `--algo impala
    --help` describe every field, the shared ones too.

    Attributes:
      policy_lag: K >= 0; actors act with the learner's parameters from K updates
        earlier (0: none; device environments only: host ones lag by themselves).
      vtrace_correction: weight by the importance ratios π/μ. False ignores them
        (ρ = c = 1 whatever clip_rho, clip_c and clip_pg_rho): plain on-policy
        actor-critic targets on stale data, for ablations of the correction.
      replay_ratio: r in [0, 1): the fraction of each learner batch replayed
        from a buffer of past trajectories (IMPALA's experience replay,
        Espeholt et al., 2018, section 5.2.2), corrected by V-trace like any
        stale data. With B fresh trajectories per device, B r / (1 - r) are
        replayed (r = 0.5: as many as fresh), rounded to a whole number of
        at least 1; a ratio that this rounding moves by more than 10% (as
        0.05 with 8 environments per device, which replays 1 of 9) warns
        once, naming the one achieved. 0: no buffer.
      replay_size: trajectories the buffer holds, over all devices.
      vtrace_lambda: λ of the trace coefficients c = λ min(c̄, π/μ).
      clip_rho: ρ̄, truncation of the importance weights in the value targets.
      clip_c: c̄, truncation of the trace coefficients.
      clip_pg_rho: truncation of the importance weights in the policy gradient.

    """

    # Static.
    policy_lag: int = jax.tree.static(default=0)
    vtrace_correction: bool = jax.tree.static(default=True)
    replay_ratio: float = jax.tree.static(default=0.0)
    replay_size: int = jax.tree.static(default=1024)
    # Dynamic.
    vtrace_lambda: float | jax.Array = 1.0
    clip_rho: float | jax.Array = 1.0
    clip_c: float | jax.Array = 1.0
    clip_pg_rho: float | jax.Array = 1.0
    # The paper's, where they differ from the groups' defaults.
    learning_rate: float | jax.Array = 6e-4
    max_grad_norm: float | jax.Array = 40.0
    eps: float | jax.Array = 0.01


class IMPALAState(NamedTuple):
    """IMPALA's learner state: AgentState's fields plus a ring of past parameters.

    Attributes:
      params: the learner's current parameters.
      opt_state: optimiser state, over the flat parameter vector.
      step: int32 [], the number of updates done.
      past_params: float32 [K, P], the flat parameters (`ravel_pytree` order)
        of the last K updates: slot n % K holds the learner's parameters before
        update n, so at update n it still holds those of update n - K, which
        are the actors' (the initial parameters while n < K). [0, P] when K = 0.
      buffer: with a replay ratio, this device's shard of past trajectories
        (a sequence buffer's RingState); () without.

    """

    params: Params
    opt_state: optax.OptState
    step: jax.Array
    past_params: jax.Array
    buffer: Any = ()


def loss(
    params: Params,
    traj: Transition,
    key: PRNGKey,
    *,
    network: AnyNetwork,
    config: IMPALAConfig,
) -> tuple[jax.Array, Metrics]:
    """IMPALA's objective (Espeholt et al., 2018, section 4.2) on a batch [T, B].

    `actor_critic_loss` with V-trace's policy-gradient advantages and value
    targets: the learner's values of the observations, and of the final
    observations that episodes bootstrap from, under its current parameters;
    the behaviour log-probabilities from the transitions.
    """
    dist = network.distribution
    # V(final observation) only enters the targets, without gradient.
    policy, v_tm1, v_t = learner_outputs_and_bootstrap(network, params, traj)
    log_prob = dist.log_prob(policy, traj.action)  # [T, B]
    log_rho = jax.lax.stop_gradient(log_prob) - traj.log_prob
    vtrace_stream = functools.partial(
        vtrace,
        lambda_=config.vtrace_lambda,
        clip_rho_threshold=config.clip_rho if config.vtrace_correction else 1.0,
        clip_c_threshold=config.clip_c if config.vtrace_correction else 1.0,
        clip_pg_rho_threshold=config.clip_pg_rho if config.vtrace_correction else 1.0,
    )
    # Streams: the columns of [T, B]. Targets are constants (values and ratios
    # without gradient); uncorrected, log ρ = 0 and clips of 1 make ρ = c = 1.
    targets = jax.vmap(vtrace_stream, in_axes=1, out_axes=1)(
        jax.lax.stop_gradient(v_tm1),
        v_t,
        learning_rewards(traj.reward, config.reward_scale, config.reward_clip),
        config.gamma * traj.discount,
        log_rho if config.vtrace_correction else jnp.zeros_like(log_rho),
        traj.truncated,
    )
    total, metrics = actor_critic_loss(
        log_prob,
        targets.pg_advantage_tm1,
        v_tm1,
        targets.target_tm1,
        dist.entropy(policy, key),
        value_cost=config.value_cost,
        entropy_cost=config.entropy_cost,
    )
    rho = jnp.exp(log_rho)
    return total, metrics | {
        # k3 estimator of KL(behaviour || learner) (Schulman, 2020).
        "approx_kl": jnp.mean(rho - 1.0 - log_rho),
        "vtrace/rho_mean": jnp.mean(rho),
        "vtrace/rho_clip_fraction": jnp.mean(rho > config.clip_rho),
    }


def make_impala(
    config: IMPALAConfig, network: AnyNetwork, obs_example: jax.Array, run: RunShape
) -> Agent:
    """Builds IMPALA (an `AgentFactory`): one gradient step on `loss` per batch.

    Its state is an `IMPALAState`, and its `acting_params` are the learner's
    parameters from `config.policy_lag` updates earlier. With replay, `run`
    sizes the buffer (environments, devices, unroll length).
    """
    check_agent_args(validate, config, run)
    axis_name = run.axis_name
    lag = config.policy_lag
    replay = _make_replay(config, run)
    acting = actor_critic_acting(network)
    learning_rate, optimizer = learner_optimizer(
        config, run.num_updates, eps=config.eps
    )
    objective = functools.partial(loss, network=network, config=config)

    def init(key: PRNGKey) -> IMPALAState:
        params = network.init(key, obs_example)
        flat, _ = ravel_pytree(params)
        # Every slot starts as the initial parameters: the first K updates'
        # actors act with them.
        past = jnp.broadcast_to(flat, (lag, flat.size))
        step = jnp.zeros((), jnp.int32)
        buffer = (
            () if replay is None else replay.init(*replay_example(network, obs_example))
        )
        opt_state = flat_optimizer_state(optimizer, params)
        return IMPALAState(params, opt_state, step, past, buffer)

    def acting_params(state: IMPALAState) -> Params:
        if lag == 0:
            return state.params
        _, unravel = ravel_pytree(state.params)
        return unravel(state.past_params[state.step % lag])

    def update(
        state: IMPALAState, traj: Transition, key: PRNGKey
    ) -> tuple[IMPALAState, Metrics]:
        buffer = state.buffer
        if replay is not None:
            key, key_replay = jax.random.split(key)
            key_replay = device_key(key_replay, axis_name)
            traj, buffer = with_replayed(replay, buffer, traj, key_replay)
        new_state, metrics = flat_gradient_step(
            objective, optimizer, state, traj, key, axis_name=axis_name
        )
        past = state.past_params
        if lag > 0:
            # Slot step % K held the parameters of update step - K, which the
            # actors just used for the last time.
            past = past.at[state.step % lag].set(ravel_pytree(state.params)[0])
        metrics["learning_rate"] = learning_rate(state.step)
        return new_state._replace(past_params=past, buffer=buffer), metrics

    return Agent(
        init=init,
        acting=acting,
        update=update,
        acting_params=acting_params,
        axis_name=axis_name,
        state_spec=P()
        if replay is None
        else IMPALAState(P(), P(), P(), P(), P(DATA_AXIS)),
    )


def with_replayed(
    replay: Buffer, buffer: PyTree, traj: Transition, key: PRNGKey
) -> tuple[Transition, PyTree]:
    """The fresh trajectories [T, B] and replayed ones beside them, [T, B + R].

    Fresh trajectories enter the buffer first, so a replayed batch may hold
    some of them again (as in a FIFO replay of the paper's). A recurrent
    actor's start states are kept beside the steps.

    Returns:
      (the learner's batch, the buffer with the fresh trajectories added).

    """
    steps, starts = traj._replace(core_state=()), traj.core_state
    buffer = replay.add(buffer, steps, starts)
    old_steps, old_starts = replay.sample(buffer, key).item
    steps = jax.tree.map(lambda a, b: jnp.concatenate([a, b], axis=1), steps, old_steps)
    starts = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), starts, old_starts)
    return steps._replace(core_state=starts), buffer


def _make_replay(config: IMPALAConfig, shape: RunShape) -> Buffer | None:
    """The sequence buffer of IMPALA with replay, None without."""
    ratio = config.replay_ratio  # in [0, 1): `validate` checked it
    if ratio == 0:
        return None
    replayed = _replayed(ratio, shape.num_envs // shape.num_devices)
    capacity = config.replay_size // shape.num_devices
    return make_sequence_buffer(
        capacity, shape.unroll_length, replayed, with_starts=True
    )


def validate(config: IMPALAConfig, shape: RunShape | None = None) -> None:
    """IMPALA's range rules, and with `shape` that its replay holds an update.

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    check_optimizer("impala", config)
    check(
        0 <= config.policy_lag < 2**31,
        f"impala.policy_lag={config.policy_lag} must be >= 0 (and < 2**31) updates; "
        f"pass {field_example('impala.policy_lag', 0)} for none (act with the "
        "learner's parameters).",
    )
    check(
        0.0 <= config.replay_ratio < 1.0,
        f"impala.replay_ratio={config.replay_ratio} must be in [0, 1) (the replayed "
        f"fraction of a batch); e.g. {field_example('impala.replay_ratio', 0.5)}.",
    )
    check_ranges(
        "impala",
        config,
        positive=("learning_rate", "max_grad_norm", "reward_scale", "eps")
        + ("clip_rho", "clip_c", "clip_pg_rho"),
        non_negative=("entropy_cost", "value_cost", "reward_clip"),
        unit=("gamma", "vtrace_lambda"),
    )
    if shape is None:
        return
    _check_against_run(config, shape)
    if config.replay_ratio == 0:
        return
    size, devices = config.replay_size, shape.num_devices
    check(
        size % devices == 0 and size >= shape.num_envs,
        f"impala.replay_size={size} must hold one update's trajectories "
        f"(num_envs={shape.num_envs}) and split evenly over {devices} device(s); "
        f"raise it to a multiple of {devices} of at least {shape.num_envs}.",
    )
    _check_achieved_ratio(config.replay_ratio, shape)


def _replayed(ratio: float, local_envs: int) -> int:
    """Trajectories replayed per device beside `local_envs` fresh ones."""
    return max(1, round(local_envs * ratio / (1 - ratio)))


def _check_achieved_ratio(ratio: float, shape: RunShape) -> None:
    """Warns where whole replayed trajectories per device miss `ratio`.

    The replayed count is rounded per device, so with few environments per device
    the replayed fraction of a batch is not the one asked for, and it changes with
    the device count; beyond 10% relative that is said, once. A warning, not a
    refusal: eval, export and resume of a run trained so read this config back.
    """
    local = shape.num_envs // shape.num_devices
    replayed = _replayed(ratio, local)
    achieved = replayed / (local + replayed)
    if abs(achieved - ratio) <= 0.1 * ratio:
        return
    trajectories = "trajectory" if replayed == 1 else "trajectories"
    warn_once(
        f"impala.replay_ratio={ratio} with {local} environments per device "
        f"replays {replayed} {trajectories} beside the {local} fresh ones: a "
        f"replayed fraction of {achieved:.3g}, more than 10% off; for {ratio} "
        "give each device more environments (--num-envs), or pass "
        f"--impala.replay-ratio {achieved:.3g} to train with what it is.",
        key=("impala.replay_ratio", ratio, local),
    )


def _check_against_run(config: IMPALAConfig, shape: RunShape) -> None:
    """That the policy lag is shorter than the run and a batch's steps fit int32."""
    lag, updates = config.policy_lag, shape.num_updates
    per_update = shape.num_envs * shape.unroll_length
    fix = f"{field_example('impala.policy_lag', max(updates - 1, 0))}, or at least "
    check(
        lag < updates or updates < 1,  # < 1: `check_agent_args` says so
        f"impala.policy_lag={lag} is not less than the run's {updates} updates: "
        "the actors would only ever act with the initial parameters; pass at most "
        f"{fix}{field_example('total_steps', (lag + 1) * per_update)}.",
    )
    ratio = config.replay_ratio
    replayed = shape.num_envs * ratio / (1 - ratio)  # as `_make_replay` sizes it
    steps = round((shape.num_envs + replayed) * shape.unroll_length)
    check(
        steps < 2**31,
        f"impala.replay_ratio={ratio} makes each learner batch {steps} steps "
        f"(num_envs={shape.num_envs} fresh trajectories and {round(replayed)} "
        "replayed, x unroll_length), over the 2**31 a batch may index; lower "
        "it, e.g. --impala.replay-ratio 0.5.",
    )


def host_refusal(config: IMPALAConfig, env_id: str) -> str | None:
    """Why the host-env runner refuses `config`, or None: a policy lag K.

    Its actors lag by themselves (its `lag/*` metrics): K more would go unseen.
    """
    if (lag := config.policy_lag) == 0:
        return None
    return (
        f"impala.policy_lag={lag} is for device environments: the host-env runner "
        f"(env.id={env_id!r}) lags by itself, and its lag/mean and lag/max would "
        f"not count these {lag} updates; pass {field_example('impala.policy_lag', 0)}."
    )


ALGORITHM = Algorithm(
    name="impala",
    summary="IMPALA: V-trace actor-critic, policy lag, optional replay",
    config_type=IMPALAConfig,
    make_agent=make_impala,
    make_networks=actor_critic_networks,
    validate=validate,
    keeps_replay=lambda config: config.replay_ratio > 0,
    host_refusal=host_refusal,
    recurrent=True,
)
