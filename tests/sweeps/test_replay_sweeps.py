"""Sweeps of replay learners: one program, every member equal to its run alone."""

import jax
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.sweeps.program import sweep


def _config(env: str, algo: str, updates: int, **overrides):
    config = pjd.load_preset(env, algo).config
    return pjd.apply_overrides(
        config,
        {"total_steps": config.steps_per_update * updates, "num_logs": 2, **overrides},
    )


def _max_difference(a, b) -> float:
    diffs = jax.tree.map(
        lambda x, y: float(np.max(np.abs(np.asarray(x) - np.asarray(y)))), a, b
    )
    return max(jax.tree.leaves(diffs))


def _assert_members_match(result, runs, atol: float = 1e-6, devices: int = 1) -> None:
    for i in runs:
        config = pjd.apply_overrides(result.plan.run_config(i), {"devices": devices})
        alone = pjd.train(config)
        assert _max_difference(result.params(i), alone.state.agent.params) <= atol
        assert result.final_return[i] == pytest.approx(alone.mean_return, rel=1e-6)
        # Learning happened: the runs are not equal because nothing trained.
        assert alone.history[-1]["learner/grad_steps"] > 0


SMALL_NET = {"hidden_sizes": (32,)}
SMALL_DQN = {"min_replay": 512, "updates_per_step": 2, "dueling": False,
             "batch_size": 32}  # fmt: skip


def test_dqn_sweeps_match_their_runs_alone_and_split_replay_over_data_devices():
    # One test for both layouts: their two sweeps also give the memory check.
    # 16 envs x 4 steps per update; replay from 512 items: 12 updates of 2
    # gradient steps each after the first 8. A small network (one layer of 32,
    # no dueling head, batches of 32): fewer ops to compile for each of the six
    # programs, the same check.
    config = _config(
        "cartpole",
        "dqn",
        20,
        devices=1,
        network=SMALL_NET,
        dqn=SMALL_DQN,
    )
    one = sweep(config, grid={"learning_rate": [1e-3, 3e-4]}, seeds=[0, 3])
    assert one.programs_compiled == 1 and len(one.layouts) == 1
    _assert_members_match(one, [0, 3])  # each rate, each seed (2 compiles)

    # 2 runs on 8 devices: each run's environments and replay over 4 of them,
    # as the run alone on 4 devices splits them (each device draws from its
    # own shard, so DQN's draws depend on the device count). 12 updates: two
    # chunks of 6, one compiled program per run.
    config = _config("cartpole", "dqn", 12, network=SMALL_NET, dqn=SMALL_DQN)
    split = sweep(config, grid={"learning_rate": [1e-3, 3e-4]})
    (layout,) = split.layouts
    assert (layout.sweep, layout.data) == (2, 4)
    _assert_members_match(split, range(2), atol=1e-5, devices=4)

    # Memory is estimated per data device. The buffer (the preset's 50k
    # transitions per run, in both sweeps) dominates: a quarter per device.
    assert one.layouts[0].data == 1
    assert one.layouts[0].run_bytes > 3 * split.layouts[0].run_bytes


@pytest.mark.slow
@pytest.mark.trains  # optimized compiles: at -O0 a vmapped program's rounding
# differs from the run alone's, and brax's physics grows it to 1e-3 in 36 updates
def test_sac_sweep_on_brax_members_equal_their_runs_alone():
    # 2048 items before learning (32 updates), then 8 gradient steps per update.
    config = _config("inverted_pendulum", "sac", 36, devices=1)
    result = sweep(config, grid={"learning_rate": [1e-3, 3e-4]}, seeds=[0, 2])
    assert result.programs_compiled == 1
    # Rounding, not a member's setting: after the first learning update (8
    # gradient steps) a few of run 0's critic weights differ by 3e-5 (with
    # mujoco 4.0.1; under 1e-6 on 2026-12-05's first install), where a last-bit
    # difference flips a ReLU or meets Adam's first, sign-sized steps (about
    # the learning rate, 1e-3). Another member's rate moves them by 1.3e-2,
    # its seed by 1.
    _assert_members_match(result, [0, 3], atol=2e-4)


def test_apex_sweep_is_one_program_and_reports_each_setting():
    config = _config("cartpole", "apex", 12, devices=1, apex={"min_replay": 256})
    grid = {"learning_rate": [1e-4, 5e-4]}
    result = sweep(config, grid=grid, seeds=2)
    assert result.programs_compiled == 1
    rows = result.summary()
    assert [row["apex.learning_rate"] for row in rows] == [1e-4, 5e-4]
    assert all(np.isfinite(row["mean_return"]) and row["seeds"] == 2 for row in rows)


def test_impala_with_replay_sweeps_and_matches_alone():
    # A small network (one layer of 32): three cheaper compiles, the same check.
    config = _config(
        "cartpole", "impala", 6, devices=1, network=SMALL_NET,
        impala={"replay_ratio": 0.5},
    )  # fmt: skip
    result = sweep(config, grid={"learning_rate": [8e-3, 3e-3]}, seeds=[1])
    assert result.programs_compiled == 1
    for i in range(2):
        alone = pjd.train(pjd.apply_overrides(result.plan.run_config(i), {}))
        assert _max_difference(result.params(i), alone.state.agent.params) <= 1e-5
