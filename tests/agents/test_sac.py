"""SAC: stored transitions, the temperature's direction, replay shards, a step."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import RunShape
from purejaxdrl.agents.sac import SACConfig, make_sac
from purejaxdrl.env.base import Box
from purejaxdrl.networks import NetworkConfig, make_sac_networks
from purejaxdrl.types import Transition

NETS = make_sac_networks(NetworkConfig(hidden_sizes=(16,)), Box((3,)), Box((2,)))


def _agent(**config):
    config = SACConfig(buffer_size=64, batch_size=8, min_replay=8, **config)
    return make_sac(config, NETS, np.zeros(3, np.float32), RunShape(num_updates=10))


def _traj(t=4, b=2, truncated=None, discount=None):
    obs = jnp.arange(t * b * 3, dtype=jnp.float32).reshape(t, b, 3) / 10
    ones = jnp.ones((t, b))
    return Transition(
        observation=obs,
        action=jnp.full((t, b, 2), 0.5),
        reward=ones,
        discount=ones if discount is None else discount,
        truncated=jnp.zeros((t, b), bool) if truncated is None else truncated,
        log_prob=0 * ones,
        value=0 * ones,
        bootstrap_value=0 * ones,
        final_observation=obs + 100.0,  # distinguishable from any observation
        info={},
    )


def test_transitions_bootstrap_from_final_observations_unless_terminated():
    agent = _agent()
    state = agent.init(jax.random.key(0))
    truncated = jnp.zeros((4, 2), bool).at[1, 0].set(True)
    discount = jnp.ones((4, 2)).at[2, 1].set(0.0)
    state, _ = agent.update(state, _traj(truncated=truncated, discount=discount),
                            jax.random.key(1))  # fmt: skip
    stored = jax.tree.map(lambda x: np.asarray(x[:8]), state.buffer.items)
    traj = _traj()
    # Time-major flattening: slot 2 is (t=1, env 0), truncated: it keeps
    # discount 1 and its final observation; slot 5 is (t=2, env 1), terminated.
    np.testing.assert_array_equal(
        stored.next_observation, np.asarray(traj.final_observation).reshape(8, 3)
    )
    np.testing.assert_array_equal(stored.discount, [1, 1, 1, 1, 1, 0, 1, 1])
    # The critics see the squashed action the environment received.
    np.testing.assert_allclose(stored.action, np.tanh(0.5), rtol=1e-6)


@pytest.mark.parametrize(("scale", "direction"), [(-5.0, 1), (5.0, -1)])
def test_temperature_moves_towards_the_target_entropy(scale, direction):
    # Target entropy -scale x |A|: a very low target (scale 5) lets α fall,
    # a very high one (scale -5) makes it rise.
    agent = _agent(target_entropy_scale=scale, learning_rate=1e-2)
    state = agent.init(jax.random.key(0))
    update = jax.jit(agent.update)
    for i in range(20):
        state, metrics = update(state, _traj(), jax.random.key(i))
    moved = float(state.log_alpha) - 0.0  # log α starts at log 1 = 0
    assert moved * direction > 0 and int(state.grad_steps) == 20
    assert np.isfinite(metrics["loss/critic"])


@pytest.mark.timeout(300)
def test_replay_shards_on_two_devices_and_learning_starts():
    config = pjd.load_preset("inverted_pendulum", "sac").config
    config = pjd.apply_overrides(config, {
        # gymnax's Pendulum: continuous like brax's, compiled in seconds.
        "env": {"id": "Pendulum-v1", "options": {}},
        "devices": 2, "num_envs": 4, "unroll_length": 4, "total_steps": 16 * 6,
        "network": {"hidden_sizes": [16]},
        "sac": {"buffer_size": 128, "batch_size": 16, "min_replay": 48,
                "updates_per_step": 2},
    })  # fmt: skip
    exp = pjd.training.make_experiment(config)
    state, metrics = exp.runner.chunk(6)(exp.runner.init(jax.random.key(0)))
    ring = state.agent.buffer
    np.testing.assert_array_equal(ring.size, [48, 48])
    obs = np.asarray(ring.items.observation).reshape(2, 64, -1)
    assert not np.array_equal(obs[0, :48], obs[1, :48])
    # 8 transitions per device per update: min_replay's 24 per device are
    # stored after update 3, which takes the first 2 gradient steps.
    np.testing.assert_array_equal(metrics["learner/grad_steps"], [0, 0, 2, 4, 6, 8])
