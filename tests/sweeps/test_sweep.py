"""Sweeps: every run equals the run trained alone; compile counts; layout; files."""

import csv
import dataclasses
import math
import re

import flax.serialization
import jax
import matplotlib.image
import numpy as np
import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl.observe.numbers import return_text
from purejaxdrl.observe.plots import short_value
from purejaxdrl.sweeps import layout as sweep_layout
from purejaxdrl.sweeps.best_policy import export_run
from purejaxdrl.sweeps.fields import resolve_field
from purejaxdrl.sweeps.program import sweep
from purejaxdrl.sweeps.report import load_sweep, write_sweep
from purejaxdrl.sweeps.result import SweepResult
from purejaxdrl.sweeps.spec import make_plan
from tests.helpers import guide_snippet

# Adam over many minibatch steps amplifies float rounding (vmapped and unbatched
# kernels sum in different orders) by ~10x per update; 4 PPO updates stay well
# inside 1e-5, IMPALA and A2C (one step per update) far longer.
UPDATES = {"ppo": 4, "impala": 12, "a2c": 12}


def _base(algo: str = "ppo", updates: int | None = None, **overrides):
    config = pjd.load_preset("cartpole", algo).config
    n = updates or UPDATES[algo]
    return pjd.apply_overrides(
        config,
        {"total_steps": config.steps_per_update * n, "num_logs": 2, **overrides},
    )


def _assert_trees_close(actual, expected, atol: float) -> None:
    """Same structure (jax.tree.map checks it) and leaves within `atol`."""
    jax.tree.map(
        lambda a, e: np.testing.assert_allclose(
            np.asarray(a), np.asarray(e), atol=atol, rtol=0
        ),
        actual,
        expected,
    )


def _alone(result: SweepResult, index: int):
    config = pjd.apply_overrides(result.plan.run_config(index), {"devices": 1})
    return pjd.train(config)


def _one_per_setting(result: SweepResult) -> list[int]:
    """One run of each setting, the seeds taken in turn: every swept value and
    every seed is checked against its run alone at a fraction of the trainings
    (each alone is a compile of its own: its values are constants there)."""
    seeds = len(result.plan.seeds)
    return [s * seeds + s % seeds for s in range(len(result.plan.settings))]


def _assert_matches_alone(result: SweepResult, runs) -> None:
    for i in runs:
        alone = _alone(result, i)
        _assert_trees_close(result.params(i), alone.state.agent.params, atol=1e-5)
        returns = [r.get("episode/mean_return") for r in alone.history]
        mine = [r.get("episode/mean_return") for r in result.histories[i]]
        np.testing.assert_allclose(mine, returns, rtol=1e-5)
        assert result.final_return[i] == pytest.approx(alone.mean_return, rel=1e-5)


@pytest.mark.parametrize(
    ("algo", "grid"),
    [
        ("ppo", {"learning_rate": [1e-3, 2.5e-4], "clip_eps": [0.1, 0.2]}),
        # Two settings each (every setting trained alone is a compile of its
        # own); in the slow suite: the sweep program is the same for every
        # algorithm, and PPO's row keeps it in the fast one.
        pytest.param(
            "impala",
            {"learning_rate": [8e-3], "clip_rho": [1.0, 0.5]},
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "a2c",
            {"entropy_cost": [0.01], "gae_lambda": [0.9, 1.0]},
            marks=pytest.mark.slow,
        ),
    ],
)
def test_every_run_equals_the_run_trained_alone(algo, grid):
    result = sweep(_base(algo, devices=1), grid=grid, seeds=[0, 3])
    assert result.plan.num_runs == 2 * len(result.plan.settings)
    assert result.programs_compiled == 1
    _assert_matches_alone(result, _one_per_setting(result))


def test_policy_lag_sweep_matches_alone():
    base = _base("impala", impala={"policy_lag": 3}, devices=1)
    result = sweep(base, grid={"entropy_cost": [0.0, 0.01]}, seeds=2)
    _assert_matches_alone(result, _one_per_setting(result))


def test_16_runs_on_8_devices_go_2_per_device_and_match():
    # 2 settings x 8 seeds: each device vmaps two seeds of one setting.
    result = sweep(_base(), grid={"learning_rate": [1e-3, 2.5e-4]}, seeds=8)
    (layout,) = result.layouts
    assert (layout.sweep, layout.data, layout.runs_per_device) == (8, 1, 2)
    assert layout.num_batches == 1
    # The first and last seed of each setting.
    _assert_matches_alone(result, [0, 7, 8, 15])


def test_fewer_runs_than_devices_are_data_parallel_and_match():
    result = sweep(_base(num_envs=8), grid={"learning_rate": [1e-3, 2.5e-4]})
    (layout,) = result.layouts
    assert (layout.sweep, layout.data) == (2, 4)
    _assert_matches_alone(result, range(2))


def _count_compiles(fn, *args, **kwargs):
    names = []

    def listen(event, duration, **meta):
        if event == "/jax/core/compile/backend_compile_duration":
            names.append(meta.get("fun_name", ""))

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        out = fn(*args, **kwargs)
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    return out, sum("sweep_chunk" in n for n in names)


def test_dynamic_fields_compile_once_static_fields_once_per_value():
    base = _base(devices=1)
    dynamic = {"learning_rate": [1e-3, 3e-4], "entropy_cost": [0.0, 0.01, 0.02]}
    result, compiles = _count_compiles(sweep, base, grid=dynamic, seeds=2)
    assert compiles == 1 and result.programs_compiled == 1
    assert len(result.layouts) == 1

    lines = []
    # num_envs is static. The runs checked alone, (4 envs, 1e-3) and (8 envs,
    # 2.5e-4), are runs the tests above train alone: their programs are in
    # the session's cache when those ran first.
    static = {"num_envs": [4, 8], "learning_rate": [1e-3, 2.5e-4]}
    result, compiles = _count_compiles(sweep, base, grid=static, notify=lines.append)
    assert compiles == 2 and result.programs_compiled == 2
    assert any("2 compiled programs, trained one after another" in x for x in lines)
    _assert_matches_alone(result, [0, 3])


def test_sweep_that_does_not_fit_runs_in_batches_with_the_same_results():
    base = _base(devices=2)
    grid = {"learning_rate": [1e-3, 3e-4, 1e-4]}
    whole = sweep(base, grid=grid, seeds=2)
    per_run = whole.layouts[0].run_bytes
    lines = []
    batched, compiles = _count_compiles(
        sweep,
        base,
        grid=grid,
        seeds=2,
        device_memory=per_run + 1,  # one run per device at a time
        notify=lines.append,
    )
    (layout,) = batched.layouts
    assert (layout.batch_size, layout.num_batches) == (2, 3)
    assert compiles == 1
    assert any("in 3 batches of 2, one after another" in x for x in lines)
    for i in range(6):
        _assert_trees_close(batched.params(i), whole.params(i), atol=1e-6)


def test_files_summary_curves_and_params_by_index_or_setting(tmp_path):
    base = _base(updates=6, run_dir=str(tmp_path), num_logs=3, devices=1)
    result = sweep(
        base,
        grid={"learning_rate": [1e-3, 2.5e-4]},
        seeds=[0, 1, 2],
        target_return=30.0,
        write_files=True,
    )
    d = result.run_dir
    assert d.parent == tmp_path
    assert sorted(p.name for p in (d / "runs").iterdir())[-1] == "run-0005.jsonl"
    assert len((d / "runs" / "run-0004.jsonl").read_text().splitlines()) == 3
    image = matplotlib.image.imread(d / "curves.png")
    assert image.ndim == 3 and image.shape[0] > 100
    assert len((d / "summary.csv").read_text().splitlines()) == 3  # header + 2
    assert "ppo.learning_rate" in (d / "summary.md").read_text()

    rows = result.summary()
    final = result.final_return
    assert rows[1]["mean_return"] == pytest.approx(np.mean(final[3:6]))
    assert rows[1]["std_return"] == pytest.approx(np.std(final[3:6], ddof=1))
    assert result.best["mean_return"] == max(r["mean_return"] for r in rows)

    loaded = load_sweep(d)
    index = loaded.run_index(learning_rate=2.5e-4, seed=1)
    assert index == 4 == result.run_index(seed=1, **{"ppo.learning_rate": 2.5e-4})
    # The float32 the run trained with names it too.
    assert result.run_index(learning_rate=np.float32(2.5e-4), seed=1) == 4
    _assert_trees_close(loaded.params(index), result.params(4), atol=0)
    np.testing.assert_allclose(loaded.final_return, final)
    assert loaded.table() == result.table()
    # A notebook cell shows the outcome, not every run's history and arrays.
    lr = result.best["ppo.learning_rate"]
    assert repr(loaded) == (
        "SweepResult(ppo on CartPole-v1, 2 settings x 3 seeds, 18,432 env steps "
        f"in all; best: ppo.learning_rate={short_value(lr)}, return "
        f"{return_text(result.best['mean_return'])}, run_dir={str(d)!r})"
    )
    # A run named twice, or out of range, is refused, not guessed.
    with pytest.raises(TypeError, match="by its index or by its seed and setting"):
        loaded.params(0, seed=1)
    for bad in (6, -1, True):
        with pytest.raises(IndexError, match="the runs are 0 to 5; pass one"):
            loaded.params(bad)
    with pytest.raises(IndexError, match="run=6: the runs are 0 to 5"):
        export_run(result, 6, tmp_path / "p")
    with pytest.raises(KeyError, match="3 runs match"):
        loaded.run_index(learning_rate=1e-3)
    with pytest.raises(KeyError, match="2 runs match seed=1; name"):
        loaded.run_index(seed=1)


def test_normalised_runs_keep_their_statistics_and_the_best_is_a_policy(
    tmp_path, capsys
):
    # With observations normalised, a run's parameters act only beside its
    # statistics: each run saves its own, and the best run's policy folder
    # holds both, so that it acts as the run did.
    base = _base(
        updates=4, run_dir=str(tmp_path), devices=1,
        env={"normalize_observations": True},
    )  # fmt: skip
    result = sweep(base, seeds=[0, 1], write_files=True)
    d = result.run_dir
    # Without `notify`, it prints its lines to stderr, where pjd.train draws
    # its progress and `purejaxdrl sweep` prints them: stdout stays clean.
    out, err = capsys.readouterr()
    assert out == ""
    assert "sweep: 1 setting(s) x 2 seed(s) = 2 runs of ppo on CartPole-v1" in err
    assert "sweep: update 4 of 4: mean return over runs" in err
    setting, seed = result.plan.run(result.best_run)
    assert (
        f"sweep: the best setting's best run's policy (run {result.best_run}: "
        f"setting {setting}, seed {seed}, final return "
        f"{return_text(result.final_return[result.best_run])}) in {d / 'policy'}" in err
    )
    # No command line trains it alone (no shipped preset normalises
    # cartpole's observations): only Python, which sweep.yaml gives.
    assert yaml.safe_load((d / "sweep.yaml").read_text())["best_run"]["command"] is None
    assert "train it alone" not in err
    # best_run: an index (best is the setting's summary row), that of the best
    # setting's run with the highest final return, as pjd.sweeps.best_run's.
    assert isinstance(result.best, dict) and result.best["setting"] == 0
    assert result.best_run == int(np.nanargmax(result.final_return[:2]))
    assert result.best_run == pjd.sweeps.best_run(result)
    counts = [float(result.stats(i).count) for i in range(2)]
    # Every observation acted on updated them: 4 updates of 4 envs x 128
    # steps (the 1e-4 they start at is below float32's step at 2048).
    assert counts == [4 * 4 * 128] * 2
    assert not np.allclose(result.stats(0).mean, result.stats(1).mean)
    best = pjd.sweeps.best_run(result)
    assert best == int(np.nanargmax(result.final_return))
    # As the guide loads it (sw21 #3: `dir + "/policy"` raised TypeError).
    policy = guide_snippet("sweeps.md", "pjd.load_policy", result=result)
    assert policy.spec["normalize_observations"] is True
    _assert_trees_close(policy.params, result.params(best), atol=0)
    loaded = load_sweep(d)
    for i in range(2):
        _assert_trees_close(loaded.stats(i), result.stats(i), atol=0)
    other = pjd.sweeps.export_run(loaded, 1 - best, tmp_path / "other")
    with pytest.raises(pjd.ConfigError, match="already holds an exported policy"):
        pjd.sweeps.export_run(loaded, best, d / "policy")  # the sweep's own
    pjd.sweeps.export_run(loaded, best, d / "policy", overwrite=True)
    for folder, run in ((d / "policy", best), (other, 1 - best)):
        blob = flax.serialization.msgpack_restore(
            (folder / "params.msgpack").read_bytes()
        )
        np.testing.assert_array_equal(blob["obs_stats"]["m2"], result.stats(run).m2)


def _history(*returns):
    return [
        {"env_steps": 100 * (k + 1), "episode/mean_return": r}
        for k, r in enumerate(returns)
    ]


def test_summary_figures_by_hand():
    plan = make_plan(
        _base(devices=1), grid={"learning_rate": [1e-3, 2e-3]}, seeds=[0, 1]
    )
    result = SweepResult(
        plan=plan,
        histories=[
            _history(10, 50, 40),  # crosses 45 at 200 steps; final 40: not reached
            _history(10, 20, 60),  # crosses at 300; final 60: reached
            _history(5, math.nan, 30),  # never; final 30
            _history(1, 2, 3),  # diverged: final NaN
        ],
        diverged=[None, None, None, 2],
        final_params=[None] * 4,
        target_return=45.0,
    )
    np.testing.assert_array_equal(result.final_return, [40, 60, 30, np.nan])
    # "Reached" is the final return, as `purejaxdrl train` judges a target; the
    # first crossing during training is its own figure.
    np.testing.assert_array_equal(result.reached_target, [False, True, False, False])
    np.testing.assert_array_equal(
        result.first_crossing_steps, [200, 300, np.nan, np.nan]
    )
    first, second = result.summary()
    # The sample std of 40 and 60 (ddof=1, as papers report), not ddof=0's 10.
    assert first["mean_return"] == 50.0
    assert first["std_return"] == pytest.approx(10 * math.sqrt(2))
    assert first["reached_target"] == 1
    assert first["median_first_crossing_steps"] == 250.0
    assert (second["mean_return"], second["diverged"]) == (30.0, 1)
    assert math.isnan(second["std_return"])  # one seed left: no spread
    assert second["reached_target"] == 0
    assert math.isnan(second["median_first_crossing_steps"])
    assert result.best["setting"] == 0
    table = result.table()
    assert "| reached target | first crossing (median steps) |" in table
    assert "| 1/2 | 250 |" in table
    assert "| 30.0 ± — (1 of 2 diverged) | 0/2 | — |" in table
    # A setting with a diverged seed is not the best on its survivors' mean.
    lucky = dataclasses.replace(
        result, histories=[*result.histories[:2], _history(5, 9, 90), _history(1)]
    )
    assert lucky.summary()[1]["mean_return"] == 90.0
    assert lucky.best["setting"] == 0
    assert lucky.table().index("| 0 |") < lucky.table().index("| 1 |")
    untargeted = dataclasses.replace(result, target_return=None)
    # Not judged, in the attribute as in the summary and the table (it was
    # all False: `reached_target.sum()` read "0 reached" in a sweep with no
    # target).
    assert untargeted.reached_target is None
    assert untargeted.summary()[0]["reached_target"] is None
    assert "| — |" in untargeted.table()
    # In a notebook a bare `result.table()` renders as a table, not as the
    # str's escaped one-line repr (nb21 #7); IPython's terminal prints it.
    assert table._repr_markdown_() == table
    from IPython.lib.pretty import pretty

    assert pretty(table) == table


def test_runs_csv_says_which_runs_reached_the_target(tmp_path):
    plan = make_plan(_base(devices=1, run_dir=str(tmp_path)), seeds=[0, 1])
    result = SweepResult(
        plan=plan,
        histories=[_history(10, 50, 40), _history(10, 20, 60)],
        diverged=[None, None],
        final_params=[{"w": np.zeros(2)}] * 2,
        target_return=45.0,
    )
    # The first run's environment logged a metric; its last value is kept
    # where a later chunk ended no episode (null).
    result.histories[0][1]["env/success"] = 0.25
    result.histories[0][2]["env/success"] = None
    path = write_sweep(result)
    with (path / "runs.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["env/success"] for r in rows] == ["0.25", ""]
    assert [r["reached_target"] for r in rows] == ["false", "true"]
    assert [r["first_crossing_steps"] for r in rows] == ["200", "300"]
    with (path / "summary.csv").open() as f:
        (row,) = csv.DictReader(f)
    assert (row["reached_target"], row["median_first_crossing_steps"]) == ("1", "250")


def test_the_csv_tables_write_values_alike_in_full(tmp_path):
    # Both tables: full-precision values (not a legend's 1.235e-04), true/false.
    grid = {"learning_rate": [0.000123456789], "anneal_lr": [False]}
    plan = make_plan(_base(devices=1, run_dir=str(tmp_path)), grid=grid, seeds=[0])
    result = SweepResult(
        plan=plan, histories=[_history(10)], diverged=[None],
        final_params=[{"w": np.zeros(2)}], target_return=None,
    )  # fmt: skip
    path = write_sweep(result)
    for table in ("runs.csv", "summary.csv"):
        with (path / table).open() as f:
            (row,) = csv.DictReader(f)
        assert row["ppo.learning_rate"] == "0.000123456789", table
        assert row["ppo.anneal_lr"] == "false", table


def test_random_search_draws_in_range_reproducibly():
    base = _base(devices=1)
    spec = {"learning_rate": ("loguniform", 1e-5, 1e-3), "gamma": ("uniform", 0.9, 1)}
    plan = make_plan(base, sample=spec, num_samples=6, seeds=2, search_seed=7)
    again = make_plan(base, sample=spec, num_samples=6, seeds=2, search_seed=7)
    other = make_plan(base, sample=spec, num_samples=6, seeds=2, search_seed=8)
    assert plan.settings == again.settings != other.settings
    assert plan.num_runs == 12
    lrs = [s["ppo.learning_rate"] for s in plan.settings]
    assert all(1e-5 <= x <= 1e-3 for x in lrs)
    assert all(0.9 <= s["ppo.gamma"] <= 1 for s in plan.settings)
    # Grid x draws: every grid value is paired with the same draws.
    both = make_plan(base, grid={"clip_eps": [0.1, 0.2]}, sample=spec, num_samples=3)
    assert len(both.settings) == 6
    assert both.configs[4].ppo.clip_eps == 0.2
    assert (
        both.settings[1]["ppo.learning_rate"] == both.settings[4]["ppo.learning_rate"]
    )


def test_field_resolution_and_static_grouping():
    base = _base()
    assert resolve_field(base, "learning_rate").dynamic
    assert resolve_field(base, "ppo.entropy-cost").path == "ppo.entropy_cost"
    assert not resolve_field(base, "num_epochs").dynamic  # ppo.num_epochs: static
    assert not resolve_field(base, "network.hidden_sizes").dynamic
    assert not resolve_field(base, "num_envs").dynamic
    plan = make_plan(
        base,
        grid={"network.hidden_sizes": [[32], [64, 64]], "learning_rate": [1e-3, 1e-4]},
    )
    assert plan.static_groups() == [[0, 1], [2, 3]]
    assert plan.configs[2].network.hidden_sizes == (64, 64)


def test_mesh_shape_and_batches_by_hand():
    assert sweep_layout.mesh_shape(16, 8, num_envs=4) == (8, 1)
    assert sweep_layout.mesh_shape(3, 8, num_envs=4) == (2, 4)
    assert sweep_layout.mesh_shape(1, 8, num_envs=6) == (1, 6)
    assert sweep_layout.mesh_shape(1, 8, num_envs=8, env_multiple=4) == (1, 2)
    # 10 runs on 4 devices: 3 per device; memory for 2 -> 2 batches of 2 x 4.
    assert sweep_layout.batches(10, 4, per_run=100, available=250) == (8, 2)
    assert sweep_layout.batches(10, 4, per_run=100, available=10**6) == (12, 1)
    assert sweep_layout.batches(5, 1, per_run=100, available=50) == (1, 5)


def test_command_line_sweep_prints_the_table_and_the_best(tmp_path, capsys):
    from purejaxdrl import cli

    # The sweep of test_files_summary_curves_and_params_by_index_or_setting
    # (2 rates x 3 seeds, 6 updates in 3 chunks): its compiled program is in
    # the session's cache when that test ran first.
    status = cli.main(
        ["sweep", "--env", "cartpole", "--seeds", "3", "--no-compile-cache",
         "--grid", "learning_rate=1e-3,2.5e-4", "--total-steps", str(512 * 6),
         "--num-logs", "3", "--devices", "1", "--run-dir", str(tmp_path)]
    )  # fmt: skip
    out = capsys.readouterr()
    assert status == 0, out.err
    assert "| setting | ppo.learning_rate |" in out.out
    assert "best setting:" in out.out
    # 3,072 steps are not the preset's 500,000: its target judges no run.
    assert (
        "the preset's target (475) is its return within its 500,000 steps, "
        "and these runs train 3,072: not judged (--target sets one)" in out.err
    )
    assert "/3 |" not in out.out  # no "reached target" column (of 3 seeds)
    assert "6 runs on 1 x 1 (sweep x data)" in out.err
    (folder,) = tmp_path.iterdir()
    assert (folder / "curves.png").is_file()
    assert str(folder) in out.out


def test_a_sweep_judges_no_evaluation_target_by_training_returns(capsys):
    # cartpole's pqn target is its greedy evaluation's; sweep runs report the
    # epsilon-greedy training return, which would miss it by exploring.
    from purejaxdrl import cli

    status = cli.main(
        ["sweep", "--env", "cartpole", "--algo", "pqn", "--seeds", "1",
         "--num-envs", "8", "--unroll-length", "8", "--pqn.num-minibatches", "2",
         "--total-steps", "512", "--num-logs", "1", "--devices", "1",
         "--no-files", "--no-compile-cache"]
    )  # fmt: skip
    out = capsys.readouterr()
    assert status == 0, out.err
    assert "cartpole's pqn target (475) is its greedy evaluation's" in out.err
    assert "| 0/1 |" not in out.out and "| — |" in out.out


def test_a_sweep_on_another_environment_judges_not_by_the_presets_target(capsys):
    from purejaxdrl import cli

    status = cli.main(
        ["sweep", "--env", "cartpole", "--env.id", "Acrobot-v1", "--seeds", "1",
         "--total-steps", "512", "--num-logs", "1", "--devices", "1",
         "--no-files", "--no-compile-cache"]
    )  # fmt: skip
    out = capsys.readouterr()
    assert status == 0, out.err
    assert "the preset's target (475) is CartPole-v1's, not Acrobot-v1's" in out.err
    assert "| 0/1 |" not in out.out


def test_one_run_over_two_devices_checkpoints_and_matches_alone(tmp_path):
    # One run per program (a static grid's value, or --seeds 1) spreads over
    # the devices as data: JAX writes its states' P('sweep', 'data') as
    # P(None, 'data'), and the checkpoint's packing must keep the runs' axis.
    base = _base(updates=4, run_dir=str(tmp_path), devices=2, num_logs=2)
    result = sweep(base, seeds=1, write_files=True)
    assert (result.layouts[0].sweep, result.layouts[0].data) == (1, 2)
    _assert_trees_close(result.params(0), _alone(result, 0).state.agent.params, 1e-5)


def test_an_unfinished_sweep_or_pbt_directory_says_how_to_finish_it(tmp_path):
    # Stopped (or still training): its records are in its checkpoints, and
    # reading it was a FileNotFoundError traceback.
    from purejaxdrl.observe.plots import load_curves

    sweep_dir, pbt_dir = tmp_path / "sweep_x", tmp_path / "pbt_x"
    sweep_dir.mkdir()
    pbt_dir.mkdir()
    (sweep_dir / "sweep.yaml").write_text("status: running\n")
    (pbt_dir / "pbt.yaml").write_text("status: running\n")
    finish = re.escape("has not finished (stopped, or still training)")
    with pytest.raises(pjd.ConfigError, match=rf"{finish}.*sweep --resume"):
        load_sweep(sweep_dir)
    with pytest.raises(pjd.ConfigError, match=rf"{finish}.*sweep --resume"):
        load_curves([sweep_dir])
    with pytest.raises(pjd.ConfigError, match=rf"{finish}.*pbt --resume"):
        pjd.load_pbt(pbt_dir)
    with pytest.raises(pjd.ConfigError, match="has no sweep.yaml"):
        load_sweep(pbt_dir)
    with pytest.raises(pjd.ConfigError, match="has no pbt.yaml"):
        pjd.load_pbt(sweep_dir)


def test_an_empty_list_setting_reads_as_runs_csv_writes_it(tmp_path):
    # sw21 #4: `env.hide_observations=[]` showed as nothing in the table, the
    # best line and the repr (a blank cell), where runs.csv writes `()`.
    assert short_value(()) == short_value([]) == "()"
    assert short_value((1, 3)) == "1x3"
    grid = {"env.hide_observations": [[], [1, 3]]}
    plan = make_plan(_base(devices=1, run_dir=str(tmp_path)), grid=grid, seeds=[0])
    result = SweepResult(
        plan=plan, histories=[_history(10), _history(5)], diverged=[None, None],
        final_params=[{"w": np.zeros(2)}] * 2, target_return=None,
    )  # fmt: skip
    assert "| 0 | () | 10" in result.table()
    assert "best: env.hide_observations=(), return 10" in repr(result)
    with (write_sweep(result) / "runs.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["env.hide_observations"] for r in rows] == ["()", "1x3"]
