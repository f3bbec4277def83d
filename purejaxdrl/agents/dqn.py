"""DQN and Ape-X: double Q-learning from a device-resident replay buffer.

Mnih et al. (2015), "Human-level control through deep reinforcement learning";
van Hasselt et al. (2016), double Q-learning; Wang et al. (2016), dueling
networks; Horgan et al. (2018), "Distributed Prioritized Experience Replay"
(Ape-X), https://arxiv.org/abs/1803.00933.

Ape-X's actors and replay live here in one compiled program: every environment
is an actor with its own exploration rate ε_i = ε^(1 + α i / (N - 1)); the
n-step transitions of each unroll enter this device's shard of the replay with
their TD errors as initial priorities; the learner samples each device's shard,
all-reduces its gradients, and writes the new priorities back. Plain DQN is the
same learner with one annealed ε and uniform replay.
"""

import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax
from jax.sharding import PartitionSpec as P

from purejaxdrl.agents import q_learning
from purejaxdrl.agents.base import (
    Agent,
    Algorithm,
    RunShape,
    check_agent_args,
)
from purejaxdrl.agents.dqn_config import DQNConfig, validate
from purejaxdrl.agents.optim import learner_optimizer
from purejaxdrl.agents.q_learning import (
    epsilon_greedy_acting,
    exploration,
    q_networks,
    target_network_step,
)
from purejaxdrl.agents.replay_sizes import (
    learning_updates,
    merge_steps,
    replay_shard_sizes,
    stored_items,
    transitions_per_update,
)
from purejaxdrl.networks import AnyNetwork
from purejaxdrl.parallel import DATA_AXIS
from purejaxdrl.replay import (
    Buffer,
    Sample,
    device_key,
    importance_weights,
    make_prioritised_buffer,
    make_uniform_buffer,
)
from purejaxdrl.rl.nstep import n_step_targets
from purejaxdrl.types import Metrics, Params, PRNGKey, Transition


class DQNState(NamedTuple):
    """The learner state with its replay shard.

    Attributes:
      params: online Q-network parameters.
      target_params: the target network's, copied every `target_every` steps.
      opt_state: Adam's state.
      step: int32 [], runner updates done.
      grad_steps: int32 [], gradient steps done.
      buffer: this device's replay shard (RingState or PrioritisedState).

    """

    params: Params
    target_params: Params
    opt_state: optax.OptState
    step: jax.Array
    grad_steps: jax.Array
    buffer: object


# (params, obs [B, ...]) -> the network's first output: DQN's Q-values [B, A].
Head = Callable[[Params, jax.Array], jax.Array]


class Replayed(NamedTuple):
    """One stored n-step transition (unbatched in `init`, [n] when added)."""

    observation: jax.Array
    action: jax.Array
    reward: jax.Array  # the n-step return G
    discount: jax.Array  # γ_boot: γ^k, 0 after a termination
    next_observation: jax.Array  # the final observation G bootstraps from


def td_errors(
    q_values: Head, params: Params, target: Params, item: Replayed
) -> jax.Array:
    """Double Q-learning's TD errors (van Hasselt et al., 2016), float32 [B].

    The online network picks a' at the next observation, the target network
    values it: δ = G + γ_boot Q_target(s', argmax_a Q(s', a)) - Q(s, a).
    """
    q = q_values(params, item.observation)
    q_taken = jnp.take_along_axis(q, item.action[:, None], axis=-1)[:, 0]
    next_online = q_values(params, item.next_observation)
    next_target = q_values(target, item.next_observation)
    best = jnp.argmax(next_online, axis=-1)[:, None]
    bootstrap = jnp.take_along_axis(next_target, best, axis=-1)[:, 0]
    # `where`, not a product with γ_boot = 0: after a termination the next
    # observation may be anything, inf included, and 0 * inf is NaN.
    bootstrap = jnp.where(item.discount == 0, 0.0, bootstrap)
    # Defensive: `td_errors` is differentiated in `params` only, and the
    # bootstrap is the target network's (mut25 Q2: dropping it changes nothing).
    target_q = item.reward + item.discount * jax.lax.stop_gradient(bootstrap)
    return target_q - q_taken


def loss(
    params: Params,
    target_params: Params,
    item: Replayed,
    weights: jax.Array,
    *,
    apply: Head,
    config: DQNConfig,
) -> tuple[jax.Array, jax.Array]:
    """DQN's objective on a batch: the weighted Huber loss of `td_errors`.

    `make_dqn`'s `loss_fn` has this signature: `item` the drawn transitions
    [B, ...], `weights` their importance weights [B] (ones under uniform
    replay), `apply` the network's first output (`Head`), `config` the run's
    section (unused here). Returns (scalar loss, TD errors float32 [B]), whose
    |δ| + ε are the items' new priorities under prioritised replay.
    """
    del config
    td = td_errors(apply, params, target_params, item)
    return jnp.mean(weights * optax.huber_loss(td, delta=1.0)), td


# (params, target_params, item, weights, *, apply, config) -> (loss, td [B]).
DQNLoss = Callable[..., tuple[jax.Array, jax.Array]]


def initial_td_errors(q_values: Head, params: Params, item: Replayed) -> jax.Array:
    """Ape-X's initial priorities' TD errors, float32 [B].

    Ape-X's actors hold the online network only: they bootstrap from its own
    greedy value. One forward pass over observations and next ones.
    """
    both = jnp.concatenate([item.observation, item.next_observation])
    q, q_next = jnp.split(q_values(params, both), 2)
    q_taken = jnp.take_along_axis(q, item.action[:, None], axis=-1)[:, 0]
    # Masked, not multiplied by γ_boot = 0, as in `td_errors`.
    bootstrap = jnp.where(item.discount == 0, 0.0, q_next.max(axis=-1))
    return item.reward + item.discount * bootstrap - q_taken


def to_replay(traj: Transition, n_step: int, gamma: jax.Array) -> Replayed:
    """An unroll [T, B] as n-step transitions [T * B], bootstrapping from finals."""
    nstep = jax.vmap(n_step_targets, in_axes=(1, 1, 1, None, None), out_axes=1)
    ret, boot, index = nstep(traj.reward, traj.discount, traj.truncated, n_step, gamma)
    final = traj.final_observation
    shape = index.shape + (1,) * (final.ndim - 2)
    next_obs = jnp.take_along_axis(final, index.reshape(shape), axis=0)
    return Replayed(
        merge_steps(traj.observation).astype(jnp.float32),
        merge_steps(traj.action).astype(jnp.int32),
        merge_steps(ret),
        merge_steps(boot),
        merge_steps(next_obs).astype(jnp.float32),
    )


class Learner(NamedTuple):
    """What `learn` needs from its factory: the config and the bound pieces."""

    config: DQNConfig
    buffer: Buffer
    optimizer: optax.GradientTransformation
    apply: Head
    num_updates: int
    axis_name: str | None
    loss_fn: DQNLoss = loss


def learn(
    state: DQNState, key: PRNGKey, ready: jax.Array, learner: Learner
) -> tuple[DQNState, Metrics]:
    """`updates_per_step` gradient steps, their mean metrics; before `ready`, none."""
    config = learner.config
    keys = jax.random.split(device_key(key, learner.axis_name), config.updates_per_step)
    if config.prioritised:
        state, metrics = learn_prioritised(state, keys, ready, learner)
    else:
        state, metrics = learn_uniform(state, keys, ready, learner)
    return state, jax.tree.map(jnp.mean, metrics)


def gradient_step(
    state: DQNState,
    item: Replayed,
    weights: jax.Array,
    ready: jax.Array,
    learner: Learner,
) -> tuple[DQNState, jax.Array, Metrics]:
    """One step of `learner.loss_fn` on a drawn batch: (state, TD errors, metrics)."""
    config = learner.config

    def objective(params: Params) -> tuple[jax.Array, jax.Array]:
        target, apply = state.target_params, learner.apply
        return learner.loss_fn(
            params, target, item, weights, apply=apply, config=config
        )

    return target_network_step(
        state, objective, learner.optimizer, ready, target_every=config.target_every,
        target_tau=config.target_tau, axis_name=learner.axis_name,
    )  # fmt: skip


def learn_uniform(
    state: DQNState, keys: PRNGKey, ready: jax.Array, learner: Learner
) -> tuple[DQNState, Metrics]:
    """A step on a uniform draw per key [S]; the steps' metrics, leaves [S].

    The draws do not depend on the steps: all are drawn first, vmapped.
    """
    drawn = jax.vmap(lambda k: learner.buffer.sample(state.buffer, k))(keys)

    def step(carry: DQNState, drawn: Sample) -> tuple[DQNState, Metrics]:
        weights = jnp.ones_like(drawn.probability)
        carry, _, metrics = gradient_step(carry, drawn.item, weights, ready, learner)
        return carry, metrics

    return jax.lax.scan(step, state, drawn)


def learn_prioritised(
    state: DQNState, keys: PRNGKey, ready: jax.Array, learner: Learner
) -> tuple[DQNState, Metrics]:
    """A step on a prioritised draw per key [S], writing the items' priorities.

    Importance weights with β annealed from `beta_start` to 1 over the run.
    Without `prefetch` each step draws from the priorities the step before
    wrote. With it every batch is drawn first (Ape-X's learner prefetches
    likewise), in one vmapped walk down the sum-tree, and the steps'
    priorities are written together after the last step. Before learning
    starts they are still the current network's TD errors, as Ape-X's
    initial ones are. Returns the steps' metrics, leaves [S].
    """
    config, buffer = learner.config, learner.buffer
    start = config.beta_start
    beta = start + (1.0 - start) * jnp.minimum(state.step / learner.num_updates, 1.0)
    size = state.buffer.ring.size[0]

    def step(carry: DQNState, drawn: Sample) -> tuple[DQNState, tuple]:
        weights = importance_weights(drawn.probability, size, beta, learner.axis_name)
        carry, td, metrics = gradient_step(carry, drawn.item, weights, ready, learner)
        return carry, (td, metrics)

    def sample_and_step(carry: DQNState, key: PRNGKey) -> tuple[DQNState, Metrics]:
        drawn = buffer.sample(carry.buffer, key)
        carry, (td, metrics) = step(carry, drawn)
        priority = jnp.abs(td) + config.priority_eps
        replay = buffer.set_priorities(carry.buffer, drawn.index, priority)
        return carry._replace(buffer=replay), metrics

    if not config.prefetch:
        return jax.lax.scan(sample_and_step, state, keys)
    drawn = jax.vmap(lambda k: buffer.sample(state.buffer, k))(keys)
    state, (td, metrics) = jax.lax.scan(step, state, drawn)
    priority = jnp.abs(td) + config.priority_eps
    index = drawn.index.reshape(-1)
    replay = buffer.set_priorities(state.buffer, index, priority.reshape(-1))
    return state._replace(buffer=replay), metrics


def make_dqn(
    config: DQNConfig,
    network: AnyNetwork,
    obs_example: jax.Array,
    run: RunShape,
    name: str = "dqn",
    *,
    loss_fn: DQNLoss = loss,
) -> Agent:
    """Builds DQN (uniform replay, annealed ε) or Ape-X (prioritised, ε_i).

    An `AgentFactory`. Each update adds the unroll's n-step transitions to
    this device's replay shard, then, once `min_replay` transitions are
    stored, takes `updates_per_step` gradient steps of double Q-learning
    (Huber loss, importance-weighted when prioritised), all-reduced over
    `axis_name`. Its state is a `DQNState` whose buffer is split over
    `run.num_devices` (ValueError where a size does not split evenly); N, its
    environments, sets Ape-X's ε_i. `name` is the section its errors name.

    `loss_fn` replaces the objective, with `loss`'s signature: a variant is
    `functools.partial(make_dqn, loss_fn=my_loss)` in a record of its own,
    its config maybe a subclass of `DQNConfig`. The actors stay ε-greedy on
    the network's first output; Ape-X's initial priorities stay DQN's.
    """
    # The run's check (its record's `validate`) has warned of the config.
    check_agent_args(functools.partial(validate, name=name, warn=False), config, run)
    axis_name = run.axis_name
    num_envs, num_devices = run.num_envs, run.num_devices
    capacity, batch, min_size = replay_shard_sizes(name, config, num_devices)
    if config.prioritised:
        buffer: Buffer = make_prioritised_buffer(
            capacity, batch, alpha=config.priority_alpha
        )
    else:
        buffer = make_uniform_buffer(capacity, batch)
    # Adam's ε as Rainbow's (Hessel et al., 2018). The optimiser steps only
    # once learning starts: a decaying rate decays over those updates.
    learning = learning_updates(
        config.min_replay, num_envs * run.unroll_length, run.num_updates
    )
    _, optimizer = learner_optimizer(
        config, learning, steps_per_update=config.updates_per_step, eps=1.5e-4
    )

    def head(params: Params, obs: jax.Array) -> jax.Array:
        return network.apply(params, obs)[0]

    learner = Learner(
        config, buffer, optimizer, head, run.num_updates, axis_name, loss_fn
    )
    epsilon_now, epsilons = exploration(config, run.num_updates, num_envs)

    def init(key: PRNGKey) -> DQNState:
        params = network.init(key, obs_example)
        example = Replayed(
            jnp.asarray(obs_example, jnp.float32),
            jnp.int32(0),
            jnp.float32(0),
            jnp.float32(0),
            jnp.asarray(obs_example, jnp.float32),
        )
        return DQNState(
            params,
            jax.tree.map(jnp.copy, params),
            optimizer.init(params),
            jnp.zeros((), jnp.int32),
            jnp.zeros((), jnp.int32),
            buffer.init(example),
        )

    def acting_params(state: DQNState) -> tuple[Params, jax.Array]:
        return state.params, epsilon_now(state.step)

    def update(
        state: DQNState, traj: Transition, key: PRNGKey
    ) -> tuple[DQNState, Metrics]:
        items = to_replay(traj, config.n_step, config.gamma)
        if config.prioritised:
            td = initial_td_errors(head, state.params, items)
            replay = buffer.add(state.buffer, items, jnp.abs(td) + config.priority_eps)
        else:
            replay = buffer.add(state.buffer, items)
        state = state._replace(buffer=replay)
        stored = stored_items(state.step, items.reward.shape[0], capacity)
        state, metrics = learn(state, key, stored >= min_size, learner)
        metrics = {
            **metrics,
            "epsilon": epsilon_now(state.step),
            "replay/size": (stored * num_devices).astype(jnp.float32),
            "learner/grad_steps": state.grad_steps.astype(jnp.float32),
        }
        return state._replace(step=state.step + 1), metrics

    spec = DQNState(P(), P(), P(), P(), P(), P(DATA_AXIS))
    return Agent(
        init=init,
        acting=epsilon_greedy_acting(network, epsilons),
        update=update,
        acting_params=acting_params,
        axis_name=axis_name,
        state_spec=spec,
    )


ALGORITHM = Algorithm(
    name="dqn",
    summary="DQN: double Q-learning, uniform replay, one annealed ε",
    config_type=DQNConfig,
    make_agent=make_dqn,
    make_networks=q_networks,
    validate=validate,
    keeps_replay=lambda config: True,
    replay_items=transitions_per_update,
    action_kinds=("discrete",),
    # Its exported policy explores as its actors ended training: ε-greedy.
    policy_extras=q_learning.exported_epsilon,
    exported_sampler=q_learning.exported_epsilon_greedy,
)
