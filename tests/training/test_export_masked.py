"""An exported policy of a masked Gymnasium environment takes the observation
with `info["action_mask"]` appended, as docs/guide/evaluation.md shows."""

import jax
import numpy as np
import pytest

import purejaxdrl as pjd

gym = pytest.importorskip("gymnasium")


@pytest.mark.timeout(600)
def test_a_taxi_policy_takes_the_flat_state_and_the_mask_and_acts_legally(tmp_path):
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {
            "env": {"id": "gymnasium:Taxi-v4"},
            "num_envs": 4,
            "unroll_length": 32,
            "total_steps": 4 * 32 * 2,
            "num_logs": 1,
            "devices": 1,
            "run_dir": str(tmp_path / "runs"),
        },
    )
    result = pjd.train(config, write_files=True)
    policy = pjd.load_policy(pjd.export_policy(result.run_dir, tmp_path / "taxi"))
    env = gym.make("Taxi-v4")
    # The guide's lines, over a few states: [500] one-hot + 6 flags.
    for seed in range(20):
        obs, info = env.reset(seed=seed)
        flat = gym.spaces.flatten(env.observation_space, obs)
        x = np.concatenate([flat, info["action_mask"]]).astype(np.float32)
        assert x.shape == (506,)
        action = int(policy.mode(x[None])[0])
        assert info["action_mask"][action] == 1, (seed, action, info)
        sampled = jax.jit(policy.act)(np.repeat(x[None], 64, 0), jax.random.key(seed))
        assert np.all(info["action_mask"][np.asarray(sampled)] == 1)
    with pytest.raises(ValueError, match=r"shape \[506\].*6 short: .*action_mask"):
        policy.mode(flat[None].astype(np.float32))
