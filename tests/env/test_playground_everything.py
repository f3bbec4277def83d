"""Playground tasks take what brax tasks take (issue 41, item 6).

A recurrent core, a policy exported from a run directory and stepped, and a
sweep of a replay learner. Exact resume on Playground is
`tests/env/test_randomize.py`'s (randomised models included); two devices,
`tests/env/test_playground_training.py`'s. Each test compiles MJX programs:
minutes on 2 CPU cores, so `-m slow`.
"""

import jax
import numpy as np
import pytest

pytest.importorskip("mujoco_playground")

import purejaxdrl as pjd  # noqa: E402

TOY = {
    "num_envs": 8,
    "unroll_length": 8,
    "total_steps": 8 * 8 * 2,
    "num_logs": 2,
    "devices": 1,
    "env": {"options": {"episode_length": 20}},
}


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_recurrent_run_exports_a_policy_that_steps(tmp_path):
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole_balance", "ppo").config,
        {
            **TOY,
            "run_dir": str(tmp_path / "runs"),
            "network": {"core": "gru", "core_size": 16},
            "ppo": {"num_epochs": 1, "num_minibatches": 2},
        },
    )
    result = pjd.train(config, write_files=True, console=False)
    assert result.updates == 2
    assert all(v == v for k, v in result.history[-1].items() if k.startswith("loss/"))
    policy = pjd.load_policy(pjd.export_policy(result.run_dir, tmp_path / "policy"))
    assert policy.spec["network"]["core"] == "gru"
    state = policy.initial_state(3)
    obs = jax.random.normal(jax.random.key(0), (3, 5))  # CartpoleBalance: 5 floats
    reset = np.array([True, False, True])
    state, action = jax.jit(policy.step)(state, obs, reset, jax.random.key(1))
    assert action.shape == (3, 1) and np.all(np.abs(action) <= 1)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_sweep_of_sac_runs_trains_each_seed():
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole_balance", "sac").config,
        {
            **TOY,
            "unroll_length": 1,
            "total_steps": 8 * 4,
            "sac": {"buffer_size": 64, "batch_size": 8, "min_replay": 8},
        },
    )
    result = pjd.sweep(config, seeds=2)
    assert len(result.final_return) == 2
    losses = [h[-1]["loss/critic"] for h in result.histories]
    assert all(np.isfinite(losses)) and losses[0] != losses[1], losses
