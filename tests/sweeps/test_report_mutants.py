"""Gaps a mutation run found in the sweep and PBT reports (mutants6_M6B).

Hand-made results written and read back, without training: each field the
directory records comes back as it was given, and the tables hold the values
worked out by hand.
"""

import csv
import dataclasses
import math

import flax.serialization
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.observe.plots import RETURN
from purejaxdrl.sweeps import report
from purejaxdrl.sweeps.pbt.files import write_pbt
from purejaxdrl.sweeps.pbt.lineage import (
    PBTResult,
    ReadyStep,
    lineage_rows,
    load_pbt,
    read_lineage,
)
from purejaxdrl.sweeps.pbt.operators import ExploredField, PBTConfig
from purejaxdrl.sweeps.report import load_sweep, write_sweep
from purejaxdrl.sweeps.result import SweepResult
from purejaxdrl.sweeps.spec import make_plan

pytestmark = pytest.mark.timeout(120)


def _base(tmp_path, **overrides):
    config = pjd.load_preset("cartpole").config  # PPO, 512 steps per update
    return pjd.apply_overrides(
        config, {"devices": 1, "run_dir": str(tmp_path), **overrides}
    )


def _history(*returns):
    return [
        {"updates": k + 1, "env_steps": 100 * (k + 1), RETURN: r}
        for k, r in enumerate(returns)
    ]


def _sweep(tmp_path, target_return=None):
    """2 settings x seeds [5, 2]: runs (0, 5), (0, 2), (1, 5), (1, 2)."""
    plan = make_plan(
        _base(tmp_path), grid={"learning_rate": [1e-3, 2e-3]}, seeds=[5, 2]
    )
    return SweepResult(
        plan=plan,
        histories=[_history(10, r) for r in (11.0, 12.0, 13.0, 14.0)],
        diverged=[None, 2, None, None],
        final_params=[{"w": np.full(2, i, np.float32)} for i in range(4)],
        target_return=target_return,
        compile_seconds=1.5,
        train_seconds=2.5,
        programs_compiled=3,
    )


def test_a_sweep_directory_reads_back_what_it_recorded(tmp_path):
    result = _sweep(tmp_path, target_return=12.5)
    loaded = load_sweep(write_sweep(result))
    assert loaded.plan.seeds == (5, 2)
    assert loaded.plan.settings == result.plan.settings
    assert loaded.diverged == [None, 2, None, None]
    assert loaded.target_return == 12.5
    assert (loaded.compile_seconds, loaded.train_seconds) == (1.5, 2.5)
    assert loaded.programs_compiled == 3
    # Run i's records are run i's (its last return is 11 + i).
    assert [h[-1][RETURN] for h in loaded.histories] == [11.0, 12.0, 13.0, 14.0]
    np.testing.assert_array_equal(loaded.params(3)["w"], [3.0, 3.0])


def _policy_params(path):
    blob = flax.serialization.msgpack_restore((path / "params.msgpack").read_bytes())
    return blob["params"]["w"]


def test_write_sweep_writes_the_best_runs_policy_as_sweep_does(tmp_path):
    # `sweep(..., write_files=True)` writes its directory with `write_sweep`:
    # setting 1 (runs 2 and 3, final 13 and 14) beats setting 0 (11; run 1
    # diverged), and run 3 is its best: its parameters are the policy's.
    path = write_sweep(_sweep(tmp_path))
    np.testing.assert_array_equal(_policy_params(path / "policy"), [3.0, 3.0])
    assert (path / "curves.png").is_file() and not (path / "checkpoints").exists()
    # Every run diverged: no final return, so no policy, and a finished sweep.
    none = dataclasses.replace(_sweep(tmp_path / "none"), diverged=[1, 1, 1, 1])
    path = write_sweep(none)
    assert not (path / "policy").exists()
    assert load_sweep(path).diverged == [1, 1, 1, 1]


def test_runs_csv_by_hand_without_a_target(tmp_path):
    path = write_sweep(_sweep(tmp_path))
    with (path / "runs.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["run"], r["setting"], r["seed"]) for r in rows] == [
        ("0", "0", "5"),
        ("1", "0", "2"),
        ("2", "1", "5"),
        ("3", "1", "2"),
    ]
    # Diverged at update 2: no final return, and where it diverged.
    assert [r["final_return"] for r in rows] == ["11", "", "13", "14"]
    assert [r["diverged_at"] for r in rows] == ["", "2", "", ""]
    # No target: not judged (empty), not "false".
    assert [r["reached_target"] for r in rows] == [""] * 4


def test_a_tuple_setting_is_written_whole_and_read_back_a_tuple(tmp_path):
    # () hides no observation: a value, not a gap; (1, 3) hides the velocities.
    grid = {"env.hide_observations": [(), (1, 3)]}
    plan = make_plan(_base(tmp_path), grid=grid, seeds=[0])
    result = SweepResult(
        plan=plan,
        histories=[_history(1.0), _history(2.0)],
        diverged=[None, None],
        final_params=[{"w": np.zeros(2, np.float32)}] * 2,
    )
    path = write_sweep(result)
    with (path / "runs.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["env.hide_observations"] for r in rows] == ["()", "1x3"]
    loaded = load_sweep(path)  # YAML holds them as lists
    assert [s["env.hide_observations"] for s in loaded.plan.settings] == [(), (1, 3)]


def test_the_curves_are_each_settings_seeds(tmp_path, monkeypatch):
    drawn = []
    monkeypatch.setattr(
        report, "plot_curves", lambda curves, out, **kwargs: drawn.extend(curves)
    )
    result = _sweep(tmp_path)
    report.plot_sweep(result, tmp_path / "curves.png")
    # Runs go setting-major: setting 1's seeds are runs 2 and 3.
    assert [c.histories for c in drawn] == [
        tuple(result.histories[0:2]),
        tuple(result.histories[2:4]),
    ]
    # Each legend counts its seeds, as `plot` of the directory does (sw19 #2).
    assert [c.seeds for c in drawn] == [tuple(result.plan.seeds)] * 2


def test_an_env_id_with_a_slash_names_one_sweep_folder(tmp_path):
    base = _base(tmp_path)
    base = dataclasses.replace(
        base, env=dataclasses.replace(base.env, id="playground/CartpoleBalance")
    )
    plan = make_plan(base, seeds=[0])
    result = SweepResult(
        plan=plan, histories=[[]], diverged=[None], final_params=[None]
    )
    path = report.start_dir(result)
    assert path.parent == tmp_path
    assert path.name.startswith("sweep_playground-CartpoleBalance_ppo")


def _pbt(tmp_path) -> PBTResult:
    field = ExploredField(name="learning_rate", kind="loguniform", low=1e-4, high=1e-2)
    # Member 1 copies member 0 at update 2; member 0 ends no episode before it.
    lineage = [
        ReadyStep(0, (0, 1), (math.nan, math.nan), {"learning_rate": (1e-3, 2e-3)}),
        ReadyStep(2, (0, 0), (math.nan, 4.0), {"learning_rate": (1e-3, 8e-4)}),
    ]
    return PBTResult(
        base=_base(tmp_path, total_steps=512 * 4, num_logs=4),
        fields=(field,),
        config=PBTConfig(ready=2),
        population=2,
        histories=[_history(1, 2, 3, 4), _history(5, 6, 7, 8)],
        diverged=[None, 3],
        lineage=lineage,
        final_params=[{"w": np.full(2, i, np.float32)} for i in range(2)],
        target_return=6.0,
        search_seed=11,
        compile_seconds=1.5,
        train_seconds=2.5,
        mesh=(1, 1),
    )


def test_lineage_rows_by_hand(tmp_path):
    rows = lineage_rows(_pbt(tmp_path))
    # 2 steps x 2 members; env steps = updates x 512; NaN scores are None
    # (JSON has no NaN; the CSV leaves them empty).
    assert [(r["updates"], r["env_steps"], r["member"], r["parent"]) for r in rows] == [
        (0, 0, 0, 0),
        (0, 0, 1, 1),
        (2, 1024, 0, 0),
        (2, 1024, 1, 0),
    ]
    assert [r["score"] for r in rows] == [None, None, None, 4.0]
    assert [r["learning_rate"] for r in rows] == [1e-3, 2e-3, 1e-3, 8e-4]


def test_lineage_rows_read_back_in_member_order(tmp_path):
    result = _pbt(tmp_path)
    rows = lineage_rows(result)
    shuffled = [rows[3], rows[0], rows[2], rows[1]]
    steps = read_lineage(shuffled, ["learning_rate"])
    assert [s.updates for s in steps] == [2, 0]  # as first met
    assert steps[0].parents == (0, 0) and steps[0].scores[1] == 4.0
    assert steps[0].values == {"learning_rate": (1e-3, 8e-4)}
    assert math.isnan(steps[0].scores[0]) and math.isnan(steps[1].scores[1])


def test_write_pbt_writes_the_schedules_and_the_best_members_policy(tmp_path):
    # Member 1 ended higher (8) but diverged: member 0 is the best, and its
    # parameters are the policy's, beside `schedules.png`.
    path = write_pbt(_pbt(tmp_path))
    np.testing.assert_array_equal(_policy_params(path / "policy"), [0.0, 0.0])
    assert (path / "schedules.png").is_file() and not (path / "checkpoints").exists()
    # No member with a finite return: no policy, and the run is finished.
    none = dataclasses.replace(_pbt(tmp_path / "none"), diverged=[1, 3])
    path = write_pbt(none)
    assert not (path / "policy").exists()
    assert load_pbt(path).diverged == [1, 3]


def test_a_pbt_directory_reads_back_what_it_recorded(tmp_path):
    result = _pbt(tmp_path)
    assert result.env_steps == 512 * 4 * 2  # every member's updates
    loaded = load_pbt(write_pbt(result))
    assert loaded.population == 2 and loaded.mesh == (1, 1)
    assert loaded.search_seed == 11 and loaded.target_return == 6.0
    assert loaded.diverged == [None, 3]
    assert loaded.config == result.config and loaded.fields == result.fields
    assert [h[-1][RETURN] for h in loaded.histories] == [4.0, 8.0]
    assert loaded.lineage[1] == result.lineage[1]
    np.testing.assert_array_equal(loaded.params(1)["w"], [1.0, 1.0])
    # Member 1 diverged: NaN; member 0's last return along its own line: 4.
    np.testing.assert_array_equal(loaded.final_return, [4.0, np.nan])
    assert loaded.best == 0


def test_a_run_named_by_values_no_run_has_says_which_and_lists_the_sweeps(tmp_path):
    result = _sweep(tmp_path)  # learning_rate 1e-3, 2e-3; seeds [5, 2]
    assert result.run_index(learning_rate=2e-3, seed=2) == 3
    with pytest.raises(KeyError) as caught:
        result.params(learning_rate=3e-4, seed=7)
    assert str(caught.value) == (
        "0 runs match ppo.learning_rate=0.0003, seed=7 (ppo.learning_rate=0.0003 "
        "is none of its values; seed=7 is none of its seeds); name a setting and "
        "a seed of the sweep's: ppo.learning_rate in [0.001, 0.002]; seed in [5, 2]."
    )
    with pytest.raises(KeyError, match=r"^2 runs match seed=5; name a setting"):
        result.run_index(seed=5)
    with pytest.raises(KeyError, match=r"\(gamma is not swept\)"):
        result.run_index(gamma=0.9, seed=5)


def test_the_commands_best_setting_line_shows_values_as_its_table(tmp_path, capsys):
    # A random search's value: 0.0008727 in the table and the best line alike.
    from purejaxdrl.cli.sweep import _print_summary

    drawn = 0.0008727093859002809
    plan = make_plan(_base(tmp_path), grid={"learning_rate": [drawn, 2e-3]}, seeds=1)
    result = SweepResult(
        plan=plan,
        histories=[_history(10, 30.0), _history(10, 20.0)],
        diverged=[None, None],
        final_params=[None, None],
        target_return=None,
        compile_seconds=1.5,
        train_seconds=2.5,
        programs_compiled=1,
    )
    _print_summary(result, 4.0)
    out = capsys.readouterr().out
    assert "| 0 | 0.0008727 | 30.0 ± — |" in out
    assert "best setting: 0 (ppo.learning_rate=0.0008727): mean return 30.0" in out
    assert str(drawn) not in out


def test_a_grids_listing_names_each_value_once():
    # A 2x2 grid repeats each value over the settings (mut15 #10).
    from types import SimpleNamespace

    from purejaxdrl.sweeps.result import _listed, _no_single_run

    paths = ["ppo.learning_rate", "ppo.clip_eps"]
    grid = [(lr, eps) for lr in (1e-3, 2e-3) for eps in (0.1, 0.2)]
    plan = SimpleNamespace(
        fields=[SimpleNamespace(path=p) for p in paths],
        settings=[dict(zip(paths, values, strict=True)) for values in grid],
        seeds=(0,),
    )
    assert _no_single_run(plan, {}, 0, 4).endswith(
        "name a setting and a seed of the sweep's: ppo.learning_rate in "
        "[0.001, 0.002], ppo.clip_eps in [0.1, 0.2]; seed in [0]."
    )
    assert _listed(list(range(8))) == "[0, 1, 2, 3, 4, 5, 6, 7]"
    assert _listed(list(range(9))) == "[0, 1, 2, 3, 4, 5, 6, 7, ... (9 values)]"
