"""A replay run saved with `devices: 0` resumes on its saved device count,
and keeps `devices: 0`, so that its next resume chooses again."""

import dataclasses
import json
import pathlib
import shutil

import jax
import numpy as np
import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl.config import to_dict
from purejaxdrl.training.checkpoint import saved_devices
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.integrity import write_manifest
from purejaxdrl.training.replay_shards import replay_devices
from purejaxdrl.training.run import Run, save_resumed_config
from purejaxdrl.training.train import _checked_resume
from tests.helpers import flat


def _run_dir(tmp_path: pathlib.Path, devices: int) -> pathlib.Path:
    # What a checkpoint's meta holds, for the fields read here; an older one
    # and orbax's temporary folder beside it.
    for step, saved in (("3", devices), ("7", devices), ("9.orbax-tmp-1", 99)):
        meta = tmp_path / "checkpoints" / step / "meta"
        meta.mkdir(parents=True)
        (meta / "metadata").write_text(json.dumps({"devices": saved}))
    return tmp_path


def test_a_replay_run_left_to_auto_takes_its_saved_count_and_says_so(tmp_path):
    # conftest: 8 fake CPU devices. Before, the resume was refused: "resumes
    # only on 2 devices, not 8; pass --devices 2."
    assert jax.local_device_count() == 8
    config, note = replay_devices(TrainConfig(algo="dqn"), _run_dir(tmp_path, 2))
    assert config.devices == 2
    assert config == TrainConfig(algo="dqn", devices=2)
    assert note == (
        "resuming on 2 of 8 cpu devices: this dqn run keeps its replay buffer "
        "in 2 shards, one per device, and resumes only on as many."
    )


def test_a_corrupted_newest_checkpoint_is_passed_over_as_restore_passes_it(tmp_path):
    # Update 7's meta was damaged after its manifest was written, to read 4
    # devices. `replay_devices` took the newest readable file's count (4, so
    # --devices 4) while `restore` held the replay to the newest checkpoint
    # that verifies (update 3's, 2 devices), and refused its own choice.
    run_dir = _run_dir(tmp_path, 2)
    newest = run_dir / "checkpoints" / "7"
    write_manifest(newest)
    write_manifest(run_dir / "checkpoints" / "3")
    (newest / "meta" / "metadata").write_text(json.dumps({"devices": 4}))
    assert saved_devices(run_dir) == 2
    config, _ = replay_devices(TrainConfig(algo="dqn"), run_dir)
    assert config.devices == 2
    # A step orbax committed before its manifest was written counts (as it
    # restores): here update 7's, saved on 8 devices.
    unhashed = _run_dir(tmp_path / "unhashed", 2)
    write_manifest(unhashed / "checkpoints" / "3")
    (unhashed / "checkpoints/7/meta/metadata").write_text(json.dumps({"devices": 8}))
    assert saved_devices(unhashed) == 8
    assert saved_devices(tmp_path / "none") is None


def test_other_runs_keep_their_config(tmp_path):
    run_dir = _run_dir(tmp_path, 2)
    for config in (
        TrainConfig(algo="ppo"),  # no replay: the environments re-split
        TrainConfig(algo="dqn", devices=4),  # chosen: `restore` says if it fits
    ):
        assert replay_devices(config, run_dir) == (config, None)
    # More than there are, or none saved: left to `restore`, which names them.
    more = _run_dir(tmp_path / "16", 16)
    auto = TrainConfig(algo="dqn")
    assert replay_devices(auto, more) == (auto, None)
    # All the devices: no note, but the count set, so that processes with
    # other local counts resolve the same `devices` (they must agree).
    every = _run_dir(tmp_path / "8", 8)
    assert replay_devices(TrainConfig(algo="dqn"), every) == (
        TrainConfig(algo="dqn", devices=8),
        None,
    )
    empty = TrainConfig(algo="dqn")
    assert replay_devices(empty, tmp_path / "none") == (empty, None)


def _devices_in_yaml(run_dir: pathlib.Path) -> int:
    return yaml.safe_load((run_dir / "config.yaml").read_text())["devices"]


@pytest.mark.timeout(300)
def test_a_resume_keeps_devices_0_so_that_every_resume_chooses_again(
    tmp_path, monkeypatch
):
    # A DQN run of 2 processes x 1 device left to choose (`devices: 0`): here
    # one process trains it on 2 of its 8 devices, and its config.yaml is what
    # such a run writes. It was stopped after its checkpoint at update 2 of 4.
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "dqn").config,
        {
            "total_steps": 4 * 16 * 4,
            "num_envs": 16,
            "num_logs": 2,
            "devices": 2,
            "run_dir": str(tmp_path / "runs"),
            "dqn": {"min_replay": 128, "batch_size": 32, "buffer_size": 512},
            "checkpoint": {"wait": True},
        },
    )
    run_dir = pathlib.Path(pjd.train(config, write_files=True, console=False).run_dir)
    text = (run_dir / "config.yaml").read_text()
    assert "\ndevices: 2\n" in text
    (run_dir / "config.yaml").write_text(
        text.replace("\ndevices: 2\n", "\ndevices: 0\n")
    )
    shutil.rmtree(run_dir / "checkpoints" / "4")
    note = (
        "resuming on 2 of 8 cpu devices: this dqn run keeps its replay buffer "
        "in 2 shards, one per device, and resumes only on as many."
    )

    resumed = pjd.resume_config(run_dir, {})[0]
    assert resumed.devices == 0
    result = pjd.train(resumed, resume=run_dir, console=False)
    assert result.updates == 4 and note in result.messages
    meta = json.loads((run_dir / "checkpoints/4/meta/metadata").read_text())
    assert meta["devices"] == 2  # the count used is in each checkpoint's meta
    # Before, its first resume wrote `devices: 2`: every later one was pinned
    # to 2 devices per process, and refused as 2 processes of 2 devices.
    assert _devices_in_yaml(run_dir) == 0

    # The next resume chooses again: here (nothing left to train) ...
    again = pjd.train(pjd.resume_config(run_dir, {})[0], resume=run_dir, console=False)
    assert note in again.messages and _devices_in_yaml(run_dir) == 0
    # ... and as 2 processes, 1 device each of their own.
    monkeypatch.setattr(jax, "process_count", lambda: 2)
    chosen, _ = replay_devices(pjd.resume_config(run_dir, {})[0], run_dir)
    assert chosen.devices == 1


def test_a_count_that_devices_0_would_not_choose_is_written(tmp_path):
    # `--devices 2` given to a resume of a run without a replay buffer (its
    # environments re-split), or of a replay run saved on another count (the
    # resume is refused before this), is the user's choice: config.yaml says it.
    run_dir = _run_dir(tmp_path, 4)
    for config in (
        TrainConfig(algo="ppo", devices=2),
        TrainConfig(algo="dqn", devices=2),
    ):
        (run_dir / "config.yaml").write_text(yaml.safe_dump(to_dict(TrainConfig())))
        save_resumed_config(Run(config=config, run_dir=run_dir, main=True), 3)
        assert _devices_in_yaml(run_dir) == 2


def test_a_replay_kept_per_environment_resumes_on_any_count(tmp_path):
    # R2D2 keeps one shard per environment: `devices: 0` chooses again, as a
    # run without replay does, instead of taking the saved count.
    config = TrainConfig(algo="r2d2")
    assert replay_devices(config, _run_dir(tmp_path, 2)) == (config, None)


@pytest.mark.slow  # three R2D2 runs, ~35 s on 2 cores
@pytest.mark.timeout(600)
def test_r2d2_saved_on_two_devices_resumes_on_one_as_it_trains_on_either(tmp_path):
    small = {
        "total_steps": 1280,
        "num_logs": 2,
        "checkpoint": {"wait": True},  # a checkpoint at update 2 of 4
        "r2d2": {"min_replay": 32, "batch_size": 32},  # learns from update 3
    }
    base = pjd.apply_overrides(pjd.load_preset("cartpole_masked", "r2d2").config, small)
    two = pjd.train(
        dataclasses.replace(base, devices=2, run_dir=str(tmp_path)),
        console=False,
        write_files=True,
    )
    one = pjd.train(dataclasses.replace(base, devices=1), console=False)
    shutil.rmtree(pathlib.Path(two.run_dir, "checkpoints", "4"))
    resumed_config = dataclasses.replace(base, devices=1, run_dir=str(tmp_path))
    heard = []
    resumed = pjd.train(
        resumed_config, console=False, resume=two.run_dir, notify=heard.append
    )
    assert any("resumed at update 2 of 4" in line for line in heard), heard
    # Its replay, written on 2 devices, is read on 1: the parameters are the
    # straight runs' up to the rounding by which those differ (~5e-8).
    for straight in (two, one):
        np.testing.assert_allclose(
            flat(resumed.state.agent.params), flat(straight.state.agent.params),
            rtol=0, atol=1e-6,
        )  # fmt: skip


def test_the_command_line_agrees_on_the_devices_the_resume_takes(tmp_path, monkeypatch):
    # Processes with unequal device counts would train on different `devices`
    # (collectives hang); agreeing on the resume's count is what stops them.
    from purejaxdrl import cli
    from purejaxdrl.cli import run_agreement

    class Agreed(BaseException):
        """Ends the command at its agreement, the config it agreed on in it."""

    def agree_on_run(args, config):
        raise Agreed(config)

    run_dir = _run_dir(tmp_path, 2)
    saved = dataclasses.replace(TrainConfig(algo="dqn"), run_dir=str(tmp_path))
    (run_dir / "config.yaml").write_text(yaml.safe_dump(to_dict(saved)))
    monkeypatch.setattr(run_agreement, "agree_on_run", agree_on_run)
    with pytest.raises(Agreed) as agreed:
        cli.main(["train", "--resume", str(run_dir), "--no-compile-cache"])
    assert agreed.value.args[0].devices == 2


@pytest.mark.parametrize("saved", [8, 2])
def test_a_plain_resume_names_no_change_of_devices(tmp_path, saved):
    # `--resume RUN` of a dqn run saved with `devices: 0` said "resuming with
    # devices: 0 -> 8": the count `replay_devices` pins, read as the user's
    # change. Only the note that it resumes on fewer devices than there are.
    run_dir = _run_dir(tmp_path, saved)
    auto = TrainConfig(algo="dqn")
    (run_dir / "config.yaml").write_text(yaml.safe_dump(to_dict(auto)))
    config, notes, _ = _checked_resume(auto, run_dir, allow_changes=False)
    assert config.devices == saved
    assert notes == [replay_devices(auto, run_dir)[1]] * (saved < 8), notes
    # A change given is still said.
    given = dataclasses.replace(auto, num_logs=7)
    notes = _checked_resume(given, run_dir, allow_changes=False)[1]
    assert notes[0] == f"resuming with num_logs: {auto.num_logs} -> 7", notes


# Only the count `replay_devices` pins is left unsaid: a devices count the
# user gives, other than the saved one, is still a change said.
def test_a_devices_count_given_is_still_said_as_a_change(tmp_path):
    for step in ("3", "7"):
        meta = tmp_path / "checkpoints" / step / "meta"
        meta.mkdir(parents=True)
        (meta / "metadata").write_text(json.dumps({"devices": 2}))
    saved = TrainConfig(algo="ppo", devices=2)  # no replay: nothing pinned
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(to_dict(saved)))
    given = TrainConfig(algo="ppo", devices=1)
    config, notes, _ = _checked_resume(given, tmp_path, allow_changes=True)
    assert config.devices == 1
    assert "resuming with devices: 2 -> 1" in notes, notes
