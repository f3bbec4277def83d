"""R2D2: recurrent double Q-learning from replayed sequences.

Kapturowski et al. (2019), "Recurrent Experience Replay in Distributed
Reinforcement Learning", https://openreview.net/forum?id=r1lyTjAqYX. Each
environment's unroll of T steps is stored as one sequence, led by the last
`burn_in` steps of its unroll before (adjacent sequences overlap by the
burn-in, as the paper's 80-step sequences overlap by 40), with the core state
its actor had at the sequence's start ("stored state"). The learner unrolls a
sampled sequence from that state; its first `burn_in` steps only warm the
state up (no gradient, no loss), the T after them take n-step double
Q-learning targets under
the invertible value rescaling h (`rl.value_rescaling`), and the sequence's
priority becomes η max|δ| + (1 - η) mean|δ| of its TD errors. Actors explore
with Ape-X's per-environment ε_i by default, or with one annealed ε
(`per_actor_epsilon` false).

The replay keeps one prioritised shard per environment (`replay.env_shards`),
so the same sequences are drawn on 1 or 8 devices. A network without a core
(`--network.core none`) runs through the same learner with an empty state:
the feed-forward baseline of the same config.
"""

import dataclasses
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
from jax.sharding import PartitionSpec as P

from purejaxdrl.agents.base import (
    Agent,
    Algorithm,
    RunShape,
    check_agent_args,
)
from purejaxdrl.agents.fields import QLearningFields
from purejaxdrl.agents.optim import learner_optimizer
from purejaxdrl.agents.q_checks import (
    check_epsilon_falls,
    set_fields,
    warn_greedy_priorities,
    warn_unused,
    warn_unused_epsilons,
)
from purejaxdrl.agents.q_learning import (
    check_n_step_fits,
    exploration,
    exported_epsilon,
    exported_epsilon_greedy,
    make_q_acting,
    q_networks,
    target_network_step,
    warn_target_never_used,
)
from purejaxdrl.agents.r2d2_sequences import (
    Sequence,
    empty_tail,
    sequence_example,
    sequence_td,
    stateless,
    time_major,
    warn_burn_in_without_core,
    with_burn_in,
)
from purejaxdrl.agents.replay_sizes import (
    check_replay_sizes,
    check_target_tau,
    learning_updates,
    stored_items,
)
from purejaxdrl.config import check, check_ranges
from purejaxdrl.config_docs import field_example
from purejaxdrl.networks import AnyNetwork, Network, RecurrentNetwork
from purejaxdrl.parallel import DATA_AXIS
from purejaxdrl.replay import importance_weights, make_prioritised_buffer
from purejaxdrl.replay.env_shards import make_env_shards
from purejaxdrl.types import Metrics, Params, PRNGKey, Transition


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class R2D2Config(QLearningFields):
    """R2D2 hyper-parameters (the paper's values where they make sense here).

    A stored sequence is `burn_in` steps (default 0: none, the paper's
    "stored state" variant; the paper's R2D2 uses 40) of an environment's
    previous unroll followed by its unroll of `--unroll-length` steps (40:
    sequences of 80 overlapping by 40); the burn-in only warms up the core
    state, every step of the unroll is trained on. Replay sizes count
    sequences, over all environments, and split evenly over them (each
    environment has its own shard).

    R2D2 declares its own fields and its defaults of those it shares with
    DQN (optimiser, n-step targets, target network, replay sizes, ε schedule),
    which are declared and described in `agents.fields` (`QLearningFields`);
    `help(R2D2Config)` and `purejaxdrl train --algo r2d2 --help` describe all.

    Attributes:
      burn_in: steps of the previous unroll at each sequence's start (at
        most `--unroll-length`: all of it), unrolled without gradient or
        loss from the stored state.
      value_rescaling: learn h(Q), targets h(G + γ_boot h^-1(Q')), with the
        invertible h(x) = sign(x) (sqrt(|x| + 1) - 1) + ε x (Pohlen et al.,
        2018).
      adam_eps: Adam's ε (the paper's 1e-3).
      priority_eta: η of the sequence priority η max|δ| + (1 - η) mean|δ|
        (the paper's 0.9).
      importance_exponent: β of the importance weights (the paper's 0.6,
        fixed).
      rescale_eps: ε of h (the paper's 1e-3).

    """

    # Static.
    burn_in: int = jax.tree.static(default=0)
    value_rescaling: bool = jax.tree.static(default=True)
    # Dynamic.
    adam_eps: float | jax.Array = 1e-3
    priority_eta: float | jax.Array = 0.9
    importance_exponent: float | jax.Array = 0.6
    rescale_eps: float | jax.Array = 1e-3
    # R2D2's defaults of the shared fields (the paper's, but for the sizes).
    n_step: int = jax.tree.static(default=5)
    buffer_size: int = jax.tree.static(default=4096)
    batch_size: int = jax.tree.static(default=64)
    min_replay: int = jax.tree.static(default=256)
    target_every: int = jax.tree.static(default=2500)
    per_actor_epsilon: bool = jax.tree.static(default=True)
    priority_alpha: float = jax.tree.static(default=0.9)
    learning_rate: float | jax.Array = 1e-4
    gamma: float | jax.Array = 0.997
    max_grad_norm: float | jax.Array = 40.0


class R2D2State(NamedTuple):
    """The learner state, DQN's (`DQNState`) and the sequences' tails.

    Attributes:
      params, target_params, opt_state, step, grad_steps: as DQNState's.
      buffer: one prioritised shard per environment of this device.
      tail: each of this device's environments' last `burn_in` steps and the
        core state before them, leaves [E, burn_in, ...]: the start of its
        next stored sequence.

    """

    params: Params
    target_params: Params
    opt_state: optax.OptState
    step: jax.Array
    grad_steps: jax.Array
    buffer: Any
    tail: Sequence


def loss(
    params: Params,
    target_params: Params,
    seq: Sequence,
    weights: jax.Array,
    *,
    network: RecurrentNetwork,
    config: R2D2Config,
) -> tuple[jax.Array, jax.Array]:
    """The importance-weighted (`weights` [S]) mean of 0.5 mean δ² per sequence.

    δ [T - burn_in, S]: `sequence_td`'s TD errors of S sequences, returned too.
    """
    td = sequence_td(
        network, params, target_params, seq, burn_in=config.burn_in,
        n_step=config.n_step, gamma=config.gamma,
        rescale_eps=config.rescale_eps if config.value_rescaling else None,
    )  # fmt: skip
    per_sequence = 0.5 * jnp.mean(td * td, axis=0)
    return jnp.mean(weights * per_sequence), td


def make_r2d2(
    config: R2D2Config, network: AnyNetwork, obs_example: jax.Array, run: RunShape
) -> Agent:
    """Builds R2D2 on a recurrent Q-network (or a feed-forward one, stateless).

    An `AgentFactory`. Each update adds every environment's unroll (T steps
    after the burn-in, `run.unroll_length`) as one sequence to its shard,
    with the largest priority seen so far; once `min_replay` sequences are
    stored, `updates_per_step` gradient steps follow, all-reduced over
    `axis_name`, each writing its sequences' new priorities back. Its state is
    an `R2D2State` whose buffer is split over the run's devices.
    """
    check_agent_args(validate, config, run)
    axis_name = run.axis_name
    num_envs, unroll_length = run.num_envs, run.unroll_length
    if isinstance(network, Network):
        network = stateless(network)
    local_envs = num_envs // run.num_devices
    shards = make_env_shards(
        make_prioritised_buffer(
            config.buffer_size // num_envs,
            config.batch_size // num_envs,
            alpha=config.priority_alpha,
        ),
        local_envs,
    )
    objective = functools.partial(loss, network=network, config=config)
    _, optimizer = learner_optimizer(
        config,
        # One sequence per environment per update; the optimiser steps only
        # once learning starts, so a decaying rate decays over those updates.
        learning_updates(config.min_replay, num_envs, run.num_updates),
        steps_per_update=config.updates_per_step,
        eps=config.adam_eps,
    )

    def init(key: PRNGKey) -> R2D2State:
        params = network.init(key, obs_example)
        length = config.burn_in + unroll_length
        example = sequence_example(obs_example, length, network)
        return R2D2State(
            params,
            jax.tree.map(jnp.copy, params),
            optimizer.init(params),
            jnp.zeros((), jnp.int32),
            jnp.zeros((), jnp.int32),
            shards.init(example),
            empty_tail(obs_example, config.burn_in, network, local_envs),
        )

    epsilon_now, epsilons = exploration(config, run.num_updates, num_envs)

    def acting_params(state: R2D2State) -> tuple[Params, jax.Array]:
        return state.params, epsilon_now(state.step)

    acting = make_q_acting(network, epsilons)

    def grad_step(
        state: R2D2State, key: PRNGKey, ready: jax.Array, env_ids: jax.Array
    ) -> tuple[R2D2State, Metrics]:
        drawn = shards.sample(state.buffer, key, env_ids)
        seq = time_major(drawn.item)
        size = shards.size(state.buffer)
        weights = importance_weights(
            drawn.probability.reshape(-1), size, config.importance_exponent, axis_name
        )

        def loss_fn(params: Params) -> tuple[jax.Array, jax.Array]:
            return objective(params, state.target_params, seq, weights)

        state, td, metrics = target_network_step(
            state, loss_fn, optimizer, ready, target_every=config.target_every,
            target_tau=config.target_tau, axis_name=axis_name,
        )  # fmt: skip
        abs_td = jnp.abs(td)
        eta = config.priority_eta
        priority = eta * abs_td.max(axis=0) + (1.0 - eta) * abs_td.mean(axis=0)
        priority = jnp.maximum(priority, 1e-6).reshape(drawn.index.shape)
        # Before learning starts these are still the current network's TD
        # errors: priorities as R2D2's actors would compute them.
        buffer = shards.set_priorities(state.buffer, drawn.index, priority)
        return state._replace(buffer=buffer), metrics

    def update(
        state: R2D2State, traj: Transition, key: PRNGKey
    ) -> tuple[R2D2State, Metrics]:
        # The actors acted with `state.params` (`acting_params`).
        sequences, tail = with_burn_in(
            network, state.params, state.tail, traj, state.step == 0
        )
        state = state._replace(buffer=shards.add(state.buffer, sequences), tail=tail)
        first = 0 if axis_name is None else jax.lax.axis_index(axis_name) * local_envs
        env_ids = first + jnp.arange(local_envs, dtype=jnp.int32)
        # One sequence per environment and update: each shard's count.
        stored = stored_items(state.step, 1, config.buffer_size // num_envs)
        ready = stored >= config.min_replay // num_envs

        def body(state: R2D2State, key: PRNGKey) -> tuple[R2D2State, Metrics]:
            return grad_step(state, key, ready, env_ids)

        keys = jax.random.split(key, config.updates_per_step)
        state, metrics = jax.lax.scan(body, state, keys)
        metrics = {
            **jax.tree.map(jnp.mean, metrics),
            "epsilon": epsilon_now(state.step),
            "replay/size": (stored * num_envs).astype(jnp.float32),
            "learner/grad_steps": state.grad_steps.astype(jnp.float32),
        }
        return state._replace(step=state.step + 1), metrics

    return Agent(
        init=init,
        acting=acting,
        update=update,
        acting_params=acting_params,
        axis_name=axis_name,
        state_spec=R2D2State(P(), P(), P(), P(), P(), P(DATA_AXIS), P(DATA_AXIS)),
    )


def validate(config: R2D2Config, shape: RunShape | None = None) -> None:
    """R2D2's range rules, and with `shape` that its sequences fit the run.

    Warns about ε fields that its exploration mode does not use, and about
    `rescale_eps` set while `value_rescaling` is off.

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    check_ranges(
        "r2d2",
        config,
        at_least_one=("n_step", "buffer_size", "batch_size", "min_replay")
        + ("updates_per_step", "target_every"),
        positive=("learning_rate", "adam_eps", "max_grad_norm", "rescale_eps"),
        non_negative=("epsilon_alpha", "priority_alpha"),
        unit=("gamma", "epsilon", "epsilon_start", "epsilon_end", "epsilon_fraction")
        + ("priority_eta", "importance_exponent"),
    )
    check(
        config.burn_in >= 0,
        f"r2d2.burn_in={config.burn_in} must be >= 0 (0: no burn-in); pass e.g. "
        f"{field_example('r2d2.burn_in', 0)}.",
    )
    # Sequences, not transitions: the multiples of num_envs below give room
    # for an update's (`check_replay_sizes`).
    check_replay_sizes("r2d2", config, None)
    check_n_step_fits("r2d2", config, shape)  # a sequence's targets: its unroll
    check_target_tau("r2d2", config)
    check_epsilon_falls("r2d2", config)
    warn_unused_epsilons("r2d2", config)
    warn_greedy_priorities("r2d2", config)
    warn_unused_rescaling(config)
    if shape is None:
        return
    warn_target_never_used("r2d2", config, shape, shape.num_envs)  # sequences
    warn_burn_in_without_core(config.burn_in, shape.recurrent)
    unroll = shape.unroll_length
    check(
        config.burn_in <= unroll,
        f"r2d2.burn_in={config.burn_in} must be at most unroll_length="
        f"{unroll}: a sequence's burn-in is the last steps of the "
        f"unroll before; lower it, e.g. {field_example('r2d2.burn_in', unroll)}, "
        f"or raise {field_example('unroll_length', config.burn_in)}.",
    )
    for field in ("buffer_size", "batch_size", "min_replay"):
        value = getattr(config, field)
        fitting = max(1, value // shape.num_envs) * shape.num_envs
        check(
            value % shape.num_envs == 0,
            f"r2d2.{field}={value} must be a multiple of num_envs="
            f"{shape.num_envs}: each environment keeps its own replay shard; "
            f"e.g. {field_example(f'r2d2.{field}', fitting)}.",
        )


def warn_unused_rescaling(config: R2D2Config) -> None:
    """Warns once when `rescale_eps` is set but `value_rescaling` is off.

    As `q_checks.warn_unused_epsilons`: set means away from its default (by
    a preset or by you), and the warning names the field, not its value, so a
    sweep over it warns once. Without rescaling the loss never reads ε of h.
    """
    if config.value_rescaling:
        return
    unused = set_fields("r2d2", config, ("rescale_eps",))
    if not unused:
        return
    why = (
        "Q and its targets are learnt unrescaled; pass "
        "--r2d2.value-rescaling true to learn h(Q)"
    )
    warn_unused(unused, "r2d2.value_rescaling=false", why, ("unused rescaling",))


ALGORITHM = Algorithm(
    name="r2d2",
    summary="R2D2: recurrent double Q-learning from prioritised sequence replay",
    config_type=R2D2Config,
    make_agent=make_r2d2,
    make_networks=q_networks,
    validate=validate,
    keeps_replay=lambda config: True,
    replay_per_env=True,  # `env_shards`: a resume re-splits it
    replay_items=lambda config, shape: (shape.num_envs, "sequences"),
    recurrent=True,
    action_kinds=("discrete",),
    policy_extras=exported_epsilon,  # an exported policy is ε-greedy
    exported_sampler=exported_epsilon_greedy,
)
