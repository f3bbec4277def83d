"""Gaps a mutation run found in the environment adapters (mutants5_MD).

Each test's expected values are worked out by hand from the definitions.
"""

import types
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import env as envs
from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import METRICS, restart
from purejaxdrl.env.host.base import (
    HostStep,
    NonFiniteStepError,
    check_finite,
    rescale_actions,
    space_spec,
)
from tests.probe import ProbeEnv, ProbeParams

gym = pytest.importorskip("gymnasium")


class MetricProbe(ProbeEnv):
    """ProbeEnv logging `info[METRICS]["t"]`: the step's count in its episode.

    Its rewards are 0: a step counts in an episode's length all the same.
    """

    def reset(self, key, params):
        state, ts = super().reset(key, params)
        return state, ts._replace(info={METRICS: {"t": jnp.float32(0)}})

    def step(self, key, state, action, params):
        new_state, ts = super().step(key, state, action, params)
        t = (state[0] + 1).astype(jnp.float32)  # 1, 2, 3 in an episode of 3
        return new_state, ts._replace(reward=jnp.float32(0), info={METRICS: {"t": t}})


def test_episode_metrics_are_summed_per_episode_and_restart_after_it():
    env = envs.EpisodeStatistics(MetricProbe())
    params = ProbeParams(jnp.int32(0), jnp.int32(3))
    state, ts = env.reset(jax.random.key(0), params)
    assert float(ts.info["episode_metrics"]["t"]) == 0.0
    sums, lengths = [], []
    for t in range(7):
        state, ts = env.step(jax.random.key(t), state, jnp.int32(0), params)
        sums.append(float(ts.info["episode_metrics"]["t"]))
        lengths.append(int(ts.info["episode_length"]))
    # Episodes of 3 steps: 1 + 2 + 3 = 6 where one ends, 0 elsewhere.
    assert sums == [0, 0, 6, 0, 0, 6, 0]
    assert lengths == [0, 0, 3, 0, 0, 3, 0]


def test_box_actions_are_clipped_then_scaled_to_each_bound():
    space = gym.spaces.Box(
        np.array([-2.0, 0.0], np.float32), np.array([2.0, 10.0], np.float32)
    )
    action = np.array([[-1.0, 1.0], [0.0, 0.5], [3.0, -5.0]], np.float32)
    # low + (a + 1) / 2 * (high - low), a clipped to [-1, 1] first.
    want = np.array([[-2.0, 10.0], [0.0, 7.5], [2.0, 0.0]], np.float32)
    got = rescale_actions(space, action)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    ("space", "what"),
    [
        (gym.spaces.Box(-1.0, np.inf, (2,), np.float32), "not finite"),
        (gym.spaces.Box(-np.inf, 1.0, (2,), np.float32), "not finite"),
        (gym.spaces.Box(-1.0, 1.0, (), np.float32), "is not flat"),
    ],
)
def test_action_boxes_without_two_finite_bounds_or_one_axis_are_refused(space, what):
    with pytest.raises(ConfigError, match=what):
        space_spec(space, "gymnasium:X")


def test_a_non_finite_row_is_named_by_its_env_id():
    obs = np.zeros((3, 2), np.float32)
    obs[2, 1] = np.nan  # the third row only: environment 7
    step = HostStep(
        observation=obs,
        reward=np.zeros(3, np.float32),
        terminated=np.zeros(3, bool),
        truncated=np.zeros(3, bool),
        first=np.zeros(3, bool),
        env_id=np.array([5, 6, 7], np.int32),
    )
    with pytest.raises(NonFiniteStepError) as e:
        check_finite("pool", step)
    assert str(e.value).startswith(
        "pool returned a non-finite observation (nan) in environment 7 "
        "(1 of the batch's 3); "
    )


def test_a_nan_reward_may_be_a_none_an_observation_not():
    def refusal(obs: np.ndarray, reward: np.ndarray) -> str:
        step = HostStep(
            observation=obs,
            reward=reward,
            terminated=np.zeros(2, bool),
            truncated=np.zeros(2, bool),
            first=np.zeros(2, bool),
            env_id=np.array([0, 1], np.int32),
        )
        with pytest.raises(NonFiniteStepError) as e:
            check_finite("pool", step)
        return str(e.value)

    # Gymnasium's vector env stores a step's reward of None as nan.
    rewards = np.array([0.0, None], np.float64)
    assert np.isnan(rewards[1])
    said = refusal(np.zeros((2, 2), np.float32), rewards)
    assert "(a division by zero, say, or a reward of None, which a vector env " in said
    obs = np.array([[0.0, np.nan], [0.0, 0.0]], np.float32)
    said = refusal(obs, np.zeros(2, np.float32))
    assert "(a division by zero, say) and return finite values" in said


class FakeBrax(NamedTuple):
    """The fields of a brax State the adapter reads."""

    obs: jax.Array
    reward: jax.Array
    done: jax.Array
    metrics: dict


def _fake_brax(episode_length):
    """BraxEnv's step logic around a 1-d task: the action pushes `obs`.

    A reset draws obs in [0, 0.5) from its key; a step adds the force brax
    received, which is also the reward; obs > 1.6 terminates (step 2 at full
    force, step 1 never).
    """
    from purejaxdrl.env.brax_env import BraxEnv

    def reset(key):
        obs = 0.5 * jax.random.uniform(key, (1,))
        return FakeBrax(obs, jnp.float32(0), jnp.float32(0), {})

    def step(state, action):
        obs = state.obs + action
        return FakeBrax(obs, action[0], (obs[0] > 1.6).astype(jnp.float32), {})

    env = object.__new__(BraxEnv)  # the physics, not brax's, is faked
    env.episode_length, env._task_reset, env._task_step = episode_length, reset, step
    return env


def test_brax_actions_are_clipped_to_the_unit_box():
    env = _fake_brax(episode_length=10)
    state, ts = env.reset(jax.random.key(0), ())
    _, ts1 = env.step(jax.random.key(1), state, jnp.array([5.0]), ())
    assert float(ts1.reward) == 1.0  # the task received force 1, not 5
    np.testing.assert_allclose(ts1.observation, ts.observation + 1.0)


def test_brax_a_termination_at_the_time_limit_is_no_truncation_and_resets():
    env = _fake_brax(episode_length=2)
    ends = []
    for seed in (1, 2):
        state, ts0 = env.reset(jax.random.key(0), ())
        state, ts = env.step(jax.random.key(10), state, jnp.array([1.0]), ())
        assert int(state.steps) == 1 and not bool(ts.truncated)
        state, ts = env.step(jax.random.key(seed), state, jnp.array([1.0]), ())
        # Terminated on the limit's step: discount 0, not truncated.
        assert float(ts.discount) == 0.0 and not bool(ts.truncated)
        np.testing.assert_allclose(ts.final_observation, ts0.observation + 2.0)
        assert int(state.steps) == 0 and 0.0 <= float(ts.observation[0]) < 0.5
        ends.append(float(ts.observation[0]))
    assert ends[0] != ends[1]  # the new episode is drawn from the step's key


def _model():
    n = 4
    gain = np.zeros((n, 10), np.float32)
    gain[:, 0], gain[:, 3] = 5.0, 7.0
    bias = np.zeros((n, 10), np.float32)
    bias[:, 0], bias[:, 1], bias[:, 2], bias[:, 3] = 0.5, -5.0, -0.5, 9.0
    return types.SimpleNamespace(
        body_mass=jnp.array([1.0, 2.0, 3.0, 4.0]),
        body_inertia=jnp.array([[1.0, 2.0, 3.0]] * n),
        geom_friction=jnp.array([[1.0, 0.1, 0.01]] * n),
        actuator_gainprm=jnp.asarray(gain),
        actuator_biasprm=jnp.asarray(bias),
        body_parentid=np.array([0, 0, 1, 1]),
    )


def test_the_generic_randomiser_scales_the_documented_fields_only():
    from purejaxdrl.env.randomize import draw_model

    model = _model()
    got = jax.device_get(draw_model(jax.random.key(3), model))
    mass = got["body_mass"] / np.asarray(model.body_mass)
    assert np.all((mass >= 0.8) & (mass <= 1.2))
    # Inertia scales with the mass, body by body.
    np.testing.assert_allclose(got["body_inertia"], model.body_inertia * mass[:, None])
    friction = got["geom_friction"][:, 0] / 1.0
    assert np.all((friction >= 0.6) & (friction <= 1.4))
    np.testing.assert_allclose(got["geom_friction"][:, 1:], [[0.1, 0.01]] * 4)
    gain = got["actuator_gainprm"][:, 0] / 5.0
    assert np.all((gain >= 0.8) & (gain <= 1.2))
    np.testing.assert_allclose(got["actuator_gainprm"][:, 3], 7.0)
    # A servo's bias terms on q and qdot scale with its gain; the rest stay.
    np.testing.assert_allclose(got["actuator_biasprm"][:, 1], -5.0 * gain, rtol=1e-6)
    np.testing.assert_allclose(got["actuator_biasprm"][:, 2], -0.5 * gain, rtol=1e-6)
    np.testing.assert_allclose(got["actuator_biasprm"][:, [0, 3]], [[0.5, 9.0]] * 4)
    # Each field draws from its own key: the unit draws differ.
    units = [(mass - 0.8) / 0.4, (friction - 0.6) / 0.8, (gain - 0.8) / 0.4]
    assert not np.allclose(units[0], units[1], atol=1e-3)
    assert not np.allclose(units[0], units[2], atol=1e-3)


def test_subtree_masses_by_hand():
    from purejaxdrl.env.randomize import subtree_masses

    # Tree 0 <- 1 <- {2, 3}: body 1 carries 2 and 3, the root all.
    got = subtree_masses(_model(), jnp.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(got, [10.0, 9.0, 3.0, 4.0])


def test_using_restores_the_tasks_model_even_after_an_error():
    from purejaxdrl.env.randomize import using

    class Model(dict):
        def tree_replace(self, fields):
            return Model({**self, **fields})

    base = Model(body_mass=1.0)
    task = types.SimpleNamespace(_mjx_model=base)
    with pytest.raises(RuntimeError), using(task, {"body_mass": 2.0}):
        assert task._mjx_model["body_mass"] == 2.0
        raise RuntimeError
    assert task._mjx_model is base


def test_craftax_resets_from_a_key_of_its_own():
    from purejaxdrl.env.craftax_env import CraftaxEnv

    seen = {}

    def step_no_reset(key, state, action, params):
        seen["step"] = np.asarray(jax.random.key_data(key))
        ts = restart(jnp.zeros(2, jnp.float32))
        return state, ts._replace(discount=jnp.float32(0))  # the episode ended

    def reset(key, params):
        seen["reset"] = np.asarray(jax.random.key_data(key))
        return state, jnp.ones(2, jnp.float32)

    env = object.__new__(CraftaxEnv)  # the world, not Craftax's, is faked
    env._step_no_reset, env._reset = step_no_reset, reset
    state = jnp.zeros(())
    _, ts = env.step(jax.random.key(0), state, jnp.int32(0), ())
    np.testing.assert_array_equal(ts.observation, [1.0, 1.0])  # the reset's
    assert not np.array_equal(seen["step"], seen["reset"])


def test_craftax_reset_slots_and_logged_achievements_by_hand():
    from purejaxdrl.env.craftax_env import _achievements, reset_slots

    # One world per 32 environments, at least 2, at most one per environment.
    assert [reset_slots(n) for n in (1, 2, 8, 64, 96, 128)] == [1, 2, 2, 2, 3, 4]
    info = {"Achievements/collect_wood": 100.0, "score": 3.0, "discount": 1.0}
    assert _achievements(info) == {"Achievements/collect_wood": 100.0}
