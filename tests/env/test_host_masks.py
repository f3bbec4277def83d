"""Illegal actions on host environments: Gymnasium's `info["action_mask"]`.

The probe is `tests.probe.MaskedProbeEnv`'s episode as a Gymnasium environment:
4 steps, observation a one-hot of the step, actions paying 0, 1, 2, and action
2 illegal at odd steps (where it still pays most), reported the Gymnasium way
in `info["action_mask"]`. With the mask an episode returns at most
2 + 1 + 2 + 1 = 6; only the illegal action gives more.
"""

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError
from purejaxdrl.env.host import make_host_env

gym = pytest.importorskip("gymnasium")

LENGTH, REWARDS = 4, np.array([0.0, 1.0, 2.0], np.float32)


def _legal(t: int) -> np.ndarray:
    return np.array([1, 1, t % 2 == 0], np.int8)


class MaskedCorridor(gym.Env):
    """The probe: action 2 is illegal at odd steps, and pays 2 anyway."""

    def __init__(self, flat: bool = True):
        shape = (LENGTH,) if flat else (2, 2)
        self.observation_space = gym.spaces.Box(0.0, 1.0, shape, np.float32)
        self.action_space = gym.spaces.Discrete(3)
        self.flat, self.t = flat, 0

    def _obs(self):
        obs = np.eye(LENGTH, dtype=np.float32)[min(self.t, LENGTH - 1)]
        return (obs if self.flat else obs.reshape(2, 2)), {
            "action_mask": _legal(self.t)
        }

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs()

    def step(self, action):
        reward = float(REWARDS[action])
        self.t += 1
        obs, info = self._obs()
        return obs, reward, self.t == LENGTH, False, info


gym.register("MaskedCorridor-test", entry_point=MaskedCorridor)
gym.register("MaskedGrid-test", entry_point=MaskedCorridor, kwargs={"flat": False})


def test_the_mask_rides_on_the_observation_and_the_spec_reads_it():
    env = make_host_env("gymnasium:MaskedCorridor-test", 2, 0)
    spec = env.spec
    assert spec.observation.shape == (LENGTH + 3,)
    assert spec.action.num_values == 3 and spec.action.legal is not None
    steps = [env.reset()]
    steps += [env.step(np.zeros(2, np.int32)) for _ in range(LENGTH + 1)]
    # t = 0..3, the final observation (t = 4: its flags as at t = 3's rule),
    # then the reset step's first observation of the next episode (t = 0).
    for t, ts in zip([0, 1, 2, 3, 4, 0], steps, strict=True):
        np.testing.assert_array_equal(ts.observation[:, LENGTH:], [_legal(t)] * 2)
        legal = np.asarray(spec.action.legal(ts.observation))
        np.testing.assert_array_equal(legal, [_legal(t).astype(bool)] * 2)
    assert steps[LENGTH].terminated.all() and steps[LENGTH + 1].first.all()
    env.close()


def test_a_mask_on_observations_it_cannot_ride_on_is_one_clear_error():
    with pytest.raises(ConfigError, match=r"reports info\['action_mask'\].*flatten"):
        make_host_env("gymnasium:MaskedGrid-test", 1, 0)


@pytest.mark.timeout(300)
def test_the_actor_learner_runner_never_takes_an_illegal_action_and_learns(tmp_path):
    # PPO through the host runner: every training episode returns at most 6
    # (8 only through the illegal action), and the greedy policy learned
    # takes the best legal action at every step, exported too.
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole_envpool", "ppo").config,
        {
            "env": {"id": "gymnasium:MaskedCorridor-test"}, "devices": 1,
            "num_envs": 8, "unroll_length": 8, "total_steps": 8 * 8 * 60,
            "num_logs": 6, "eval": {"episodes": 4}, "run_dir": str(tmp_path),
            "ppo": {"learning_rate": 3e-3, "anneal_lr": False},
            "network": {"hidden_sizes": [32]},
        },
    )  # fmt: skip
    result = pjd.train(config, console=False, write_files=True)
    returns = [r["episode/mean_return"] for r in result.history]
    assert max(returns) <= 6.0 + 1e-5, returns
    assert result.eval_return == pytest.approx(6.0), result.eval_return
    # The exported policy rebuilds the environment's `legal` when loaded:
    # action 2 at even steps, 1 at odd ones (where 2 would pay most).
    policy = pjd.load_policy(pjd.export_policy(result.run_dir, tmp_path / "policy"))
    obs = np.concatenate([np.eye(LENGTH), [_legal(t) for t in range(LENGTH)]], 1)
    np.testing.assert_array_equal(policy.mode(obs.astype(np.float32)), [2, 1, 2, 1])
