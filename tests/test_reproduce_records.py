"""What `scripts/reproduce.py` records for a row: where its runs are, and marks.

No training: stand-ins for `pjd.train` return figures at once, and the script
writes into a copy of docs/ and README.md under the test's folder.
"""

import json
import re
import shutil
import sys
import time
import types

import pytest

from tests.helpers import reproduce_script


@pytest.fixture
def reproduce(monkeypatch, tmp_path):
    """The script, writing to copies of docs/scores.* and README.md in tmp_path."""
    module = reproduce_script()
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("scores.json", "scores.md"):
        shutil.copy(module.DOCS / name, docs / name)
    shutil.copy(module.README, tmp_path / "README.md")
    monkeypatch.setattr(module, "DOCS", docs)
    monkeypatch.setattr(module, "README", tmp_path / "README.md")
    monkeypatch.chdir(tmp_path)  # the preset's run_dir, runs/, lands here
    return module


def test_a_row_of_runs_alone_records_each_run_s_folder(
    reproduce, monkeypatch, tmp_path
):
    # cartpole:pqn trains its seeds one after another. Its row recorded
    # "sweep_dir": "runs", the parent all runs share, which names none of them;
    # now each run's own folder, with the commit and date as sweeps record.
    def train(config, **kwargs):
        return types.SimpleNamespace(
            env_steps=1000, train_seconds=2.0, mean_return=470.0, eval_return=500.0,
            run_dir=tmp_path / "runs" / f"pqn_seed{config.seed}",
        )  # fmt: skip

    monkeypatch.setattr(reproduce.pjd, "train", train)
    monkeypatch.setattr(reproduce, "load_curves", lambda dirs: dirs)
    monkeypatch.setattr(reproduce, "plot_curves", lambda *a, **k: None)
    monkeypatch.setattr(sys, "argv", ["reproduce.py", "--rows", "cartpole:pqn"])
    started = time.time()
    reproduce.main()
    score = json.loads((reproduce.DOCS / "scores.json").read_text())["cartpole:pqn"]
    assert score["run_dirs"] == [
        str(tmp_path / "runs" / f"pqn_seed{s}") for s in range(5)
    ]
    assert "sweep_dir" not in score
    assert score["final"] == [500.0] * 5  # the greedy evaluation's
    assert score["commit"] and score["commit"] != "?"
    days = {time.strftime("%Y-%m-%d", time.gmtime(t)) for t in (started, time.time())}
    assert score["date"] in days


def test_a_row_that_predates_a_change_is_marked_until_it_runs_again(
    reproduce, monkeypatch, tmp_path
):
    # cartpole_balance PPO was recorded (2026-11-27) before PPO's minibatch
    # dealing (2026-12-03); only results.md said so. Both tables mark it, with
    # the change named once under each; recording the row again drops both.
    scores = json.loads((reproduce.DOCS / "scores.json").read_text())
    assert scores["cartpole_balance:ppo"]["predates"]
    line = "| cartpole_balance | ppo | 1,536,000 | 5 | 997.5 ± 3.8 ² | 5/5 (>= 950) |"
    assert line in reproduce.table(reproduce.ROWS, scores)
    readme = reproduce.readme_table(reproduce.ROWS, scores)
    assert "| cartpole_balance | ppo | 1536k | 997.5 ± 3.8 ² | 950: 5/5 |" in readme
    # The note follows a blank line: Markdown would read it as a table row.
    note = (
        "\n\n² Predates PPO's minibatch dealing of 2026-12-03 "
        "([results](docs/results.md)).\n"
    )
    assert readme.endswith(note)
    shown = reproduce.table(reproduce.ROWS, scores)
    assert "Rows marked ² were recorded before a change that trains them" in shown
    assert "differently, PPO's minibatch dealing of 2026-12-03: their" in shown

    def sweep(preset, algo, seeds, **kwargs):
        return types.SimpleNamespace(
            final_return=[999.0] * seeds, env_steps=1000 * seeds,
            train_seconds=2.0, run_dir=tmp_path / "runs" / "sweep",
        )  # fmt: skip

    monkeypatch.setattr(reproduce.pjd, "sweep", sweep)
    monkeypatch.setattr(reproduce, "plot_sweep", lambda r, out: None)
    monkeypatch.setattr(sys, "argv", ["reproduce.py", "--rows", "cartpole_balance:ppo"])
    reproduce.main()
    scores = json.loads((reproduce.DOCS / "scores.json").read_text())
    assert "predates" not in scores["cartpole_balance:ppo"]
    shown = (reproduce.DOCS / "scores.md").read_text()
    assert "| 999.0 ± 0.0 | 5/5 (>= 950) |" in shown
    # The other marked rows (memory_chain, ant, halfcheetah) keep theirs.
    readme = reproduce.README.read_text()
    assert "| memory_chain | ppo | 500k | 0.997 ± 0.007 ² |" in readme


def test_no_marked_row_no_note():
    reproduce = reproduce_script()
    score = {"mean": 1.0, "ci95": 0.0, "target": 1, "reached": 5, "seeds": 5}
    assert reproduce.return_text(score) == "1.00 ± 0.00"
    assert reproduce.predates_note({"a:b": score}) == ()
    assert reproduce.predated_changes({"a:b": score}) == ""
    assert reproduce.return_text({**score, "predates": "x"}) == "1.00 ± 0.00 ²"


def test_every_trained_row_states_the_day_it_was_trained(reproduce):
    # A row's date: its own `date`, else its sweep folder's start time.
    assert reproduce.row_date({"date": "2026-12-06"}) == "2026-12-06"
    stamped = {"sweep_dir": "runs/sweep_brax-ant_ppo_20261126-024623"}
    assert reproduce.row_date(stamped) == "2026-11-26"
    assert reproduce.row_date({"sweep_dir": "runs"}) == ""
    # A date left empty (a failed or partial update) is no date: the stamp's.
    for empty in ("", None):
        assert reproduce.row_date({**stamped, "date": empty}) == "2026-11-26"
    # The committed file: every row with figures, GPU rows included, has one
    # in scores.md's date column.
    scores = json.loads((reproduce.DOCS / "scores.json").read_text())
    assert all(reproduce.row_date(s) for s in scores.values())
    lines = (reproduce.DOCS / "scores.md").read_text().splitlines()
    gpu = [line for line in lines if "NVIDIA H200" in line]
    assert len(gpu) == 6
    assert all(re.search(r"\| 2026-11-2[67] \|$", line) for line in gpu)
