"""A Gymnasium environment's own `info["metrics"]`, logged as a JAX Env's are."""

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.env.host import make_host_env

gym = pytest.importorskip("gymnasium")


class Counting(gym.Env):
    """Episodes of 3 + (seed % 3) steps; metrics: one a step, and the action."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.limit = 0, 3 + int(self.np_random.integers(3))
        return np.zeros(2, np.float32), {"metrics": {"steps": 0.0, "pushes": 0.0}}

    def step(self, action):
        self.t += 1
        metrics = {"steps": 1.0, "pushes": float(action)}
        obs = np.full(2, self.t / 10, np.float32)
        return obs, 1.0, self.t >= self.limit, False, {"metrics": metrics}


gym.register("HostMetricsCounting-v0", entry_point=Counting)


def test_the_adapter_reports_the_metrics_per_environment():
    env = make_host_env("gymnasium:HostMetricsCounting-v0", 3, 0)
    assert env.spec.metrics == ("pushes", "steps")
    env.reset()
    step = env.step(np.array([1, 0, 1]))
    np.testing.assert_array_equal(step.metrics["steps"], [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(step.metrics["pushes"], [1.0, 0.0, 1.0])
    env.close()


@pytest.mark.timeout(300)
def test_a_host_run_logs_them_as_env_metrics():
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole_envpool", "ppo").config,
        {
            "env": {"id": "gymnasium:HostMetricsCounting-v0"},
            "devices": 1,
            "num_envs": 4,
            "total_steps": 4 * 32 * 4,
            "num_logs": 2,
            "eval": {"episodes": 3, "every": 1},
        },
    )
    result = pjd.train(config, console=False)
    for record in result.history:
        # One "step" per transition: an episode's sum is its length.
        assert record["env/steps"] == pytest.approx(record["episode/mean_length"])
        assert 0.0 <= record["env/pushes"] <= record["env/steps"]
        # The evaluation's too: each episode's sum is its length (3 to 5).
        assert record["eval/env/steps"] == pytest.approx(record["eval/mean_length"])
        assert 3 <= record["eval/env/steps"] <= 5
        assert 0.0 <= record["eval/env/pushes"] <= record["eval/env/steps"]
