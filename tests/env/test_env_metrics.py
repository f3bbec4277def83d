"""An environment's own metrics (`info["metrics"]`): summed per episode, logged."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import env as envs
from purejaxdrl.env.contract import check_contract
from tests.probe import ProbeEnv, ProbeParams


class MetricProbe(ProbeEnv):
    """The probe, logging its step in the episode (1, 2, 3...) and a constant 1."""

    def reset(self, key, params):
        state, ts = super().reset(key, params)
        return state, ts._replace(info={"metrics": {"t": ts.reward, "one": ts.reward}})

    def step(self, key, state, action, params):
        state, ts = super().step(key, state, action, params)
        metrics = {"t": ts.final_observation[0], "one": jnp.float32(1)}
        return state, ts._replace(info={"metrics": metrics})


def test_episode_statistics_sum_each_metric_over_its_episode():
    env = envs.EpisodeStatistics(MetricProbe())
    params = ProbeParams(jnp.int32(0), jnp.int32(3))
    state, ts = env.reset(jax.random.key(0), params)
    assert ts.info["episode_metrics"] == {"one": 0.0, "t": 0.0}
    sums = []
    for t in range(7):
        state, ts = env.step(jax.random.key(t), state, jnp.int32(0), params)
        sums.append({k: float(v) for k, v in ts.info["episode_metrics"].items()})
    # By hand: episodes of 3 steps end at steps 3 and 6; t sums to 1 + 2 + 3.
    ended = {"one": 3.0, "t": 6.0}
    nothing = {"one": 0.0, "t": 0.0}
    assert sums == [nothing, nothing, ended, nothing, nothing, ended, nothing]
    assert {k: float(v) for k, v in state.metric_sums.items()} == {"one": 1, "t": 1}


@pytest.mark.parametrize("devices", [1, 2])
def test_a_run_logs_each_metric_as_its_mean_episode_sum(monkeypatch, devices):
    monkeypatch.setitem(envs.registry._FACTORIES, "MetricProbe-v0", MetricProbe)
    config = pjd.apply_overrides(
        pjd.TrainConfig(),
        {
            "env": {"id": "MetricProbe-v0"},
            "num_envs": 4,
            "unroll_length": 6,
            "total_steps": 4 * 6 * 2,
            "num_logs": 1,
            "devices": devices,
            "ppo": {"num_minibatches": 1},
            "eval": {"episodes": 2},
        },
    )
    (record,) = pjd.train(config, console=False).history
    # 4 environments x 12 steps: 16 episodes of 3 steps, all alike.
    assert record["episode/count"] == 16
    assert record["env/t"] == 6.0 and record["env/one"] == 3.0
    assert record["episode/mean_length"] == 3.0
    # Evaluation's first episodes, summed alike.
    assert record["eval/env/t"] == 6.0 and record["eval/env/one"] == 3.0


def test_an_environment_without_metrics_logs_none():
    config = pjd.apply_overrides(
        pjd.TrainConfig(),
        {"num_envs": 4, "unroll_length": 8, "total_steps": 64, "num_logs": 1},
    )
    (record,) = pjd.train(config, console=False).history
    assert not [k for k in record if k.startswith("env/")]


class IntMetric(MetricProbe):
    def step(self, key, state, action, params):
        state, ts = super().step(key, state, action, params)
        return state, ts._replace(info={"metrics": {"t": jnp.int32(1), "one": 1.0}})


def test_a_metric_that_is_not_a_float32_scalar_is_named():
    env = IntMetric()
    with pytest.raises(ValueError, match=r"step's info\['metrics'\]\['t'\] is int32"):
        check_contract(env, env.default_params, "IntMetric-v0")
    check_contract(MetricProbe(), MetricProbe().default_params, "MetricProbe-v0")


class MetricsOnlyInStep(MetricProbe):
    def reset(self, key, params):
        return ProbeEnv.reset(self, key, params)  # info={}: no metrics


def test_a_reset_without_the_steps_metrics_is_named_with_the_fix():
    env = MetricsOnlyInStep()
    with pytest.raises(ValueError, match=r"reset's .* has \[\], step's \['one', 't'\]"):
        check_contract(env, env.default_params, "MetricsOnlyInStep-v0")


def test_the_logged_names_are_a_librarys_real_scalars():
    metrics = {"x": jnp.float32(1), "n": jnp.int32(2), "flag": jnp.bool_(True),
               "feet": jnp.zeros(4), "z": jnp.complex64(1)}  # fmt: skip
    assert envs.base.logged_names(metrics) == ["x", "n", "flag"]
    info = envs.base.metrics_info(metrics)
    assert {k: v.dtype for k, v in info["metrics"].items()} == dict.fromkeys(
        ["x", "n", "flag"], np.dtype("float32")
    )
    assert envs.base.metrics_info({"feet": jnp.zeros(4)}) == {}
    odd = {"group": {"a": 1.0}, "text": "f4", "none": None, "py": 2, "np": np.int8(1)}
    assert envs.base.logged_names(odd) == ["py", "np"]


class NestedMetric(MetricProbe):
    def reset(self, key, params):
        state, ts = ProbeEnv.reset(self, key, params)
        return state, envs.restart(ts.observation, {"reward": {"dist": 0.0}})

    def step(self, key, state, action, params):
        state, ts = super().step(key, state, action, params)
        return state, ts._replace(info={"metrics": {"reward": {"dist": ts.reward}}})


def test_a_nested_metrics_dict_is_named_not_a_traceback():
    env = NestedMetric()
    with pytest.raises(ValueError, match=r"info\['metrics'\]\['reward'\] is dict"):
        check_contract(env, env.default_params, "NestedMetric-v0")


def test_purejaxdrl_eval_prints_the_metrics_episode_sums(monkeypatch, tmp_path, capsys):
    from purejaxdrl import cli

    monkeypatch.setitem(envs.registry._FACTORIES, "MetricProbe-v0", MetricProbe)
    overrides = {"env": {"id": "MetricProbe-v0"}, "num_envs": 4, "unroll_length": 6,
                 "total_steps": 24, "num_logs": 1, "devices": 1,
                 "run_dir": str(tmp_path / "runs")}  # fmt: skip
    config = pjd.apply_overrides(pjd.TrainConfig(), overrides)
    run = pjd.train(config, console=False, write_files=True).run_dir
    summary = json.loads((run / "summary.json").read_text())
    assert summary["env/t"] == 6.0 and summary["env/one"] == 3.0
    assert "eval/env/t" not in summary  # no evaluation in training
    assert cli.main(["eval", str(run), "--episodes", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "mean return 3.00 ± 0.00 (std)" in out[0]
    assert out[1] == (
        "  environment's metrics, episode sums (mean over episodes): one 3, t 6"
    )
