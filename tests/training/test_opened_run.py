"""The run a process opened, and the resume clause a failure's line ends with."""

import pathlib

import pytest

from purejaxdrl.training import opened_run


@pytest.fixture
def run(tmp_path):
    """A run directory this process opened; forgotten after the test."""
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    opened_run.remember(run, "purejaxdrl train --resume run")
    yield run
    opened_run._OPENED.clear()


def test_the_newest_finished_checkpoint_is_named_not_orbaxs_unfinished_one(run):
    # Numbers compare as numbers (12 after 3), and orbax's temporary folder
    # of a save under way is no checkpoint.
    for name in ("3", "12", "20.orbax-checkpoint-tmp-1"):
        (run / "checkpoints" / name).mkdir()
    text = opened_run.resume_after_failure()
    assert text == (
        f"; its newest checkpoint is {run / 'checkpoints' / '12'}: continue with: "
        "purejaxdrl train --resume run (on every host, with its process flags)"
    )


def test_without_a_finished_checkpoint_there_is_no_clause(run):
    (run / "checkpoints" / "5.orbax-checkpoint-tmp-0").mkdir()
    assert opened_run.resume_after_failure() == ""


def test_the_command_is_found_from_any_folder_inside_the_run(run, tmp_path):
    assert opened_run.resume_command_for(run / "checkpoints") == (
        "purejaxdrl train --resume run"
    )
    assert opened_run.resume_command_for(run) == "purejaxdrl train --resume run"
    assert opened_run.resume_command_for(tmp_path) is None
    assert opened_run.resume_command_for(tmp_path / "runner") is None


def test_a_run_opened_under_a_relative_folder_holds_its_absolute_checkpoints(
    monkeypatch, tmp_path
):
    # ds20 #1: `runs/...` as given was compared with the Checkpointer's
    # absolute folder, and a failed save's line lost the resume command.
    from purejaxdrl.training import faults

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(opened_run, "_OPENED", [])
    opened_run.remember(pathlib.Path("runs/run"), "purejaxdrl train --resume runs/run")
    full = OSError(28, "No space left on device")
    saves = tmp_path / "runs" / "run" / "checkpoints"
    assert faults.save_failure(saves, full).endswith(
        "free space (or fix the folder) and continue with: "
        "purejaxdrl train --resume runs/run."
    )
    # And a relative folder asked about an absolute run.
    opened_run.remember(tmp_path / "runs" / "run", "purejaxdrl train --resume r")
    assert opened_run.resume_command_for("runs/run/checkpoints") == (
        "purejaxdrl train --resume r"
    )
