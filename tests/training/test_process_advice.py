"""What a multi-process run advises when it refuses or stops: commands that work.

Checked without processes: `jax.process_count` is faked where the advice
depends on it.
"""

import math
import os
import subprocess
import sys
import types

import jax
import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl.training import opened_run, replay_shards, run


@pytest.mark.parametrize(
    ("saved", "processes", "local", "fix"),
    [
        # Every process already has the 1 device the buffer needs: a machine
        # "with 1" device changed nothing; one process does.
        (1, 2, 1, "resume it as one process: drop --coordinator, --num-processes"),
        (6, 4, 2, "a number of processes that divides 6 (1, 2, 3 or 6); as one"),
        (4, 2, 4, "pass --devices 2"),
        # The saved shards per process equal the local devices: all of them.
        (8, 1, 8, "pass --devices 8 (devices=8 in Python)"),
        (4, 2, 2, "pass --devices 2"),
        (16, 1, 8, "this machine has 8 cpu device(s): resume it on a machine with 16"),
        # Saved by 2 processes x 2 devices: that layout resumes it too.
        (
            4,
            1,
            2,
            "machine with 4 (on CPU, fake them with JAX_NUM_CPU_DEVICES=4), or as 2 "
            "processes of 2 device(s) each (--coordinator, --num-processes 2, "
            "--process-id)",
        ),
        # Two processes of 1 device each saved 4 shards: 2 per process.
        (
            4,
            2,
            1,
            "each process has 1 cpu device(s): resume it as 2 processes with 2 "
            "devices each (--devices 2) (on CPU, fake them with "
            "JAX_NUM_CPU_DEVICES=2), or as one process on a "
            "machine with 4 devices (drop --coordinator, --num-processes and "
            "--process-id)",
        ),
    ],
)
def test_a_refused_replay_resume_says_what_fits(
    monkeypatch, saved, processes, local, fix
):
    monkeypatch.setattr(jax, "process_count", lambda: processes)
    monkeypatch.setattr(jax, "local_device_count", lambda: local)
    assert fix in replay_shards._replay_fix(saved)


def test_a_stopped_multi_process_run_says_to_resume_every_process(monkeypatch):
    from purejaxdrl.cli.train import summary

    config = pjd.load_preset("cartpole").config
    result = types.SimpleNamespace(
        mean_return=20.0, eval_return=float("nan"), stopped_by="SIGTERM",
        run_dir="runs/r", updates=8, num_devices=2, env_steps=4096,
        compile_seconds=1.0, steps_per_second=1e4, history=[],
        steps_per_second_per_device=1e4 / 2,
    )  # fmt: skip
    # The run's 2 (fake CPU) devices, not the tests' 8: its resume needs 2.
    fake = "JAX_NUM_CPU_DEVICES=2 "
    one = f"  checkpoint saved; continue with: {fake}purejaxdrl train --resume runs/r\n"
    assert one in summary(config, None, result, wall=2.0)
    monkeypatch.setattr(jax, "process_count", lambda: 2)
    # As printed before, it resumed as one process: a replay learner is refused.
    # Two processes of one device each: no setting.
    assert (
        "continue with: purejaxdrl train --resume runs/r (on every host, "
        "with its process flags)\n"
    ) in summary(config, None, result, wall=2.0)


def test_run_dir_given_to_a_resume_is_said_to_be_ignored(tmp_path):
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    saved = pjd.load_preset("cartpole").config
    (run_dir / "config.yaml").write_text(yaml.safe_dump(pjd.config.to_dict(saved)))
    _, changes = pjd.resume_config(str(run_dir), {"run_dir": "elsewhere"})
    assert changes == [
        f"run_dir: {saved.run_dir!r} -> 'elsewhere' (ignored: a resumed run writes "
        f"into {run_dir})"
    ]


def test_run_dir_given_to_a_resume_is_not_written_to_its_config_yaml(tmp_path):
    from purejaxdrl.training.run import open_run, save_resumed_config

    saved = pjd.load_preset("cartpole").config
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(pjd.config.to_dict(saved)))
    config, _ = pjd.resume_config(str(tmp_path), {"run_dir": "elsewhere"})
    assert config.run_dir == "elsewhere"
    run = open_run(config, resume=str(tmp_path), write_files=False, notify=None)
    save_resumed_config(run, 0)
    written = yaml.safe_load((tmp_path / "config.yaml").read_text())
    assert written["run_dir"] == saved.run_dir != "elsewhere"


def test_process_0_names_the_newest_finished_checkpoint_when_a_peer_fails(
    monkeypatch, tmp_path
):
    for name in ("10", "20", "30.orbax-checkpoint-tmp-1"):  # 30 is unfinished
        (tmp_path / "checkpoints" / name).mkdir(parents=True)
    saved = pjd.load_preset("cartpole").config
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(pjd.config.to_dict(saved)))
    monkeypatch.setattr(opened_run, "_OPENED", [])
    monkeypatch.setattr(jax, "process_count", lambda: 2)
    # The command a SIGTERM's summary prints: 4 fake CPU devices over 2
    # processes, 2 each; `--logger` only where the session logged somewhere.
    run.open_run(saved, resume=tmp_path, write_files=False, notify=None, devices=4)
    assert opened_run.resume_after_failure() == (
        f"; its newest checkpoint is {tmp_path}/checkpoints/20: continue with: "
        f"JAX_NUM_CPU_DEVICES=2 purejaxdrl train --resume {tmp_path} (on every "
        "host, with its process flags)"
    )
    run.open_run(
        saved, resume=tmp_path, write_files=False, notify=None, log_to=["tensorboard"]
    )
    assert opened_run.resume_after_failure().endswith(
        f"continue with: purejaxdrl train --resume {tmp_path} --logger tensorboard "
        "(on every host, with its process flags)"
    )
    monkeypatch.setattr(opened_run, "_OPENED", [])
    assert opened_run.resume_after_failure() == ""


# The line process 0 ends with, in a process of its own (it exits at once).
_PEER_FAILED = """
import pathlib, sys
from purejaxdrl.cli.processes import exit_on_peer_failure
from purejaxdrl.training import opened_run
opened_run.remember(pathlib.Path(sys.argv[1]), "purejaxdrl train --resume r")
exit_on_peer_failure("Gloo AllGather failed: Connection reset by peer")
"""


def test_the_peer_failure_line_says_how_to_resume(tmp_path):
    (tmp_path / "checkpoints" / "180").mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-c", _PEER_FAILED, str(tmp_path)],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]
    assert done.stderr == (
        "purejaxdrl: error: process 0 of 1 stopped because the run failed elsewhere "
        "(a process died or became unreachable): Gloo AllGather failed: Connection "
        f"reset by peer; its newest checkpoint is {tmp_path}/checkpoints/180: "
        "continue with: purejaxdrl train --resume r (on every host, with its "
        "process flags)\n"
    )


def test_a_run_on_fake_cpu_devices_resumes_with_their_setting(monkeypatch):
    # Run as printed without it, the resume would see one device and stop.
    from purejaxdrl.cli.train import summary

    config = pjd.load_preset("cartpole").config
    result = types.SimpleNamespace(
        mean_return=20.0, eval_return=float("nan"), stopped_by="SIGTERM",
        run_dir="runs/r", updates=8, num_devices=4, env_steps=4096,
        compile_seconds=1.0, steps_per_second=1e4, history=[],
        steps_per_second_per_device=1e4 / 4,
    )  # fmt: skip
    monkeypatch.setattr(jax, "default_backend", lambda: "cpu")
    monkeypatch.setattr(jax, "local_device_count", lambda: 4)
    assert (
        "  checkpoint saved; continue with: JAX_NUM_CPU_DEVICES=4 purejaxdrl train "
        "--resume runs/r\n"
    ) in summary(config, None, result, wall=2.0)
    done = types.SimpleNamespace(
        **vars(result)
        | {"stopped_by": None, "steps_per_second": math.nan}
        | {"updates": config.num_updates}  # already complete
    )
    assert (
        "to train on, raise the budget: JAX_NUM_CPU_DEVICES=4 purejaxdrl train "
        "--resume runs/r --total-steps N --override"
    ) in summary(config, None, done, wall=2.0)
    # On a GPU, or one CPU device, the command alone.
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert "continue with: purejaxdrl train --resume runs/r\n" in summary(
        config, None, result, wall=2.0
    )


def test_a_resume_command_names_the_run_s_fake_devices_not_the_process_s():
    from purejaxdrl.parallel import resume_command

    # The tests fake 8 CPU devices; a run on 1 needs no setting to resume.
    assert jax.local_device_count() > 2
    assert resume_command("train", "r") == "purejaxdrl train --resume r"
    assert resume_command("train", "r", " --x", 2).startswith("JAX_NUM_CPU_DEVICES=2 ")
    everything = f"JAX_NUM_CPU_DEVICES={jax.local_device_count()} purejaxdrl sweep"
    assert resume_command("sweep", "r", devices=0).startswith(everything)
