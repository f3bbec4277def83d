import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd

SMALL = {
    "num_envs": 4,
    "unroll_length": 16,
    "total_steps": 4 * 16 * 6,
    "ppo": {"num_minibatches": 2, "num_epochs": 2},
    "devices": 1,
}


def _experiment(**overrides):
    config = pjd.apply_overrides(pjd.TrainConfig(), {**SMALL, **overrides})
    return pjd.training.make_experiment(config)


def test_chunk_does_not_retrace_or_recompile():
    exp = _experiment()
    chunk = exp.runner.chunk(2)
    state = exp.runner.init(jax.random.key(0))
    state, m1 = chunk(state)
    state, m2 = chunk(state)
    # One entry in the jit cache: the second call reused the first trace. A
    # retrace here would mean a weak type or a Python value leaked into state.
    # 0 where the calls stayed off jit's fast path (seen once in CI, after
    # other tests in the same worker; 1 when run alone): nothing retraced.
    assert chunk._cache_size() <= 1
    assert m1["loss/total"].shape == (2,)


def test_same_seed_same_run_and_different_seed_different_run():
    def params_after(seed):
        exp = _experiment()
        state = exp.runner.init(jax.random.key(seed))
        state, _ = exp.runner.chunk(3)(state)
        return jax.flatten_util.ravel_pytree(state.agent.params)[0]

    a, b, c = params_after(0), params_after(0), params_after(1)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


@pytest.mark.slow  # eager mode dispatches op by op: a minute
def test_update_jit_equals_no_jit():
    # One epoch of two minibatches: eager mode dispatches op by op (~8 s an epoch).
    exp = _experiment(ppo={"num_minibatches": 2, "num_epochs": 1})
    state = exp.runner.init(jax.random.key(0))
    from purejaxdrl.runners.rollout import unroll

    _, traj = unroll(
        exp.env,
        state.env_params,
        exp.agent,
        state.agent.params,
        state.actor,
        jax.random.key(1),
        16,
    )
    traj = traj._replace(info={})
    key = jax.random.key(2)
    jitted, m_jit = jax.jit(exp.agent.update)(state.agent, traj, key)
    with jax.disable_jit():
        eager, m_eager = exp.agent.update(state.agent, traj, key)
    for x, y in zip(
        jax.tree.leaves(jitted.params), jax.tree.leaves(eager.params), strict=True
    ):
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(m_jit["loss/total"], m_eager["loss/total"], rtol=1e-4)


def test_first_ppo_epoch_starts_on_policy():
    # Acting and learning see identical inputs, so the first minibatch's ratio
    # is exactly 1: nothing clipped, KL 0 at the start of the first epoch.
    exp = _experiment(
        ppo={"num_epochs": 1, "num_minibatches": 1, "learning_rate": 1e-9}
    )
    state = exp.runner.init(jax.random.key(0))
    _, metrics = exp.runner.chunk(1)(state)
    assert float(metrics["clip_fraction"][0]) == 0.0
    assert abs(float(metrics["approx_kl"][0])) < 1e-6


def test_episode_metrics_are_nan_free_sums():
    exp = _experiment(total_steps=4 * 16 * 40)
    state = exp.runner.init(jax.random.key(0))
    _, metrics = exp.runner.chunk(40)(state)
    count = float(metrics["episode/count"].sum())
    assert count > 0
    mean = float(metrics["episode/return_sum"].sum()) / count
    # CartPole returns are episode lengths.
    assert mean == float(metrics["episode/length_sum"].sum()) / count
    assert 8 <= mean <= 500


def test_continuous_actions_and_observation_normalisation_run():
    exp = _experiment(env={"id": "Pendulum-v1", "normalize_observations": True})
    state = exp.runner.init(jax.random.key(0))
    state, metrics = exp.runner.chunk(2)(state)
    assert np.all(np.isfinite(metrics["loss/total"]))
    stats = state.env_params.obs_stats
    assert float(stats.count) > 4 * 16 * 2 - 1  # statistics saw every step


def test_cnn_torso_on_minatar():
    exp = _experiment(
        env={"id": "Breakout-MinAtar"},
        network={"torso": "cnn", "shared_torso": True, "hidden_sizes": [32]},
    )
    state = exp.runner.init(jax.random.key(0))
    state, metrics = exp.runner.chunk(1)(state)
    assert np.all(np.isfinite(metrics["loss/total"]))


def test_chunk_lengths_cover_all_updates():
    from purejaxdrl.training.schedule import chunk_lengths

    for n, logs in [(976, 20), (97, 20), (5, 20), (1000, 7), (1, 1)]:
        lengths = chunk_lengths(n, logs)
        assert sum(lengths) == n
        assert len(set(lengths)) <= 2


def test_train_returns_metrics_history():
    config = pjd.apply_overrides(pjd.TrainConfig(), {**SMALL, "num_logs": 3})
    result = pjd.train(config)
    assert result.env_steps == 6 * 64
    assert [r["updates"] for r in result.history] == [2, 4, 6]
    assert result.compile_seconds > 0 and result.steps_per_second > 0
    assert jnp.isfinite(result.mean_return)


def test_env_with_constant_reward_trains_inside_shard_map():
    # MountainCar's reward is the constant -1: data built from constants is
    # invariant across devices, yet it must be carried as per-device data.
    exp = _experiment(env={"id": "MountainCar-v0"})
    state = exp.runner.init(jax.random.key(0))
    _, metrics = exp.runner.chunk(1)(state)
    assert np.all(np.isfinite(metrics["loss/total"]))


class BadAtStep(pjd.env.Env):
    """Counts its steps; its observation is `bad` after exactly `at` of them."""

    def __init__(self, bad=float("nan"), at=20):
        self.bad, self.at = bad, at

    @property
    def default_params(self):
        return None

    def observation_spec(self, params):
        return pjd.env.Box((1,))

    def action_spec(self, params):
        return pjd.env.Discrete(2)

    def reset(self, key, params):
        return jnp.int32(0), pjd.env.restart(jnp.zeros(1, jnp.float32))

    def step(self, key, state, action, params):
        n = state + 1  # never ends: no episode boundary to think about
        obs = jnp.where(n == self.at, self.bad, n.astype(jnp.float32)) * jnp.ones(1)
        ts = pjd.types.TimeStep(
            obs, jnp.float32(1.0), jnp.float32(1.0), jnp.bool_(False), obs, {}
        )
        return n, ts


@pytest.mark.parametrize("normalize", [False, True])
def test_a_non_finite_observation_is_counted_at_the_update_it_came(normalize):
    # 4 envs x 16 steps per update: step 20 is the 4th step of update 2 (index
    # 1), so each env's observation there is counted once (4 entries), and its
    # final observation (the same array where no episode ended). Normalised,
    # an inf observation is clipped to 10 for the learner: counted before that.
    bad = float("inf") if normalize else float("nan")
    pjd.env.register("BadAtStep20-v0", lambda: BadAtStep(bad))
    exp = _experiment(env={"id": "BadAtStep20-v0", "normalize_observations": normalize})
    state = exp.runner.init(jax.random.key(0))
    _, metrics = exp.runner.chunk(3)(state)
    np.testing.assert_array_equal(metrics["non_finite/observation"], [0, 4, 0])
    np.testing.assert_array_equal(metrics["non_finite/reward"], [0, 0, 0])
    # Normalised, the inf is clipped for the learner at update 2 (and it
    # makes the statistics inf, so from update 3 every normalised observation
    # is NaN: the run must stop at update 2); the final observations are
    # counted as the environment returned them, as the observations are.
    np.testing.assert_array_equal(metrics["non_finite/final_observation"], [0, 4, 0])


def test_a_healthy_environment_counts_nothing_non_finite():
    exp = _experiment()
    _, metrics = exp.runner.chunk(2)(exp.runner.init(jax.random.key(0)))
    for output in ("observation", "reward", "final_observation"):
        np.testing.assert_array_equal(metrics[f"non_finite/{output}"], [0, 0])
