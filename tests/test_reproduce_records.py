"""What `scripts/reproduce.py` records for a row: where its runs are, and marks.

No training: stand-ins for `pjd.train` return figures at once, and the script
writes into a copy of docs/ and README.md under the test's folder.
"""

import json
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
