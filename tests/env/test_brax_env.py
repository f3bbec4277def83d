import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import env as envs
from tests.helpers import cli_error_line, count_traces, trace_reset_and_steps

BRAX_ENVS = ["inverted_pendulum", "reacher", "inverted_double_pendulum"]


def _structure(ts):
    return jax.tree.structure(ts), [(x.shape, x.dtype) for x in jax.tree.leaves(ts)]


def test_every_brax_env_is_registered():
    names = envs.registered()
    for name in (
        "ant",
        "halfcheetah",
        "hopper",
        "humanoid",
        "inverted_pendulum",
        "reacher",
        "walker2d",
    ):
        assert f"brax/{name}" in names


def test_an_unknown_brax_option_is_refused_before_the_model_loads(monkeypatch):
    import brax.envs

    from purejaxdrl.config import ConfigError

    def must_not_load(*args, **kwargs):
        raise AssertionError("brax built the environment")

    monkeypatch.setattr(brax.envs, "get_environment", must_not_load)
    with pytest.raises(ConfigError) as error:
        envs.make("brax/ant", episode_lenght=100)
    message = str(error.value)
    assert "'episode_lenght' is not an option of brax/ant" in message
    assert "did you mean 'episode_length'?" in message
    # The adapter's, ant's and brax's pipeline's keyword arguments.
    for name in ("backend", "episode_length", "ctrl_cost_weight", "n_frames"):
        assert name in message


def test_the_generalized_backend_is_refused_in_one_line(monkeypatch):
    # Its contact solver fails shard_map's type check (every run steps its envs
    # inside shard_map), after seconds of tracing and with a long traceback.
    import brax.envs

    def must_not_load(*args, **kwargs):
        raise AssertionError("brax built the environment")

    monkeypatch.setattr(brax.envs, "get_environment", must_not_load)
    with pytest.raises(
        pjd.ConfigError, match="backend=generalized fails inside shard_map"
    ):
        envs.make("brax/inverted_pendulum", backend="generalized")
    with pytest.raises(
        pjd.ConfigError, match="backend='sprin' is not one of positional"
    ):
        envs.make("brax/inverted_pendulum", backend="sprin")  # not brax's list


@pytest.mark.parametrize("name", BRAX_ENVS)
def test_brax_adapter_jit_vmap_and_identical_structures(name):
    env = envs.EpisodeStatistics(
        envs.make(f"brax/{name}", backend="positional", episode_length=5)
    )
    params = env.default_params
    n = 2
    keys = jax.random.split(jax.random.key(0), n)
    (act_dim,) = env.action_spec(params).shape
    actions = jnp.zeros((n, act_dim))

    # Traced as jit traces it, compiled never (brax programs take long to
    # compile): the structures, shapes and dtypes are the trace's.
    def reset_and_step(keys):
        state, ts0 = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
        state1, ts1 = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            keys, state, actions, params
        )
        return state, ts0, state1, ts1

    state, ts0, state1, ts1 = jax.eval_shape(reset_and_step, keys)
    assert _structure(ts0) == _structure(ts1)
    assert jax.tree.structure(state) == jax.tree.structure(state1)
    assert ts1.reward.dtype == jnp.float32 and ts1.truncated.dtype == jnp.bool_
    assert ts1.observation.shape == (n, *env.observation_spec(params).shape)


def test_brax_time_limit_truncates_and_keeps_final_observation():
    env = envs.make("brax/inverted_pendulum", backend="positional", episode_length=3)
    params = env.default_params
    state, ts = env.reset(jax.random.key(0), params)
    step = jax.jit(env.step)
    for t in range(3):
        state, ts = step(jax.random.key(t + 1), state, jnp.zeros(1), params)
    # Zero force keeps the pole up for 3 steps: a truncation, not a termination.
    assert bool(ts.truncated) and float(ts.discount) == 1.0
    assert int(state.steps) == 0  # the episode restarted
    assert not np.allclose(ts.observation, ts.final_observation)


def test_brax_termination_is_not_truncation():
    env = envs.make("brax/inverted_pendulum", backend="positional", episode_length=1000)
    params = env.default_params
    state, ts = env.reset(jax.random.key(0), params)
    step = jax.jit(env.step)
    for t in range(200):  # full force one way drops the pole
        state, ts = step(jax.random.key(t), state, jnp.ones(1), params)
        if float(ts.discount) == 0.0:
            break
    assert float(ts.discount) == 0.0 and not bool(ts.truncated)


def test_brax_physics_is_traced_once_however_often_a_program_calls_it(monkeypatch):
    # The task's reset and step are jitted: a run's programs and each step's
    # auto-reset reuse one trace (brax's physics takes seconds to trace).
    from brax import envs as brax_envs

    cls = brax_envs._envs["inverted_pendulum"]
    traced = count_traces(monkeypatch, cls, ("reset", "step"))
    env = envs.make("brax/inverted_pendulum", backend="positional", episode_length=3)
    trace_reset_and_steps(env)
    assert traced == {"reset": 1, "step": 1}


@pytest.mark.timeout(300)
def test_the_mjx_backend_trains_inside_shard_map():
    # MJX's solver mixes per-device and replicated values in a lax.cond, as
    # Playground's does: its env turns shard_map's check off, and trains.
    config = pjd.apply_overrides(
        pjd.load_preset("inverted_pendulum").config,
        {"env": {"options": {"backend": "mjx", "episode_length": 16}},
         "num_envs": 4, "unroll_length": 8, "total_steps": 4 * 8 * 2,
         "num_logs": 1, "devices": 1,
         "ppo": {"num_minibatches": 1, "num_epochs": 1}},
    )  # fmt: skip
    assert envs.make("brax/inverted_pendulum", backend="mjx").vma_checked is False
    result = pjd.train(config, console=False)
    assert result.updates == 2 and np.isfinite(result.history[-1]["loss/total"])


def test_brax_says_nothing_of_its_maintenance_at_each_model_load():
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        envs.make("brax/inverted_pendulum")
    assert not [w for w in caught if "not actively being maintained" in str(w.message)]


def test_brax_reward_components_are_logged_and_summed_over_each_episode():
    # reacher's reward is its two metrics' sum: the metrics are the step's own.
    env = envs.EpisodeStatistics(
        envs.make("brax/reacher", backend="positional", episode_length=3)
    )
    state, ts = env.reset(jax.random.key(0), ())
    assert ts.info["metrics"] == {"reward_ctrl": 0.0, "reward_dist": 0.0}
    step = jax.jit(env.step)
    totals = {"reward_ctrl": 0.0, "reward_dist": 0.0}
    for t in range(3):
        state, ts = step(jax.random.key(t + 1), state, jnp.full(2, 0.3), ())
        metrics = ts.info["metrics"]
        np.testing.assert_allclose(sum(metrics.values()), ts.reward, rtol=1e-6)
        totals = {k: v + float(metrics[k]) for k, v in totals.items()}
    assert bool(ts.truncated)
    for name, total in totals.items():
        np.testing.assert_allclose(ts.info["episode_metrics"][name], total, rtol=1e-6)
    assert float(state.metric_sums["reward_ctrl"]) == 0.0  # the next episode's


def test_an_episode_length_past_int32_is_one_line():
    # It overflowed while the first chunk was jitted, an OverflowError traceback.
    from purejaxdrl.config import ConfigError

    with pytest.raises(ConfigError, match=r"episode_length=2147483648 must be in "):
        envs.make("brax/inverted_pendulum", episode_length=2**31)


def test_an_episode_length_below_one_is_refused_in_both_spellings(capsys):
    # It named neither the flag nor Python's spelling, nor env.options, where
    # Playground's refusal of the same option names all three (mut26 #9).
    argv = "train --env.id brax/inverted_pendulum --env.option episode_length=0"
    line = cli_error_line(argv.split(), capsys)
    assert line == (
        "purejaxdrl: error: env.options episode_length=0 must be >= 1; pass a "
        "positive number of steps, e.g. --env.option episode_length=1000 "
        "(env.options={'episode_length': 1000} in Python)."
    )
    with pytest.raises(pjd.ConfigError) as error:  # Python's: the same words
        envs.make("brax/inverted_pendulum", episode_length=0)
    assert line == f"purejaxdrl: error: {error.value}"


def test_a_one_step_brax_episode_is_truncated_at_its_first_step():
    # 1 is the rule's own boundary: refusing it ("episode_length=1 must be
    # >= 1") would contradict itself (mut26 B05).
    env = envs.make("brax/inverted_pendulum", backend="positional", episode_length=1)
    params = env.default_params
    state, _ = env.reset(jax.random.key(0), params)
    _, ts = jax.jit(env.step)(jax.random.key(1), state, jnp.zeros(1), params)
    # Zero force keeps the pole up: the time limit ends it, a truncation.
    assert bool(ts.truncated) and float(ts.discount) == 1.0


def test_brax_step_is_the_raw_step_with_a_time_limit_and_a_reset_from_its_key():
    # Reference written on brax's raw environment, by the rule: step the
    # physics; truncate at the time limit unless the step terminated; where
    # either ended the episode, restart from `raw.reset(key)` with the step's
    # own (unsplit) key, keeping the final observation. The unsplit key is
    # what runs of earlier versions used: the same episodes, bit for bit.
    env = envs.make("brax/inverted_pendulum", backend="positional", episode_length=8)
    raw, params = env.env, env.default_params

    def reference(key, state, action):
        nxt = raw.step(state.inner, jnp.clip(action, -1.0, 1.0))
        steps = state.steps + 1
        terminated = nxt.done > 0.5
        truncated = (steps >= 8) & ~terminated
        done = terminated | truncated
        inner = jax.tree.map(lambda r, s: jnp.where(done, r, s), raw.reset(key), nxt)
        obs = inner.obs.astype(jnp.float32)
        return (inner, jnp.where(done, 0, steps)), (
            obs,
            nxt.obs.astype(jnp.float32),
            1.0 - terminated,
            truncated,
        )

    state, _ = env.reset(jax.random.key(0), params)
    step, reference = jax.jit(env.step), jax.jit(reference)
    ends = []
    # Full force drops the pole at t = 6, before the limit; no force then keeps
    # the next episode's pole up until the limit, at t = 14.
    for t in range(15):
        key, action = jax.random.key(t + 1), jnp.full(1, 1.0 if t < 7 else 0.0)
        (inner, steps), (obs, final, discount, truncated) = reference(
            key, state, action
        )
        state, ts = step(key, state, action, params)
        assert jax.tree.all(jax.tree.map(np.array_equal, state.inner, inner))
        assert int(state.steps) == int(steps)
        np.testing.assert_array_equal(ts.observation, obs)
        np.testing.assert_array_equal(ts.final_observation, final)
        assert float(ts.discount) == float(discount)
        assert bool(ts.truncated) == bool(truncated)
        ends.append((float(ts.discount) == 0.0, bool(ts.truncated)))
    assert (True, False) in ends and (False, True) in ends  # both ends happen
