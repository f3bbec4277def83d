"""An exported continuous policy records its environment's own action bounds.

hr21 #6: policy.json's action said `{'box': [1], 'low': -1.0, 'high': 1.0}`
for Pendulum-v1, whose torque is in [-2, 2]: a user holding only the folder
could not map the policy's [-1, 1] to the environment's range.
"""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents.registry import algorithm
from purejaxdrl.env.base import Box
from purejaxdrl.env.specs import action_bounds
from purejaxdrl.env.wrappers import EpisodeStatistics
from purejaxdrl.training.policy.exported import write_policy
from purejaxdrl.training.policy.record import PolicySource

pytestmark = pytest.mark.timeout(300)


def _tiny(env_id, tmp_path, **more):
    return pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"num_envs": 4, "unroll_length": 8, "total_steps": 32, "num_logs": 1,
         "devices": 1, "env": {"id": env_id}, "eval": {"episodes": 0},
         "run_dir": str(tmp_path / "runs"), **more},
    )  # fmt: skip


def _action(folder):
    return json.loads((folder / "policy.json").read_text())["action"]


def test_a_device_policy_records_pendulums_torque_range(tmp_path):
    result = pjd.train(_tiny("Pendulum-v1", tmp_path), write_files=True, console=False)
    folder = pjd.export_policy(result.run_dir, tmp_path / "policy")
    assert _action(folder) == {
        "box": [1], "low": -1.0, "high": 1.0, "env_low": [-2.0], "env_high": [2.0],
    }  # fmt: skip
    policy = pjd.load_policy(folder)
    assert policy.spec["action"]["env_high"] == [2.0]


def test_a_host_policy_records_its_gymnasium_box_bounds(tmp_path):
    pytest.importorskip("gymnasium")
    config = _tiny("gymnasium:Pendulum-v1", tmp_path, host={"deterministic": True})
    result = pjd.train(config, console=False)
    folder = result.export(tmp_path / "policy")
    assert _action(folder)["env_low"] == [-2.0]
    assert _action(folder)["env_high"] == [2.0]


def test_environments_acting_in_minus_one_to_one_record_that_and_discrete_none():
    class Unit(pjd.env.Env):  # as brax's and Playground's: scaled by nobody
        def action_spec(self, params):
            return Box((3,))

    assert action_bounds(Unit(), None) == ((-1.0,) * 3, (1.0,) * 3)
    assert action_bounds(pjd.env.make("CartPole-v1"), None) is None
    # Wrapped (episode statistics), gymnax's scaled range is still found.
    env = pjd.env.make("MountainCarContinuous-v0")
    assert action_bounds(env, env.default_params) == ((-1.0,), (1.0,))
    pendulum = pjd.env.make("Pendulum-v1")
    assert action_bounds(pendulum, pendulum.default_params) == ((-2.0,), (2.0,))


def test_a_user_envs_own_action_bounds_are_not_read():
    # rd21 #4: any `action_bounds` attribute was read (through wrappers): an
    # array crashed every make_experiment, a method was recorded as bounds.
    class Mine(pjd.env.Env):
        action_bounds = np.array([[-2.0, -2.0], [2.0, 2.0]])

        def action_spec(self, params):
            return Box((2,))

    class Method(Mine):
        def action_bounds(self):
            return "anything"

    for env in (Mine(), Method(), EpisodeStatistics(Mine())):
        assert action_bounds(env, None) == ((-1.0, -1.0), (1.0, 1.0))


@pytest.mark.parametrize(
    "bounds",
    [((-1.0,), (1.0, 2.0)), ((-1.0, 1.0),), ((float("nan"),) * 2, (1.0,) * 2), "ab"],
)
def test_an_adapters_malformed_bounds_are_refused(bounds):
    class Adapter(pjd.env.Env):
        _scaled_action_bounds = bounds

        def action_spec(self, params):
            return Box((2,))

    with pytest.raises(ValueError) as e:
        action_bounds(Adapter(), None)
    assert str(e.value).startswith(
        f"Adapter._scaled_action_bounds={bounds!r} is not a (low, high) pair of 2 "
        "finite floats each, for its action spec Box((2,))"
    )


def test_a_folder_exported_before_the_bounds_were_recorded_still_loads(tmp_path):
    config = pjd.apply_overrides(
        pjd.TrainConfig(), {"env": {"id": "Pendulum-v1"}, "devices": 1}
    )
    env = pjd.env.make("Pendulum-v1")
    specs = (env.observation_spec(env.default_params), Box((1,)))
    network, _ = algorithm("ppo").make_networks(
        config.algo_config, config.network, *specs
    )
    params = network.init(jax.random.key(0), jnp.zeros(3))
    folder = write_policy(
        tmp_path / "old", PolicySource(config, params, None, 1, specs)
    )
    assert _action(folder) == {"box": [1], "low": -1.0, "high": 1.0}
    action = pjd.load_policy(folder).mode(np.zeros((2, 3), np.float32))
    assert action.shape == (2, 1)
