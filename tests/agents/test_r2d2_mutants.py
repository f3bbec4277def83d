"""R2D2 behaviours that mutation testing found unchecked: the run's first
sequences start from the zero state, each gradient step draws with its own
key, each actor explores with its own ε, and the paper's defaults."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from purejaxdrl.agents import RunShape
from purejaxdrl.agents.r2d2 import R2D2Config, make_r2d2
from purejaxdrl.agents.r2d2_sequences import sequence_td, stateless, time_major
from purejaxdrl.replay import make_prioritised_buffer
from purejaxdrl.replay.env_shards import make_env_shards
from purejaxdrl.types import Transition
from tests.helpers import linear_q_network

OBS, ACTIONS = 3, 2


def _trajectory(length: int, num_envs: int, seed: int) -> Transition:
    """An unroll [T, E] of random steps, no episode ending, none starting."""
    rng = np.random.default_rng(seed)
    shape = (length, num_envs)
    normal = functools.partial(rng.normal, size=(*shape, OBS))
    zeros = np.zeros(shape, np.float32)
    return Transition(
        normal().astype(np.float32), rng.integers(0, ACTIONS, shape).astype(np.int32),
        rng.normal(size=shape).astype(np.float32), np.ones(shape, np.float32),
        np.zeros(shape, bool), zeros, zeros, zeros, normal().astype(np.float32), {},
        np.zeros(shape, bool), (),
    )  # fmt: skip


def _agent(config: R2D2Config, num_envs: int, length: int, num_updates: int = 100):
    run = RunShape(num_envs=num_envs, unroll_length=length, num_updates=num_updates)
    return make_r2d2(
        config, linear_q_network(OBS, ACTIONS), np.zeros(OBS, np.float32), run
    )


def test_the_runs_first_sequences_reset_the_state_after_their_empty_burn_in():
    # Before the first unroll there is no experience: its sequences' burn-in
    # is zeros, and the state must be reset where the unroll starts (as the
    # actors' was: they started from the zero state), though the unroll's
    # first step does not start an episode. Later sequences keep the flag the
    # step had: their burn-in is real experience of the same episode.
    num_envs, length, burn = 2, 4, 2
    config = R2D2Config(burn_in=burn, n_step=1, buffer_size=8, batch_size=2,
                        min_replay=8, target_every=1)  # fmt: skip
    agent = _agent(config, num_envs, length)
    update = jax.jit(agent.update)
    state = agent.init(jax.random.key(0))
    state, _ = update(state, _trajectory(length, num_envs, 0), jax.random.key(1))
    state, _ = update(state, _trajectory(length, num_envs, 1), jax.random.key(2))
    reset = np.asarray(state.buffer.ring.items.reset)  # [E, slot, burn + T]
    first = np.zeros(burn + length, bool)
    first[burn] = True
    np.testing.assert_array_equal(
        reset[:, 0], np.broadcast_to(first, (num_envs, burn + length))
    )
    np.testing.assert_array_equal(reset[:, 1], False)


def test_each_gradient_step_of_an_update_draws_with_its_own_key():
    # Two gradient steps an update, at α = 0 (uniform draws, weights 1) and a
    # learning rate too small to move the loss: the logged loss is the mean
    # of the two steps' 0.5 mean δ² over the sequences each drew with its
    # own key, split from the update's.
    num_envs, length, steps = 2, 3, 2
    config = R2D2Config(n_step=1, gamma=0.9, priority_alpha=0.0, buffer_size=8,
                        batch_size=2, min_replay=8, updates_per_step=steps,
                        learning_rate=1e-7, target_every=100)  # fmt: skip
    agent = _agent(config, num_envs, length)
    update = jax.jit(agent.update)
    state = agent.init(jax.random.key(0))
    for k in range(3):  # three sequences a shard: not yet learning
        traj = _trajectory(length, num_envs, k)
        state, metrics = update(state, traj, jax.random.key(10 + k))
        assert int(metrics["learner/grad_steps"]) == 0
    key = jax.random.key(3)
    new, metrics = update(state, _trajectory(length, num_envs, 3), key)
    assert int(metrics["learner/grad_steps"]) == steps
    shards = make_env_shards(make_prioritised_buffer(4, 1, alpha=0.0), num_envs)
    env_ids = jnp.arange(num_envs)
    network = stateless(linear_q_network(OBS, ACTIONS))

    @jax.jit
    def step_loss(buffer, key):
        seq = time_major(shards.sample(buffer, key, env_ids).item)
        td = sequence_td(network, state.params, state.target_params, seq,
                         burn_in=0, n_step=1, gamma=0.9, rescale_eps=1e-3)  # fmt: skip
        return jnp.mean(0.5 * jnp.mean(td**2, axis=0))

    losses = [step_loss(new.buffer, k) for k in jax.random.split(key, steps)]
    assert abs(losses[0] - losses[1]) > 0.05 * max(losses)  # the draws differ
    np.testing.assert_allclose(metrics["loss/total"], np.mean(losses), rtol=1e-4)


def test_r2d2_actors_explore_each_with_its_own_epsilon():
    # Ape-X's ε_i, R2D2's default: N = 4, ε = 0.4, α = 7 give ε_0 = 0.4 and
    # ε_3 = 0.4^8 ≈ 6.6e-4; with two actions, non-greedy at ε_i / 2.
    config = R2D2Config(epsilon=0.4, epsilon_alpha=7.0, n_step=1, buffer_size=64,
                        batch_size=8, min_replay=16, target_every=1)  # fmt: skip
    agent = _agent(config, 4, 4)
    acting = agent.acting_params(agent.init(jax.random.key(0)))
    batch = 4000
    obs = jax.random.normal(jax.random.key(5), (batch, OBS))
    keys = jax.random.split(jax.random.key(6), batch)
    greedy = linear_q_network(OBS, ACTIONS).apply(acting[0], obs)[0].argmax(-1)
    step = jax.jit(agent.acting.step)

    def non_greedy(env_id):
        ids = jnp.full(batch, env_id, jnp.int32)
        carry = agent.acting.initial_state(batch)
        _, action, _ = step(acting, carry, obs, jnp.zeros(batch, bool), keys, ids)
        return float(jnp.mean(action != greedy))

    assert abs(non_greedy(0) - 0.2) < 0.04  # ~6 std devs
    assert non_greedy(3) < 0.004


def test_r2d2_defaults_are_the_papers():
    # Kapturowski et al. (2019), table 2: n = 5, γ = 0.997, priority η = 0.9
    # and α = 0.9, importance β = 0.6, Adam at 1e-4 with ε 1e-3, value
    # rescaling with ε 1e-3, Ape-X's per-actor ε_i.
    c = R2D2Config()
    assert (c.n_step, c.gamma, c.priority_eta, c.priority_alpha) == (5, 0.997, 0.9, 0.9)
    assert (c.importance_exponent, c.learning_rate, c.adam_eps) == (0.6, 1e-4, 1e-3)
    assert c.value_rescaling and c.rescale_eps == 1e-3 and c.per_actor_epsilon


def test_two_devices_draw_the_sequences_of_the_environments_they_hold():
    # 4 environments, 2 a device: device d holds environments 2d and 2d + 1,
    # and draws from their shards with their global indices, so the updates
    # are those of one device holding all 4 (same draws, same parameters).
    num_envs, length = 4, 3
    config = R2D2Config(n_step=1, gamma=0.9, buffer_size=16, batch_size=4,
                        min_replay=8, learning_rate=1e-2, target_every=1)  # fmt: skip
    one = _agent(config, num_envs, length)
    run = RunShape(num_envs=num_envs, unroll_length=length, num_updates=100,
                   num_devices=2, axis_name="data")  # fmt: skip
    two = make_r2d2(
        config, linear_q_network(OBS, ACTIONS), np.zeros(OBS, np.float32), run
    )
    mesh = jax.make_mesh((2,), ("data",), devices=jax.devices()[:2])
    spec = two.state_spec
    traj_spec = jax.tree.map(lambda x: P(None, "data"), _trajectory(length, 1, 0))
    on_mesh = jax.tree.map(
        lambda spec: NamedSharding(mesh, spec), traj_spec,
        is_leaf=lambda x: isinstance(x, P),
    )  # fmt: skip
    trajs = [_trajectory(length, num_envs, k) for k in range(3)]
    init = jax.jit(jax.shard_map(two.init, mesh=mesh, in_specs=P(), out_specs=spec))
    update = jax.jit(
        jax.shard_map(
            two.update, mesh=mesh, in_specs=(spec, traj_spec, P()),
            out_specs=(spec, P()),
        )
    )  # fmt: skip
    state_one, state_two = one.init(jax.random.key(0)), init(jax.random.key(0))
    update_one = jax.jit(one.update)
    for k, traj in enumerate(trajs):
        key = jax.random.key(10 + k)
        state_one, metrics = update_one(state_one, traj, key)
        state_two, _ = update(state_two, jax.device_put(traj, on_mesh), key)
    assert int(metrics["learner/grad_steps"]) == 2
    for name in ("w", "b"):
        np.testing.assert_allclose(
            state_two.params[name], state_one.params[name], rtol=1e-5, atol=1e-6
        )
    np.testing.assert_allclose(
        state_two.buffer.nodes, state_one.buffer.nodes, rtol=1e-5, atol=1e-6
    )
