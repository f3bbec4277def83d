"""Q-learners' shared pieces: ε per environment and at export, the actor, the rules."""

import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl.agents import RunShape
from purejaxdrl.agents.dqn_config import DQNConfig
from purejaxdrl.agents.q_learning import (
    check_n_step_fits,
    exploration,
    final_epsilon,
    make_q_acting,
)
from purejaxdrl.config import ConfigError


def test_each_environment_explores_with_its_own_apex_epsilon():
    # ε_i = ε^(1 + α i / (N - 1)), N = 4, ε = 0.4, α = 7 (Horgan et al. 2018).
    apex = DQNConfig(per_actor_epsilon=True, epsilon=0.4, epsilon_alpha=7.0)
    _, per_env = exploration(apex, 100, 4)
    got = per_env(jnp.float32(0.9), jnp.array([3, 0, 2, 1], jnp.int32))
    want = [0.4**8, 0.4, 0.4 ** (17 / 3), 0.4 ** (10 / 3)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # Without per-actor ε every environment explores with the run's ε.
    _, per_env = exploration(DQNConfig(), 100, 4)
    got = per_env(jnp.float32(0.3), jnp.array([3, 0, 2], jnp.int32))
    np.testing.assert_allclose(got, [0.3, 0.3, 0.3])


@pytest.mark.parametrize(
    ("updates", "want"),
    # 1.0 -> 0.1 over half of 100 updates: 1 - 0.9 u / 50, then 0.1.
    [(0, 1.0), (25, 0.55), (40, 0.28), (50, 0.1), (100, 0.1)],
)
def test_an_exported_annealed_epsilon_is_the_one_after_its_updates(updates, want):
    dqn = DQNConfig(epsilon_start=1.0, epsilon_end=0.1, epsilon_fraction=0.5)
    got = final_epsilon(dqn, updates, 100, 4)
    assert isinstance(got, float)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def _counting_network(actions):
    """A core that sums its observations since the last reset; Q = that sum
    at action 0, 0 elsewhere (greedy: action 0 while the sum is positive)."""

    def step(params, state, obs, reset):
        state = jnp.where(reset, 0.0, state) + obs * params
        q = jnp.zeros((obs.shape[0], actions)).at[:, 0].set(state)
        return state, (q, q.max(axis=-1))

    return types.SimpleNamespace(
        step=step, initial_state=lambda b: jnp.zeros(b, jnp.float32)
    )


def test_the_recurrent_q_actor_resets_its_core_where_told():
    acting = make_q_acting(_counting_network(3), lambda eps, ids: eps * 0 * ids)
    state = jnp.array([5.0, 5.0])
    keys = jax.random.split(jax.random.key(0), 2)
    reset = jnp.array([True, False])
    ids = jnp.arange(2, dtype=jnp.int32)
    obs = jnp.array([1.0, 1.0])
    state, action, extras = acting.step((1.0, 0.0), state, obs, reset, keys, ids)
    np.testing.assert_allclose(state, [1.0, 6.0])  # zeroed, then its obs added
    np.testing.assert_allclose(extras["value"], [1.0, 6.0])  # max Q
    np.testing.assert_array_equal(action, [0, 0])  # greedy at ε = 0
    # A final observation's value continues the episode (no reset).
    np.testing.assert_allclose(acting.value((1.0, 0.0), state, obs), [2.0, 7.0])


def test_the_recurrent_q_actor_explores_with_each_environments_epsilon():
    # ε = 0 for environment 0, 1 for environment 7: 7's actions are uniform
    # over 4 (all greedy in 200 draws: 0.25^200), 0's always greedy.
    def epsilons(eps, ids):
        return jnp.where(ids == 7, 1.0, 0.0)

    acting = make_q_acting(_counting_network(4), epsilons)
    step = jax.jit(acting.step)
    ids = jnp.array([0, 7], jnp.int32)
    actions = np.array([
        step((1.0, 0.0), jnp.zeros(2), jnp.ones(2), jnp.ones(2, bool),
             jax.random.split(key, 2), ids)[1]
        for key in jax.random.split(jax.random.key(1), 200)
    ])  # fmt: skip
    assert (actions[:, 0] == 0).all()
    assert set(actions[:, 1]) == {0, 1, 2, 3}


def test_n_step_may_be_the_whole_unroll_not_longer():
    shape = RunShape(num_envs=4, unroll_length=8, num_updates=10)
    check_n_step_fits("dqn", DQNConfig(n_step=8), shape)  # the unroll: fine
    check_n_step_fits("dqn", DQNConfig(n_step=100), None)  # no shape: unchecked
    with pytest.raises(ConfigError) as error:
        check_n_step_fits("dqn", DQNConfig(n_step=9), shape)
    assert str(error.value) == (
        "dqn.n_step=9 is longer than unroll_length=8: targets stop at the "
        "unroll's end; pass at most --dqn.n-step 8 (dqn.n_step=8 in Python), or "
        "raise --unroll-length 9 (unroll_length=9 in Python)."
    )
