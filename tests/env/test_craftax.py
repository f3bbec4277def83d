"""Craftax through the on-device adapter: episode ends told apart, exact final
observations, and a one-line error without the optional package."""

import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import env as envs
from purejaxdrl.config import ConfigError

CLASSIC = "Craftax-Classic-Symbolic-v1"


def test_without_craftax_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "craftax", None)
    monkeypatch.setitem(sys.modules, "craftax.craftax_env", None)
    with pytest.raises(ConfigError, match=r"pip install 'purejaxdrl\[craftax\]'"):
        envs.make(CLASSIC)


def test_craftax_ids_are_registered():
    assert CLASSIC in envs.registered()


pytest.importorskip("craftax")


@pytest.fixture(scope="module")
def classic():
    # A step limit of 6: the sixth step of every episode is cut short.
    return envs.make(CLASSIC, max_timesteps=6)


def test_step_limit_truncates_and_keeps_the_final_observation(classic):
    params = classic.default_params
    step = jax.jit(classic.step)
    state, ts = jax.jit(classic.reset)(jax.random.key(0), params)
    assert ts.observation.shape == classic.observation_spec(params).shape
    assert ts.observation.dtype == jnp.float32
    noop = jnp.int32(0)
    for t in range(6):
        before = state
        state, ts = step(jax.random.key(t + 1), state, noop, params)
        if t < 5:
            assert not ts.truncated and ts.discount == 1.0
            np.testing.assert_allclose(ts.final_observation, ts.observation, atol=1e-6)
    assert ts.truncated and ts.discount == 1.0  # cut short: bootstrapped
    # The episode's last observation, not the next episode's first.
    assert not np.array_equal(ts.final_observation, ts.observation)
    assert int(state.timestep) == 0 and int(before.timestep) == 5


def test_death_terminates(classic):
    params = classic.default_params
    state, _ = classic.reset(jax.random.key(0), params)
    dying = state.replace(player_health=jnp.asarray(-5.0, state.player_health.dtype))
    state, ts = classic.step(jax.random.key(1), dying, jnp.int32(0), params)
    assert ts.discount == 0.0 and not ts.truncated
    assert int(state.timestep) == 0  # a fresh episode
