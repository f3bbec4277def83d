"""train --run-dir: a folder that holds runs, never a run itself.

Runs are made inside run_dir, beside the others; a run folder (config.yaml),
an exported policy (policy.json) or a sweep (sweep.yaml) is refused rather
than nested into, in one line that names its parent.
"""

import pathlib

import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.config import ConfigError
from tests.helpers import cartpole_run

TINY = {"num_envs": 4, "unroll_length": 8, "total_steps": 32, "num_logs": 1}
ARGV = ["train", "--env", "cartpole", "--num-envs", "4", "--unroll-length", "8",
        "--total-steps", "32", "--quiet", "--devices", "1"]  # fmt: skip


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> pathlib.Path:
    return cartpole_run(tmp_path_factory.mktemp("runs"), total_steps=32)


def _one_line(capsys) -> str:
    (line,) = capsys.readouterr().err.strip().splitlines()
    return line


def test_a_run_dir_that_is_itself_a_run_is_refused(trained, tmp_path, capsys):
    # A folder of runs (train's --run-dir) takes a new run beside the others;
    # a run, an exported policy or a sweep is not nested into.
    before = sorted(p.name for p in trained.iterdir())
    assert cli.main([*ARGV, "--run-dir", str(trained)]) == 2
    assert _one_line(capsys) == (
        f"purejaxdrl: error: run_dir={str(trained)!r} is itself a run (it holds "
        "config.yaml), and new runs are made inside run_dir, beside the others; "
        f"pass the folder that holds it, --run-dir {str(trained.parent)!r}."
    )
    assert sorted(p.name for p in trained.iterdir()) == before
    for own, what in (("policy.json", "an exported policy"),
                      ("sweep.yaml", "a sweep directory")):  # fmt: skip
        folder = tmp_path / own
        folder.mkdir()
        (folder / own).write_text("{}")
        config = pjd.apply_overrides(
            pjd.load_preset("cartpole").config, {**TINY, "run_dir": str(folder)}
        )
        with pytest.raises(ConfigError, match=f"is itself {what} \\(it holds {own}"):
            pjd.train(config, write_files=True, console=False)
        assert [p.name for p in folder.iterdir()] == [own]
    assert cli.main([*ARGV, "--run-dir", str(trained.parent)]) == 0
    assert len([p for p in trained.parent.iterdir() if p.is_dir()]) == 2


def test_run_dir_dot_inside_a_run_is_told_the_runs_parent(trained, monkeypatch, capsys):
    # `--run-dir .` typed inside a run: ".".parent is "." again, so the
    # advice must name the resolved parent, not the same folder.
    monkeypatch.chdir(trained)
    before = sorted(p.name for p in trained.iterdir())
    assert cli.main([*ARGV, "--run-dir", "."]) == 2
    line = _one_line(capsys)
    assert line.startswith("purejaxdrl: error: run_dir='.' is itself a run "), line
    assert line.endswith(f"--run-dir {str(trained.resolve().parent)!r}."), line
    assert sorted(p.name for p in trained.iterdir()) == before
