"""What a resume says, and when: its changes once accepted, never before a refusal.

A refusal is its own line alone (bad input's rule): "resuming with X -> Y"
printed before "error: ... is being trained by ..." read as if the change had
been taken. `train` says the changes itself, after every check, so a Python
user reads them in `TrainResult.messages` as the command line prints them.
"""

import os
import pathlib
import shutil
import warnings

import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.config import ConfigError, to_dict
from purejaxdrl.setup_warnings import SetupWarning, forget_warnings
from purejaxdrl.training.run_files import RunLock

TINY = {"num_envs": 4, "unroll_length": 8, "total_steps": 64, "num_logs": 1,
        "devices": 1}  # fmt: skip


@pytest.fixture
def run_dir(tmp_path) -> pathlib.Path:
    """A trained run of 2 updates, its own per test (some train it on)."""
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config, {**TINY, "run_dir": str(tmp_path)}
    )
    return pathlib.Path(pjd.train(config, write_files=True, console=False).run_dir)


def _resume(run_dir, total_steps):
    """(messages, result or the ConfigError) of resuming with `total_steps`."""
    overrides = {"total_steps": total_steps}
    config = pjd.resume_config(run_dir, overrides, allow_changes=True)[0]
    said = []
    try:
        result = pjd.train(config, resume=run_dir, console=False, notify=said.append,
                           allow_changes=True)  # fmt: skip
    except ConfigError as error:
        return said, error
    return said, result


def test_an_accepted_change_is_said_before_where_the_run_resumes(run_dir):
    said, result = _resume(run_dir, 128)
    assert said[:2] == [
        "resuming with total_steps: 64 -> 128",
        f"resumed at update 2 of 4 from {run_dir / 'checkpoints' / '2'}",
    ]
    assert said[0] in result.messages and result.updates == 4


def test_a_resume_without_a_usable_checkpoint_still_says_its_changes(run_dir):
    shutil.rmtree(run_dir / "checkpoints")
    (run_dir / "checkpoints").mkdir()
    said, result = _resume(run_dir, 128)
    assert said[0].startswith("no usable checkpoint in "), said
    assert said[0].endswith("; starting from update 0"), said
    assert said[1] == "resuming with total_steps: 64 -> 128", said
    assert said[1] in result.messages and result.updates == 4


def test_a_refused_resume_says_nothing_of_its_changes(run_dir):
    # Below what the run has trained: refused by `restore`, after the lock.
    said, error = _resume(run_dir, 32)
    assert isinstance(error, ConfigError) and "before the 2 updates" in str(error)
    assert not any("resuming with" in line for line in said), said
    # Trained by another process now: refused at the lock.
    with RunLock(run_dir):
        said, error = _resume(run_dir, 128)
    assert isinstance(error, ConfigError), error
    assert "is being trained by process" in str(error) and said == []


def test_the_command_lines_refusal_is_one_line_alone(run_dir, capsys):
    argv = ["train", "--resume", str(run_dir), "--override", "--total-steps", "128",
            "--quiet", "--no-compile-cache"]  # fmt: skip
    with RunLock(run_dir):
        assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [err.strip()], err
    assert f"is being trained by process {os.getpid()}" in err
    # Accepted once free: the change said once, before where it resumes.
    assert cli.main(argv) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines.count("purejaxdrl: resuming with total_steps: 64 -> 128") == 1
    assert lines.index("purejaxdrl: resuming with total_steps: 64 -> 128") < next(
        i for i, line in enumerate(lines) if "resumed at update 2" in line
    )


def test_a_resume_refused_for_another_algo_gives_no_advice_on_it(tmp_path, capsys):
    # A ppo run too short for DQN's default target period: `--algo dqn` printed
    # "warning: dqn.target_every=250 is not less than the run's ... gradient
    # steps" before its refusal, advising on a run that would never exist.
    from purejaxdrl.config import to_dict
    from purejaxdrl.setup_warnings import forget_warnings

    short = {**TINY, "total_steps": 4096}  # 128 updates, 97 gradient steps
    config = pjd.apply_overrides(pjd.load_preset("cartpole").config, short)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(to_dict(config)))
    forget_warnings()
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with pytest.raises(ConfigError, match=r"^algo='dqn' differs from the run's"):
            pjd.resume_config(tmp_path, {"algo": "dqn"})
        assert cli.main(["train", "--resume", str(tmp_path), "--algo", "dqn"]) == 2
    assert [str(w.message) for w in shown] == []
    err = capsys.readouterr().err
    assert err.splitlines() == [err.strip()] and "error: algo='dqn'" in err, err
    # Not forgotten: the same advice is shown where the config is accepted.
    with pytest.warns(SetupWarning, match=r"^dqn.target_every=250 is not less"):
        pjd.training.validate(pjd.apply_overrides(config, {"algo": "dqn"}))


# A resume holds its setup advice until `check_continues` accepts it; an
# accepted one then shows it (`show_held`), once.
_SHORT = {"num_envs": 4, "unroll_length": 8, "num_logs": 1, "total_steps": 4096}


def test_an_accepted_resume_shows_the_advice_it_held_once(tmp_path):
    # A dqn run long enough for its default target period, resumed with a
    # total_steps too short for it: the advice is on the overridden config,
    # held inside `resume_config`, and shown once the change is accepted.
    config = pjd.apply_overrides(pjd.load_preset("cartpole").config, _SHORT)
    config = pjd.apply_overrides(config, {"algo": "dqn", "total_steps": 400_000})
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(to_dict(config)))
    forget_warnings()
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        pjd.resume_config(tmp_path, {"total_steps": 4096}, allow_changes=True)
    said = [str(w.message) for w in shown if issubclass(w.category, SetupWarning)]
    assert len([m for m in said if m.startswith("dqn.target_every=250")]) == 1, said
