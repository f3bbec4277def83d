"""DQN / Ape-X behaviours that mutation testing found unchecked: the order of
prioritised draws and priority writes, each device's own draws, Adam's ε and
nothing moved or logged before learning starts, per-actor ε in acting, the
actors' values, the boundaries of the range rules and the papers' defaults."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from purejaxdrl.agents import RunShape, apex, dqn, dqn_config
from purejaxdrl.agents.dqn import DQNState, Learner, Replayed, make_dqn
from purejaxdrl.replay import make_prioritised_buffer, sum_tree
from purejaxdrl.types import Transition
from tests.helpers import linear_q_network

DIMS, ACTIONS = 3, 2


def _items(td: np.ndarray) -> tuple[jax.Array, Replayed]:
    """W of Q = s W, and items whose 1-step TD errors under it (online =
    target, so double Q's bootstrap is max Q) are `td`."""
    n = len(td)
    rng = np.random.default_rng(0)
    w = rng.normal(size=(DIMS, ACTIONS))
    obs, next_obs = rng.normal(size=(n, DIMS)), rng.normal(size=(n, DIMS))
    action = rng.integers(0, ACTIONS, n)
    discount = np.full(n, 0.5)
    reward = td - discount * (next_obs @ w).max(-1) + (obs @ w)[np.arange(n), action]
    f32 = lambda x: jnp.asarray(x, jnp.float32)  # noqa: E731
    item = Replayed(f32(obs), jnp.asarray(action, jnp.int32), f32(reward),
                    f32(discount), f32(next_obs))  # fmt: skip
    return f32(w), item


# δ of 8 items: after a step draws one of the last four, the first four are
# nearly never drawn again, so the schedule of draws and writes shows. Half
# are negative, so a priority written as δ + ε, not |δ| + ε, shows too.
TD = np.array([0.01, -0.02, 0.03, -0.04, 5.0, -6.0, 7.0, -8.0])
EPS = 1e-3


def _prioritised(batch: int, priority: np.ndarray | None = None):
    """A prioritised buffer of `_items(TD)`, each added with `priority`
    (default 1: a uniform draw until priorities are written)."""
    buffer = make_prioritised_buffer(len(TD), batch, alpha=1.0)
    w, item = _items(TD)
    example = jax.tree.map(lambda x: x[0], item)
    given = np.ones(len(TD)) if priority is None else priority
    replay = buffer.add(buffer.init(example), item, jnp.asarray(given, jnp.float32))
    return buffer, w, replay


@functools.partial(jax.jit, static_argnums=(0, 3))
def _written(buffer, replay, keys, prefetch: bool):
    """The priorities after steps drawing with `keys`, by the schedule's
    definition: each write is |δ| + ε of the drawn items."""

    priority = jnp.asarray(np.abs(TD) + EPS, jnp.float32)

    def write(state, index):
        index = index.reshape(-1)
        return buffer.set_priorities(state, index, priority[index])

    if prefetch:  # all drawn from the start, written after the last step
        return write(replay, _draws(buffer, replay, keys))
    for k in keys:  # each draw sees the writes of the steps before
        replay = write(replay, buffer.sample(replay, k).index)
    return replay


@functools.partial(jax.jit, static_argnums=0)
def _draws(buffer, replay, keys):
    """The slots drawn with each of `keys` from `replay` as it is, [K, batch]."""
    return jax.vmap(lambda k: buffer.sample(replay, k).index)(keys)


def _leaves(replay) -> np.ndarray:
    return np.asarray(sum_tree.leaves(replay.nodes, jnp.arange(len(TD))))


@pytest.mark.parametrize("prefetch", [False, True], ids=["sequential", "prefetch"])
def test_prioritised_draws_see_the_priorities_the_steps_before_wrote(prefetch):
    # Three gradient steps at learning rate 0, so each item's δ, and the
    # priority |δ| + ε a step writes for it, stay fixed. Without prefetch
    # each step draws from what the steps before wrote; with it, all three
    # batches come from the update's start and are written after the last.
    batch, steps = 2, 3
    config = dqn_config.DQNConfig(
        prioritised=True, prefetch=prefetch, priority_alpha=1.0, priority_eps=EPS,
        updates_per_step=steps, batch_size=batch, buffer_size=len(TD),
        min_replay=1, n_step=1,
    )  # fmt: skip
    buffer, w, replay = _prioritised(batch)
    for seed in range(64):
        # The first key whose steps draw three different batches from the
        # update's start and whose two schedules write apart.
        key = jax.random.key(seed)
        keys = jax.random.split(key, steps)
        batches = {tuple(sorted(b)) for b in _draws(buffer, replay, keys).tolist()}
        want = _leaves(_written(buffer, replay, keys, prefetch))
        other = _leaves(_written(buffer, replay, keys, not prefetch))
        if len(batches) == steps and not np.allclose(want, other):
            break
    else:
        pytest.fail("no key of 64 draws three batches that tell the schedules apart")
    sgd = optax.sgd(0.0)
    state = DQNState(w, w, sgd.init(w), jnp.int32(0), jnp.int32(0), replay)
    learner = Learner(config, buffer, sgd, lambda p, x: x @ p, 10, None)
    new, _ = jax.jit(dqn.learn, static_argnums=3)(state, key, jnp.bool_(True), learner)
    np.testing.assert_allclose(_leaves(new.buffer), want, rtol=1e-4)


def test_each_devices_learner_draws_its_own_slots_of_its_shard():
    # Two devices hold the same shard and the learner's key is replicated:
    # each must still draw its own slots (`replay.device_key`), or a global
    # batch holds each slot twice. Learning rate 0: the priorities written,
    # |δ| + ε of the drawn slots, show which slots each device drew.
    batch = 2
    config = dqn_config.DQNConfig(
        prioritised=True, priority_alpha=1.0, priority_eps=EPS, updates_per_step=1,
        batch_size=batch, buffer_size=len(TD), min_replay=1, n_step=1,
    )  # fmt: skip
    buffer, w, replay = _prioritised(batch)
    sgd = optax.sgd(0.0)
    learner = Learner(config, buffer, sgd, lambda p, x: x @ p, 10, "data")
    two = jax.tree.map(lambda x: jnp.concatenate([x, x]), replay)
    state = DQNState(w, w, sgd.init(w), jnp.int32(0), jnp.int32(0), two)
    specs = DQNState(P(), P(), P(), P(), P(), P("data"))
    mesh = jax.make_mesh((2,), ("data",), devices=jax.devices()[:2])

    def learn(state, key):
        return dqn.learn(state, key, jnp.bool_(True), learner)[0]

    mapped = jax.shard_map(
        learn, mesh=mesh, in_specs=(specs, P()), out_specs=specs, check_vma=False
    )
    shardings = jax.tree.map(
        lambda spec: NamedSharding(mesh, spec),
        specs,
        is_leaf=lambda x: isinstance(x, P),
    )
    state = jax.device_put(state, shardings)
    new = jax.jit(mapped)(state, jax.random.key(0)).buffer
    before = _leaves(replay)
    drawn = []
    for device in range(2):
        shard = jax.tree.map(lambda x, d=device: np.split(np.asarray(x), 2)[d], new)
        drawn.append(set(np.flatnonzero(~np.isclose(_leaves(shard), before))))
    assert drawn[0] and drawn[1]
    assert drawn[0] != drawn[1]


def _same_steps(t, b, obs, next_obs, reward):
    """An unroll [t, b] of one transition repeated: any batch is that one."""
    rep = lambda x: jnp.broadcast_to(jnp.asarray(x, jnp.float32), (t, b, *np.shape(x)))  # noqa: E731
    ones = jnp.ones((t, b))
    return Transition(rep(obs), jnp.zeros((t, b), jnp.int32), reward * ones, ones,
                      jnp.zeros((t, b), bool), 0 * ones, 0 * ones, 0 * ones,
                      rep(next_obs), {})  # fmt: skip


def test_nothing_moves_or_is_logged_before_learning_then_adam_steps_with_its_eps():
    # 16 transitions an update, learning from 32 stored: the first update
    # leaves the parameters and logs loss 0; the second takes one step of
    # Adam with Rainbow's ε = 1.5e-4. Its first step moves each parameter by
    # -lr g / (|g| + ε) (m = g, v = g², bias-corrected), and with gradients
    # near ε that is far from the sign step -lr sign(g).
    t, b, lr, gamma = 4, 4, 0.1, 0.5
    config = dqn_config.DQNConfig(
        n_step=1, gamma=gamma, buffer_size=64, batch_size=8, min_replay=32,
        updates_per_step=1, learning_rate=lr, max_grad_norm=1e6, target_every=100,
    )  # fmt: skip
    run = RunShape(num_envs=b, unroll_length=t, num_updates=4)
    agent = make_dqn(
        config, linear_q_network(DIMS, ACTIONS), np.zeros(DIMS, np.float32), run
    )
    state = agent.init(jax.random.key(0))
    w = np.asarray(state.params["w"], np.float64)
    obs, next_obs = np.array([2e-2, 3e-3, -4e-4]), np.array([0.5, -1.0, 2.0])
    # δ = r + γ max_a Q(s', a) - Q(s, 0), online = target: choose r for δ = 0.05.
    reward = 0.05 - gamma * (next_obs @ w).max() + obs @ w[:, 0]
    traj = _same_steps(t, b, obs, next_obs, reward)
    update = jax.jit(agent.update)
    first, metrics = update(state, traj, jax.random.key(1))
    assert int(first.grad_steps) == 0
    assert float(metrics["loss/total"]) == 0.0 and float(metrics["td/abs_mean"]) == 0.0
    jax.tree.map(np.testing.assert_array_equal, first.params, state.params)
    second, metrics = update(first, traj, jax.random.key(2))
    assert int(second.grad_steps) == 1
    np.testing.assert_allclose(metrics["td/abs_mean"], 0.05, rtol=1e-4)
    # Huber (|δ| < 1): L = δ² / 2, only Q(s, 0) differentiated: dL/dW[:, 0] =
    # -δ s, dL/db[0] = -δ, no gradient for action 1.
    g_w = np.zeros((DIMS, ACTIONS))
    g_w[:, 0] = -0.05 * obs
    g_b = np.array([-0.05, 0.0])
    step = lambda g: -lr * g / (np.abs(g) + 1.5e-4)  # noqa: E731
    np.testing.assert_allclose(second.params["w"], w + step(g_w), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(second.params["b"], step(g_b), rtol=1e-5, atol=1e-6)


def _non_greedy(acting, params, env_id: int, batch: int = 4000) -> float:
    """The fraction of `batch` acts of environment `env_id` that are not greedy."""
    obs = jax.random.normal(jax.random.key(5), (batch, DIMS))
    keys = jax.random.split(jax.random.key(6), batch)
    ids = jnp.full(batch, env_id, jnp.int32)
    carry = acting.initial_state(batch)
    step = jax.jit(acting.step)
    _, action, _ = step(params, carry, obs, jnp.zeros(batch, bool), keys, ids)
    greedy = linear_q_network(DIMS, ACTIONS).apply(params[0], obs)[0].argmax(-1)
    return float(jnp.mean(action != greedy))


def test_apex_actors_explore_each_with_its_own_epsilon():
    # Horgan et al. (2018): actor i of N explores with ε_i = ε^(1 + α i / (N - 1));
    # N = 4, ε = 0.4, α = 7: ε_0 = 0.4, ε_3 = 0.4^8 ≈ 6.6e-4. A random action
    # of two is the greedy one half the time: non-greedy at ε_i / 2.
    config = dqn_config.DQNConfig(
        per_actor_epsilon=True, epsilon=0.4, epsilon_alpha=7.0, prioritised=True
    )
    run = RunShape(num_envs=4, unroll_length=4, num_updates=10)
    agent = make_dqn(
        config, linear_q_network(DIMS, ACTIONS), np.zeros(DIMS, np.float32), run
    )
    params = agent.acting_params(agent.init(jax.random.key(0)))
    assert abs(_non_greedy(agent.acting, params, 0) - 0.2) < 0.04  # ~6 std devs
    assert _non_greedy(agent.acting, params, 3) < 0.004


def test_q_actors_value_an_observation_at_its_greedy_q():
    # What the rollout stores as `value` and `bootstrap_value` (PQN's
    # λ-returns bootstrap from it): V(s) = max_a Q(s, a), here of Q = s W + b.
    config = dqn_config.DQNConfig(n_step=1)
    run = RunShape(num_envs=2, unroll_length=4, num_updates=10)
    agent = make_dqn(
        config, linear_q_network(DIMS, ACTIONS), np.zeros(DIMS, np.float32), run
    )
    params = agent.acting_params(agent.init(jax.random.key(0)))
    obs = np.random.default_rng(1).normal(size=(5, 4, DIMS)).astype(np.float32)
    w, b = (np.asarray(params[0][k], np.float64) for k in ("w", "b"))
    want = (obs @ w + b).max(-1)
    got = agent.acting.value(params, (), jnp.asarray(obs))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_range_rules_accept_their_boundaries():
    # min_replay may equal the buffer (learning starts once it is full),
    # n_step the unroll (targets of the whole unroll), batch_size the buffer.
    shape = RunShape(num_envs=4, unroll_length=8, num_updates=100)
    config = dqn_config.DQNConfig(
        buffer_size=64, min_replay=64, batch_size=64, n_step=8, target_every=1
    )
    dqn_config.validate(config, shape, warn=False)
    for field, value in (("min_replay", 65), ("n_step", 9), ("batch_size", 65)):
        with pytest.raises(ValueError, match=rf"^dqn\.{field}={value} "):
            dqn_config.validate(
                dqn_config.DQNConfig(**{**config.__dict__, field: value}), shape
            )


def test_dqn_defaults_are_the_papers():
    # Schaul et al. (2016), proportional prioritisation: α = 0.6, β from 0.4
    # to 1; van Hasselt et al. (2016) / Hessel et al. (2018): 3-step double Q
    # with a dueling head, hard target copies.
    config = dqn_config.DQNConfig()
    assert (config.priority_alpha, config.beta_start) == (0.6, 0.4)
    assert (config.n_step, config.dueling, config.target_tau) == (3, True, 1.0)
    assert not config.prioritised and not config.per_actor_epsilon


def test_apex_defaults_are_the_papers_learner():
    # Horgan et al. (2018): prioritised replay, an ε per actor; and draws
    # prefetched, so a step's batch sees the priorities the step before wrote
    # without waiting on them (mut23 AX1: unset, nothing failed).
    config = apex.default_config()
    assert (config.prioritised, config.per_actor_epsilon) == (True, True)
    assert config.prefetch
