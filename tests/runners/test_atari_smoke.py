"""A few updates of Pong through the actor-learner runner: shapes and dtypes.

EnvPool's Atari frames are uint8 [4, 84, 84] stacks; they must reach the
learner's device as uint8 (4x fewer bytes than float32) and become float32
only there, in the pixel torso's own 1/255 scaling.
"""

import jax
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.runners.sebulba import SebulbaRunner

pytest.importorskip("envpool")

T, B, UPDATES = 8, 4, 3


@pytest.mark.parametrize(
    "torso", ["nature", pytest.param("impala_resnet", marks=pytest.mark.slow)]
)
def test_pong_trains_a_few_updates_with_uint8_frames(torso, monkeypatch):
    seen = []
    to_learner = SebulbaRunner._to_learner

    def spy(self, batches):
        traj = to_learner(self, batches)
        seen.append((batches[0].transitions, traj))
        return traj

    monkeypatch.setattr(SebulbaRunner, "_to_learner", spy)
    config = pjd.load_preset("cartpole_envpool", "impala").config
    config = pjd.apply_overrides(
        config,
        {
            "env": {"id": "envpool:Pong-v5"},
            "devices": 1,
            "num_envs": B,
            "unroll_length": T,
            "total_steps": T * B * UPDATES,
            "num_logs": UPDATES,
            "network": {"torso": torso, "hidden_sizes": [32]},
            "impala": {"reward_clip": 1.0},
        },
    )
    result = pjd.train(config)
    assert result.updates == UPDATES and len(seen) == UPDATES
    host, device = seen[0]
    assert host.observation.shape == (T, B, 4, 84, 84)
    assert host.observation.dtype == np.uint8
    assert device.observation.dtype == np.uint8  # on the device, still uint8
    assert device.final_observation.dtype == np.uint8
    assert host.action.dtype == np.int32 and host.action.shape == (T, B)
    assert host.log_prob.shape == (T, B) and host.reward.shape == (T, B)
    assert np.all(host.action < 18)  # the full action set
    leaves = jax.tree.leaves(jax.device_get(result.state.agent.params))
    assert all(np.isfinite(x).all() for x in leaves)
    for record in result.history:
        assert np.isfinite(record["loss/total"]), record
