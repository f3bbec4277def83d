"""The gymnax adapter's episode ends and continuous actions (mut24 G01, G03, G04).

The references: gymnax's own environment stepped with the torque the
definition gives, and CartPole's flags on a step where both fire.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import env as envs


def _steps_to_fall(env) -> int:
    """The step at which pushing right from the reset of key 0 topples the pole."""
    params = env.default_params
    state, _ = env.reset(jax.random.key(0), params)
    step = jax.jit(env.step)
    for t in range(1, 200):
        state, ts = step(jax.random.key(t), state, jnp.array(1), params)
        if ts.discount == 0.0:
            return t
    raise AssertionError("the pole never fell")


def test_a_termination_on_the_time_limits_step_is_a_termination():
    # With the time limit at the step the pole falls, gymnax raises both
    # flags: a truncation there would bootstrap past a true end.
    t = _steps_to_fall(envs.make("CartPole-v1"))
    env = envs.make("CartPole-v1", max_steps_in_episode=t)
    params = env.default_params
    state, ts = env.reset(jax.random.key(0), params)
    step = jax.jit(env.step)
    for i in range(1, t + 1):
        state, ts = step(jax.random.key(i), state, jnp.array(1), params)
    assert float(ts.discount) == 0.0 and not bool(ts.truncated)
    # One step earlier the limit truncates a live episode: bootstrapped.
    env = envs.make("CartPole-v1", max_steps_in_episode=t - 1)
    params, step = env.default_params, jax.jit(env.step)
    state, ts = env.reset(jax.random.key(0), params)
    for i in range(1, t):
        state, ts = step(jax.random.key(i), state, jnp.array(1), params)
    assert float(ts.discount) == 1.0 and bool(ts.truncated)


@pytest.mark.parametrize(
    ("action", "torque"),
    [(0.0, 0.0), (0.5, 1.0), (-0.5, -1.0), (1.0, 2.0), (3.0, 2.0), (-5.0, -2.0)],
)
def test_a_unit_box_action_is_the_torque_it_maps_to_linearly_then_clipped(
    action, torque
):
    # Pendulum's torque is in [-2, 2]: low + (a + 1) / 2 (high - low), clipped.
    env = envs.make("Pendulum-v1")
    params, key = env.default_params, jax.random.key(1)
    state, _ = env.reset(key, params)
    _, ts = env.step(key, state, jnp.array([action]), params)
    obs, *_ = env.env.step_env(key, state, jnp.array([torque]), params)
    np.testing.assert_allclose(ts.observation, obs, rtol=1e-6, atol=1e-6)


def test_the_adapter_clips_an_action_past_the_unit_box_itself():
    # Pendulum clips its torque too, so the step above cannot tell; an
    # environment that does not would be pushed past its bounds.
    env = envs.make("Pendulum-v1")
    np.testing.assert_allclose(env._env_action(jnp.array([3.0])), [2.0])
    np.testing.assert_allclose(env._env_action(jnp.array([-5.0])), [-2.0])
