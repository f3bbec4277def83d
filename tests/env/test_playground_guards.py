"""What the Playground adapter adds to a task, where CartpoleBalance hides it.

CartpoleBalance ends its own episode on NaN physics, clamps its motor and
computes its observation from physics alone; many Playground tasks do none of
these. Each test wraps the task's step so that only the adapter can make it
pass (mut17 G4, G6, G8: each survived a mutant of the adapter before). The
cached-first-state restart is checked on both paths, `step` and the runners'
`step_batch`.
"""

import importlib.util

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mujoco_playground") is None,
    reason="needs the [playground] extra",
)

from purejaxdrl import env as envs  # noqa: E402


def _one_step(env, state, action):
    step = jax.jit(lambda s: env._step_no_reset(jax.random.key(1), s, action, ()))
    return step(state)[1]


def test_a_blow_up_the_task_does_not_flag_still_ends_the_episode():
    # Locomotion and manipulation tasks check their own end conditions, not
    # NaN physics: the adapter's own check must end the episode.
    env = envs.make("playground/CartpoleBalance", episode_length=50)
    raw_step = env.env.step

    def step(state, action):  # a NaN reward, `done` left 0 by the task
        s = raw_step(state, action)
        return s.replace(reward=s.reward * jnp.nan, done=jnp.zeros_like(s.done))

    env.env.step = step
    state, _ = env.reset(jax.random.key(0), ())
    ts = _one_step(env, state, jnp.zeros(1))
    assert float(ts.reward) == 0.0
    assert float(ts.discount) == 0.0 and bool(ts.last())


def test_actions_reach_the_task_clipped_to_its_range():
    # Playground tasks take actions in [-1, 1]; locomotion tasks scale them
    # into motor targets unclamped, so the adapter clips what a policy sends.
    env = envs.make("playground/CartpoleBalance", episode_length=50)
    raw_step = env.env.step
    env.env.step = lambda state, action: raw_step(state, action).replace(
        reward=action[0]
    )
    state, _ = env.reset(jax.random.key(0), ())
    assert float(_one_step(env, state, jnp.array([5.0])).reward) == 1.0
    assert float(_one_step(env, state, jnp.array([-5.0])).reward) == -1.0


def test_a_cached_first_state_restart_restores_the_tasks_observation_too():
    # H1/Op3/Barkour joysticks and LeapRotateZ build the next observation from
    # `state.obs`: after a restart it must be the first state's, not the ended
    # episode's last one.
    env = envs.make(
        "playground/CartpoleBalance", episode_length=1, auto_reset="cached_first_state"
    )
    state, first = env.reset(jax.random.key(0), ())
    step = jax.jit(lambda s: env.step(jax.random.key(1), s, jnp.full(1, 0.4), ()))
    after, ts = step(state)
    assert bool(ts.truncated)
    assert not np.allclose(ts.final_observation, first.observation)
    np.testing.assert_allclose(after.inner.obs, state.inner.obs, rtol=1e-6)


@pytest.mark.timeout(900)
def test_step_batch_restarts_cached_first_state_envs_where_they_started():
    # The runners step through `step_batch`, which has its own reset path: it
    # must honour auto_reset=cached_first_state (Playground's default, picked
    # to match its published curves), not restart from fresh random states:
    # the run would go on, with no error, on other episodes (mut26 PE2).
    env = envs.make(
        "playground/CartpoleBalance", episode_length=1, auto_reset="cached_first_state"
    )
    b = 2

    def program(key):
        states, first = jax.vmap(env.reset, in_axes=(0, None))(
            jax.random.split(key, b), ()
        )
        keys = jax.random.split(jax.random.key(7), b)
        _, ts = env.step_batch(keys, states, jnp.full((b, 1), 0.4), ())
        return first.observation, ts

    first, ts = jax.jit(program)(jax.random.key(1))
    assert np.asarray(ts.truncated).all()
    assert not np.allclose(first[0], first[1])  # two distinct first states
    np.testing.assert_allclose(ts.observation, first, rtol=1e-6)
