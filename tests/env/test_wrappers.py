import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import env as envs
from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import Box
from tests.probe import ProbeEnv, ProbeParams


def test_episode_statistics_report_completed_episodes_only():
    env = envs.EpisodeStatistics(ProbeEnv())
    params = ProbeParams(jnp.int32(0), jnp.int32(3))
    state, ts = env.reset(jax.random.key(0), params)
    done, returns, lengths = [], [], []
    for t in range(7):
        state, ts = env.step(jax.random.key(t), state, jnp.int32(0), params)
        done.append(bool(ts.info["episode_done"]))
        returns.append(float(ts.info["episode_return"]))
        lengths.append(int(ts.info["episode_length"]))
    assert done == [False, False, True, False, False, True, False]
    assert returns == [0, 0, 3, 0, 0, 3, 0]
    assert lengths == [0, 0, 3, 0, 0, 3, 0]


def test_running_statistics_match_numpy():
    rng = np.random.default_rng(0)
    batches = [rng.normal(3.0, 2.0, (50, 4)) for _ in range(5)]
    stats = envs.init_statistics((4,))
    for b in batches:
        stats = envs.update_statistics(stats, jnp.asarray(b))
    data = np.concatenate(batches)
    np.testing.assert_allclose(stats.mean, data.mean(0), rtol=1e-5)
    np.testing.assert_allclose(stats.variance, data.var(0), rtol=1e-3)


def test_running_statistics_are_global_across_devices():
    # Shards of unequal content combined over a named axis (vmap stands in for
    # devices) equal the statistics of the whole batch.
    rng = np.random.default_rng(1)
    data = rng.normal(0.0, 1.0, (4, 30, 3)) * np.arange(1, 5)[:, None, None]
    stats = envs.init_statistics((3,))
    merged = jax.vmap(
        lambda b: envs.update_statistics(stats, b, axis_name="d"), axis_name="d"
    )(jnp.asarray(data))
    whole = data.reshape(-1, 3)
    np.testing.assert_allclose(merged.mean[0], whole.mean(0), rtol=1e-4, atol=1e-6)
    variance = merged.m2[0] / merged.count[0]
    np.testing.assert_allclose(variance, whole.var(0), rtol=1e-3)
    np.testing.assert_allclose(merged.mean[0], merged.mean[3])


def test_normalize_observation_uses_params_statistics_and_keeps_raw():
    env = envs.NormalizeObservation(envs.make("CartPole-v1"))
    params = env.default_params
    stats = envs.update_statistics(
        params.obs_stats, jnp.asarray(np.random.default_rng(0).normal(size=(64, 4)))
    )
    params = params._replace(obs_stats=stats)
    state, ts = env.reset(jax.random.key(0), params)
    raw = ts.info["raw_observation"]
    np.testing.assert_allclose(
        ts.observation, (raw - stats.mean) / np.sqrt(stats.variance + 1e-8), rtol=1e-5
    )
    state, ts2 = env.step(jax.random.key(1), state, jnp.int32(0), params)
    assert jax.tree.structure(ts) == jax.tree.structure(ts2)
    new_params = env.update_statistics(params, {"raw_observation": raw[None]}, None)
    assert float(new_params.obs_stats.count) > float(stats.count)


class _OwnBatchedStep(envs.Wrapper):
    """An env whose batched step is not vmap(step): it tags what it returns."""

    def step_batch(self, keys, states, actions, params):
        states, ts = self.env.step_batch(keys, states, actions, params)
        return states, ts._replace(reward=ts.reward + 1000.0)


def test_normalize_observation_batches_with_the_inner_batched_step():
    # Playground's batched step resets only when an environment ended; a
    # vmap of `step` would reset every environment at every step.
    inner = _OwnBatchedStep(envs.make("CartPole-v1"))
    env = envs.NormalizeObservation(inner)
    params = env.default_params
    keys = jax.random.split(jax.random.key(0), 4)
    states, ts = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
    actions = jnp.zeros(4, jnp.int32)
    states, ts = env.step_batch(keys, states, actions, params)
    np.testing.assert_array_equal(ts.reward, 1001.0)
    raw = ts.info["raw_observation"]
    stats = params.obs_stats
    expected = (raw - stats.mean) / np.sqrt(stats.variance + 1e-8)
    np.testing.assert_allclose(ts.observation, expected, rtol=1e-6)


def test_normalized_observations_are_clipped_to_ten_standard_deviations():
    # CartPole's observations lie within ±0.05 after a reset and stay small
    # for a few steps. Statistics with means ±1 and a standard deviation of
    # 0.01 put entries 0 and 1 about 100 deviations out: the wrapper clips
    # them to -10 and +10. Entries 2 and 3 (mean 0, variance 1) stay as
    # they are. The reference is NumPy's z-score, clipped.
    env = envs.NormalizeObservation(envs.make("CartPole-v1"))
    variance = np.float32([1e-4, 1e-4, 1.0, 1.0])
    stats = envs.RunningStatistics(
        count=jnp.float32(10.0),
        mean=jnp.float32([1.0, -1.0, 0.0, 0.0]),
        m2=jnp.asarray(10.0 * variance),
    )
    params = env.default_params._replace(obs_stats=stats)

    def want(raw):
        z = (np.asarray(raw) - [1.0, -1.0, 0.0, 0.0]) / np.sqrt(variance + 1e-8)
        assert (z[0] < -50) and (z[1] > 50) and np.all(np.abs(z[2:]) < 10), z
        return np.clip(z, -10.0, 10.0)

    state, ts = env.reset(jax.random.key(0), params)
    np.testing.assert_allclose(
        ts.observation, want(ts.info["raw_observation"]), rtol=1e-6
    )
    np.testing.assert_array_equal(ts.observation[:2], [-10.0, 10.0])
    state, ts = env.step(jax.random.key(1), state, jnp.int32(0), params)
    raw = ts.info["raw_observation"]
    np.testing.assert_allclose(ts.observation, want(raw), rtol=1e-6)
    # Not ended: the final observation is this observation, clipped alike.
    np.testing.assert_allclose(ts.final_observation, want(raw), rtol=1e-6)


def test_hide_observations_drops_the_velocities_of_cartpole():
    from purejaxdrl.env.wrappers import HideObservations, check_hidden

    full = envs.make("CartPole-v1")
    masked = HideObservations(full, (1, 3))
    params = full.default_params
    assert masked.observation_spec(params).shape == (2,)
    assert HideObservations(full, (1,)).observation_spec(params).shape == (3,)
    _, ts_full = full.reset(jax.random.key(0), params)
    state, ts = masked.reset(jax.random.key(0), params)
    np.testing.assert_array_equal(ts.observation, ts_full.observation[np.array([0, 2])])
    for t in range(30):  # through an episode's end: final observations too
        key = jax.random.key(t)
        state_full, ts_full = full.step(key, state, jnp.int32(t % 2), params)
        state, ts = masked.step(key, state, jnp.int32(t % 2), params)
        np.testing.assert_array_equal(
            ts.observation, ts_full.observation[np.array([0, 2])]
        )
        np.testing.assert_array_equal(
            ts.final_observation, ts_full.final_observation[np.array([0, 2])]
        )
    box = full.observation_spec(params)
    for bad in [(4,), (1, 1), (0, 1, 2, 3)]:
        with pytest.raises(ConfigError, match="env.hide_observations"):
            check_hidden(bad, box, "CartPole-v1")
    for spec, what in [
        (Box((2, 2)), "has observations of shape (2, 2); leave it empty"),
        ({"state": box}, "has a dict of observations; leave it empty"),
    ]:
        with pytest.raises(ConfigError, match=re.escape(what)):
            check_hidden((0,), spec, "X")


@pytest.mark.parametrize(
    ("indices", "size", "fix"),
    [
        ((4,), 4, "must be distinct indices in [0, 4) of X's observation; e.g."),
        ((1, 1), 4, "must be distinct indices in [0, 4) of X's observation; e.g."),
        ((0, 1, 2, 3), 4,
         "hides all 4 entries of X's observation; leave at least one, e.g."),
        ((0,), 1, "hides all 1 entries of X's observation; leave it empty:"),
    ],
)  # fmt: skip
def test_a_bad_hidden_list_is_told_a_list_that_fits_both_ways(indices, size, fix):
    from purejaxdrl.env.wrappers import check_hidden

    # rec19 #3: "fix the list" / "leave at least one" named no spelling; the
    # example (every other entry from 1) is itself a list the check takes.
    with pytest.raises(ConfigError) as error:
        check_hidden(indices, Box((size,)), "X")
    message = str(error.value)
    assert message.startswith(f"env.hide_observations={list(indices)} {fix}")
    if size == 4:
        assert message.endswith(
            "e.g. --env.hide-observations 1 3 (env.hide_observations=(1, 3) in Python)."
        )
        check_hidden((1, 3), Box((size,)), "X")
    else:
        assert message.endswith(
            "--env.hide-observations with no index (env.hide_observations=() in "
            "Python)."
        )
