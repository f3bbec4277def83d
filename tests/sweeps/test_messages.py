"""What a sweep says: its plan, layout, progress and divergences, by hand."""

import math

import purejaxdrl as pjd
from purejaxdrl.sweeps.layout import Layout
from purejaxdrl.sweeps.messages import (
    diverged_line,
    gib,
    layout_lines,
    plan_lines,
    progress_line,
)
from purejaxdrl.sweeps.spec import make_plan

BASE = pjd.load_preset("cartpole").config  # PPO on CartPole-v1


def test_plan_lines_name_the_static_fields_of_several_programs():
    plan = make_plan(
        BASE, grid={"num_epochs": [1, 2], "learning_rate": [1e-3]}, seeds=2
    )
    assert plan_lines(plan, num_programs=2) == [
        "sweep: 2 setting(s) x 2 seed(s) = 4 runs of ppo on CartPole-v1",
        "sweep: ppo.num_epochs changes shapes or loop counts, so the runs form "
        "2 compiled programs, trained one after another",
    ]
    assert len(plan_lines(plan, num_programs=1)) == 1


def test_plan_lines_say_when_settings_train_different_env_steps():
    # 1,024 steps: num_envs 4 x unroll 128 = 512 a update, 2 updates (1,024);
    # num_envs 6: 768 a update, 1 update (768). lcm(512, 768) = 1,536.
    base = pjd.apply_overrides(BASE, {"total_steps": 1024})
    lines = plan_lines(make_plan(base, grid={"num_envs": [4, 6]}, seeds=1), 2)
    assert lines[2] == (
        "sweep: the settings train 768 to 1,024 env steps (total_steps rounds "
        "down to whole updates of num_envs x unroll_length), so the summary "
        "compares runs of different lengths; --total-steps 1536 "
        "(total_steps=1536 in Python), a multiple of every setting's steps per "
        "update, trains them alike"
    )
    # At 1,536 both train 1,536; a swept total_steps differs on purpose.
    alike = pjd.apply_overrides(BASE, {"total_steps": 1536})
    assert len(plan_lines(make_plan(alike, grid={"num_envs": [4, 6]}), 2)) == 2
    grid = {"total_steps": [1024, 2048]}
    assert len(plan_lines(make_plan(base, grid=grid), 2)) == 2


def test_layout_lines_say_the_batches_when_runs_do_not_fit():
    # 10 runs of 3 MiB on 2 devices: 15 MiB per device; 1.5 GiB available.
    layout = Layout(2, 1, 4, 3, 3 * 2**20, 3 * 2**29)
    assert layout_lines("program 1 of 2: ", 10, layout, "host memory", "cpu") == [
        "sweep: program 1 of 2: 10 runs on 2 x 1 (sweep x data) cpu device(s), "
        "2 per device",
        "sweep: 10 runs need ~15.0 MiB per device (3.0 MiB each), more than the "
        "1.50 GiB of host memory a sweep may use; training them in 3 batches of "
        "4, one after another",
    ]
    one = Layout(1, 8, 1, 1, 100, 10**9)
    assert layout_lines("", 1, one, "device memory", "gpu") == [
        "sweep: 1 run on 1 x 8 (sweep x data) gpu device(s), 1 per device"
    ]


def test_a_run_larger_than_the_budget_is_said_and_trained_one_at_a_time():
    # 4 runs of 0.2 MiB on one device, a budget of 1 KiB (--device-memory 1KB).
    layout = Layout(1, 1, 1, 4, 2 * 2**20 // 10, 2**10)
    assert layout_lines("", 4, layout, "device_memory", "cpu")[1] == (
        "sweep: one run needs ~0.2 MiB per device, more than the 1 KiB of "
        "device_memory a sweep may use; training one run per device at a time "
        "anyway (no batch is smaller), in 4 batches of 1, one after another"
    )
    # One run on its own: no batches to count, the budget still said.
    one = Layout(1, 1, 1, 1, 2 * 2**20 // 10, 2**10)
    assert layout_lines("", 1, one, "device_memory", "cpu")[1].endswith(
        "training one run per device at a time anyway (no batch is smaller)"
    )


def test_progress_line_leaves_out_runs_without_episodes():
    line = progress_line([10.0, math.nan, 30.0], 1200, 5000, 12345.6)
    assert line == (
        "sweep: update 1,200 of 5,000: mean return over runs 20.0 (best 30.0), "
        "12,346 steps/s"
    )
    assert "no episode ended yet, 0 steps/s" in progress_line([math.nan], 1, 2, 0.0)


def test_progress_line_leaves_out_and_counts_diverged_runs():
    # Run 1 diverged: its NaN parameters still end episodes (9.0), which the
    # summary does not count, so neither does the mean (20.0 = (10 + 30) / 2).
    line = progress_line([10.0, 9.0, 30.0], 1200, 5000, 1.0, [False, True, False])
    assert line == (
        "sweep: update 1,200 of 5,000: mean return over runs 20.0 (best 30.0) "
        "(1 diverged), 1 steps/s"
    )
    gone = progress_line([9.0, math.nan], 1, 2, 0.0, [True, True])
    assert gone == "sweep: update 1 of 2: all 2 runs diverged, 0 steps/s"


def test_diverged_line_names_the_setting_and_seed():
    plan = make_plan(BASE, grid={"learning_rate": [1e-3, 2e-3]}, seeds=[0, 7])
    assert diverged_line(plan, 3, 1500) == (
        "sweep: run 3 (ppo.learning_rate=0.002, seed 7) diverged at update 1,500"
    )
    assert diverged_line(make_plan(BASE), 0, 2) == (
        "sweep: run 0 (seed 0) diverged at update 2"
    )


def test_gib():
    assert gib(2**30) == "1.00 GiB"
    assert gib(1.5 * 2**20) == "1.5 MiB"
    assert gib(0.2 * 2**20) == "0.2 MiB"
    # A budget of 1KB reads as itself, not "0.0 MiB".
    assert gib(2**10) == "1 KiB"
    assert gib(1.5 * 2**10) == "1.5 KiB"
    assert gib(100) == "100 bytes"
    assert gib(1) == "1 byte"  # rd21 #11: was "1 bytes"


def test_a_resumed_sweeps_summary_says_whose_time_each_figure_is():
    from types import SimpleNamespace

    from purejaxdrl.cli.population import figure_lines

    # Resumed: 29 s of training in both sessions, 24.2 s of wall time in this
    # one. steps/s is the steps over the training time shown beside it.
    result = SimpleNamespace(
        env_steps=4_096_000, compile_seconds=1.5, train_seconds=29.25, run_dir=None
    )
    assert figure_lines(result, 24.2, "sweep", "runs") == [
        "  env steps          4,096,000 (all runs, every session)",
        "  wall time          24.2 s (this command)",
        "  compile time       1.5 s",
        "  training time      29.2 s (every session, compile excluded)",
        "  steps/s            140,034 (env steps / training time, all runs together)",
    ]


def test_no_budget_line_when_total_steps_is_swept_with_another_field():
    # total_steps swept on purpose: different lengths are meant, even when
    # num_envs is swept beside it.
    base = pjd.apply_overrides(BASE, {"total_steps": 1024})
    plan = make_plan(base, grid={"total_steps": [1024, 2048], "num_envs": [4, 6]})
    assert not any("env steps" in line for line in plan_lines(plan, 2))
