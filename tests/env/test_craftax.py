"""Craftax through the on-device adapter: episode ends told apart, exact final
observations, and a one-line error without the optional package."""

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import env as envs
from purejaxdrl.config import ConfigError
from tests.helpers import count_traces, trace_reset_and_steps

CLASSIC = "Craftax-Classic-Symbolic-v1"
GUIDE = pathlib.Path(__file__).parents[2] / "docs" / "guide" / "environments.md"


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


def test_option_values_of_the_wrong_kind_are_one_line():
    for value in ("abc", 2.5, True):
        with pytest.raises(ConfigError, match="max_timesteps=.* not an integer"):
            envs.make(CLASSIC, max_timesteps=value)


@pytest.mark.parametrize("value", [0, -5])
def test_a_step_limit_below_one_is_one_line(value):
    # Else every episode is truncated after one step, in silence (return 0).
    with pytest.raises(ConfigError) as error:
        envs.make(CLASSIC, max_timesteps=value)
    assert str(error.value) == (
        f"env.options max_timesteps={value} must be >= 1 (its time limit, in "
        f"steps; {CLASSIC}'s default: 10000); pass e.g. --env.option "
        "max_timesteps=10000 (env.options={'max_timesteps': 10000} in Python)."
    )
    envs.make(CLASSIC, max_timesteps=1)  # one step: a legitimate limit


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


def test_achievements_are_logged_in_the_step_that_ends_their_episode(classic):
    params = classic.default_params
    state, first = classic.reset(jax.random.key(0), params)
    metrics = first.info["metrics"]
    assert "Achievements/collect_wood" in metrics
    assert "discount" not in metrics and "score" not in metrics
    assert all(float(v) == 0.0 for v in metrics.values())
    # Craftax marks each achievement of an episode with 100 at its end.
    wood = state.achievements.at[0].set(True)
    state = state.replace(achievements=wood, timestep=jnp.asarray(5, jnp.int32))
    state, ts = jax.jit(classic.step)(jax.random.key(1), state, jnp.int32(0), params)
    assert ts.truncated and set(ts.info["metrics"]) == set(metrics)
    assert float(ts.info["metrics"]["Achievements/collect_wood"]) == 100.0
    assert float(ts.info["metrics"]["Achievements/place_table"]) == 0.0


def test_death_terminates(classic):
    params = classic.default_params
    state, _ = classic.reset(jax.random.key(0), params)
    dying = state.replace(player_health=jnp.asarray(-5.0, state.player_health.dtype))
    state, ts = classic.step(jax.random.key(1), dying, jnp.int32(0), params)
    assert ts.discount == 0.0 and not ts.truncated
    assert int(state.timestep) == 0  # a fresh episode


def _kill(states, i):
    health = states.player_health.at[i].set(jnp.asarray(-5, states.player_health.dtype))
    return states.replace(player_health=health)


@pytest.mark.parametrize("num_envs", [8, pytest.param(96, marks=pytest.mark.slow)])
def test_the_batched_step_gives_every_ended_environment_its_own_world(num_envs):
    # The batched step against vmap(step) (`tests/env/test_resets.py` checks
    # the logic exactly). With a step limit of 100 and staggered step counts,
    # more environments end at step 1 than it generates worlds for
    # (`reset_slots`: it then generates all), fewer at steps 2 and 3; one
    # environment dies at step 1, another at step 2.
    from purejaxdrl.env.craftax_env import reset_slots

    env = envs.make(CLASSIC, max_timesteps=100)
    slots = reset_slots(num_envs)
    assert slots + 6 <= num_envs
    params = env.default_params
    keys = jax.random.split(jax.random.key(0), num_envs)
    states, _ = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
    ends_at = np.zeros(num_envs, int)  # 0: not within the test
    ends_at[: slots + 1], ends_at[slots + 1], ends_at[slots + 2 : slots + 4] = 1, 2, 3
    timestep = np.where(ends_at > 0, 100 - ends_at, 0)
    states = states.replace(timestep=jnp.asarray(timestep, states.timestep.dtype))
    states = _kill(states, num_envs - 1)
    batched = jax.jit(env.step_batch)
    vmapped = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
    ended, deaths, ended_once = [], 0, np.zeros(num_envs, bool)
    a = b = states
    for t in range(4):
        if t == 1:
            a, b = _kill(a, num_envs - 2), _kill(b, num_envs - 2)
        keys = jax.random.split(jax.random.key(t + 1), num_envs)
        actions = jax.random.randint(jax.random.key(100 + t), (num_envs,), 0, 17)
        a, ts_a = batched(keys, a, actions, params)
        b, ts_b = vmapped(keys, b, actions, params)
        done = np.asarray(ts_a.last())
        np.testing.assert_array_equal(done, ts_b.last())
        # Environments still in their first episode: exactly vmap(step)'s.
        ended_once |= done
        leaves_a, leaves_b = jax.tree.leaves((a, ts_a)), jax.tree.leaves((b, ts_b))
        for x, y in zip(leaves_a, leaves_b, strict=True):
            np.testing.assert_array_equal(
                _numbers(x)[~ended_once], _numbers(y)[~ended_once]
            )
        # Those that ended: a new world from their own reset key, the one
        # vmap(step) generates up to XLA's float rounding for another batch
        # layout (Craftax's noise maps then differ in a few tiles).
        np.testing.assert_array_equal(a.timestep[done], 0)
        np.testing.assert_array_equal(a.player_position[done], b.player_position[done])
        if done.any():
            same = np.mean(np.asarray(a.map)[done] == np.asarray(b.map)[done])
            assert same > 0.8, same
        ended.append(int(done.sum()))
        deaths += int((ts_a.discount == 0).sum())
    assert ended == [slots + 2, 2, 2, 0] and deaths == 2, ended


def _numbers(x):
    if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
        return jax.random.key_data(x)
    return x


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_sweep_of_two_seeds_finishes():
    # Its init vmaps the GRU agent over the runs: with batched QRs (flax's
    # orthogonal initialiser) it hung on a 2-core CPU (`networks.base.orthogonal`).
    import purejaxdrl as pjd

    config = pjd.apply_overrides(
        pjd.load_preset("craftax_classic", "ppo").config,
        {
            "num_envs": 8,
            "unroll_length": 16,
            "total_steps": 384,
            "num_logs": 3,
            "devices": 1,
            "ppo": {"num_minibatches": 2},
        },
    )
    result = pjd.sweep(config, seeds=[0, 1])
    assert all(p is not None for p in result.final_params)


def test_world_generation_is_traced_once_however_often_a_program_calls_it(
    monkeypatch,
):
    # Jitted: init and every step's reset (both branches of `step_batch`'s)
    # reuse one trace of Craftax's world generation.
    from craftax.craftax_env import make_craftax_env_from_name

    cls = type(make_craftax_env_from_name(CLASSIC, auto_reset=False))
    traced = count_traces(monkeypatch, cls, ("reset", "step"))
    trace_reset_and_steps(envs.make(CLASSIC))
    assert traced == {"reset": 1, "step": 1}


def test_the_documented_step_limits_are_the_defaults():
    # The module and the environments guide state both limits; Craftax's is
    # ten times Classic's, so one shared figure would be wrong for one of them.
    from purejaxdrl.env import craftax_env

    limits = {
        name: envs.make(name).default_params.max_timesteps
        for name in (CLASSIC, "Craftax-Symbolic-v1")
    }
    assert limits == {CLASSIC: 10_000, "Craftax-Symbolic-v1": 100_000}
    guide = GUIDE.read_text().replace("\n", " ")
    for text in (craftax_env.__doc__.replace("\n", " "), guide):
        assert "10,000" in text and "100,000 for Craftax" in text
