"""A newcomer's first hour, round 3 (review fh20): extras, paths, hints."""

import sys

import pytest

from purejaxdrl import cli
from purejaxdrl.config import ConfigError


def _error(argv, capsys):
    assert cli.main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


WANDB_MISSING = (
    "purejaxdrl: error: --logger wandb (log_to=['wandb'] in Python) needs the "
    "wandb package, which is not installed: pip install 'purejaxdrl[wandb]', or "
    "drop it"
)


def test_wandb_missing_is_one_line_before_anything_trains(
    tmp_path, monkeypatch, capsys
):
    # It was an ImportError's traceback, exit 1, once the run had started.
    monkeypatch.setitem(sys.modules, "wandb", None)  # as if not installed
    argv = ["train", "--logger", "wandb", "--total-steps", "2048",
            "--run-dir", str(tmp_path / "runs")]  # fmt: skip
    assert _error(argv, capsys) == WANDB_MISSING
    assert not (tmp_path / "runs").exists()  # no run folder: nothing started
    from purejaxdrl.observe.loggers import WandbLogger

    with pytest.raises(ConfigError, match=r"pip install 'purejaxdrl\[wandb\]'"):
        WandbLogger(tmp_path, "ppo", {})