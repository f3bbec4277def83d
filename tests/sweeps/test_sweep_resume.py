"""A replay sweep killed mid-run and resumed ends as the sweep run straight through."""

import json
import os
import pathlib
import signal
import subprocess
import time

import flax.serialization
import jax
import numpy as np
import pytest
import yaml

from purejaxdrl.sweeps.program import resume_sweep
from tests.helpers import cli_command, env_of_this_process_devices

pytestmark = pytest.mark.timeout(600)

# DQN on CartPole: 2 settings x 2 seeds, 300 updates of 16 envs x 4 steps in 15
# chunks, a replay of 2,048 transitions (overwritten ~9 times), a network of
# one layer of 32 without a dueling head (cheaper compiles). Memory for two
# runs at a time: 2 batches of 2, one after the other.
SWEEP = [
    "sweep", "--env", "cartpole", "--algo", "dqn", "--seeds", "2",
    "--grid", "learning_rate=1e-3,3e-4", "--total-steps", "19200",
    "--num-logs", "15", "--dqn.buffer-size", "2048", "--dqn.min-replay", "512",
    "--dqn.updates-per-step", "1", "--network.hidden-sizes", "32",
    "--dqn.dueling", "false", "--devices", "1", "--device-memory", "400kB",
    "--quiet",
]  # fmt: skip


def _sweep_dir(root: pathlib.Path) -> pathlib.Path:
    (path,) = root.iterdir()
    return path


def _committed(root: pathlib.Path, batch: str) -> list[pathlib.Path]:
    return list(root.glob(f"*/checkpoints/{batch}/*/purejaxdrl.sha256"))


def _records(path: pathlib.Path, run: int) -> list[dict]:
    lines = (path / "runs" / f"run-{run:04d}.jsonl").read_text().splitlines()
    # Everything but the wall-clock time since the batch started.
    return [{k: v for k, v in json.loads(x).items() if k != "time"} for x in lines]


def _params(path: pathlib.Path, run: int) -> list[np.ndarray]:
    data = (path / "params" / f"run-{run:04d}.msgpack").read_bytes()
    return [
        np.asarray(x) for x in jax.tree.leaves(flax.serialization.msgpack_restore(data))
    ]


def test_killed_replay_sweep_resumes_exactly(tmp_path, capsys):
    # Only the killed sweep is a process of its own (a SIGKILL needs one): the
    # run straight through and the resume run in this process, the first
    # compiling into the session's cache, where the killed process finds its
    # programs (same XLA flags, same programs: no compile there).
    from purejaxdrl import cli

    cache = pathlib.Path(os.environ["JAX_COMPILATION_CACHE_DIR"])
    straight_root, killed_root = tmp_path / "straight", tmp_path / "killed"
    assert cli.main([*SWEEP, "--run-dir", str(straight_root)]) == 0
    straight = _sweep_dir(straight_root)
    (layout,) = yaml.safe_load((straight / "sweep.yaml").read_text())["layouts"]
    assert (layout["batch_size"], layout["num_batches"]) == (2, 2)

    proc = subprocess.Popen(
        cli_command(*SWEEP, "--run-dir", str(killed_root), cache=cache),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env_of_this_process_devices(),
    )
    deadline = time.monotonic() + 240
    # Killed while the second batch trains: the first is read back, the
    # second restarts from its checkpoint.
    while len(_committed(killed_root, "p0-b1")) < 2:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no checkpoint of the second batch"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed = _sweep_dir(killed_root)
    assert not (killed / "summary.md").exists()  # really killed mid-sweep

    capsys.readouterr()
    assert cli.main(["sweep", "--resume", str(killed)]) == 0
    err = capsys.readouterr().err
    assert "batch 1 of 2 already trained" in err
    assert "batch 2 resumed at update" in err
    for run in range(4):
        assert _records(killed, run) == _records(straight, run)
        for a, b in zip(_params(killed, run), _params(straight, run), strict=True):
            np.testing.assert_array_equal(a, b)  # bit for bit
    assert not (killed / "checkpoints").exists()

    # Refused before anything compiles.
    assert cli.main(["sweep", "--resume", str(killed), "--no-compile-cache"]) == 2
    assert "this sweep finished" in capsys.readouterr().err


def test_resume_of_a_directory_that_is_not_a_sweep_is_refused(tmp_path):
    from purejaxdrl.config import ConfigError

    with pytest.raises(ConfigError, match="no sweep.yaml there"):
        resume_sweep(tmp_path)


def test_sigint_saves_the_batch_exits_0_and_resume_finishes_it(tmp_path, capsys):
    # Ctrl-C stops a sweep that writes its directory after the current chunk:
    # the batch's state saved with its records (no half-written checkpoint,
    # no orbax traceback), exit 0 and the resume command; the resume ends it,
    # in this process (a launch fewer), from the programs the stopped process
    # compiled into the session's cache.
    from purejaxdrl import cli

    cache = pathlib.Path(os.environ["JAX_COMPILATION_CACHE_DIR"])
    root = tmp_path / "runs"
    # 400 updates of 4 envs x 32 steps in 40 chunks: the stop comes after the
    # first chunk's checkpoint, with 39 chunks (each saved) still to go. A
    # network of one layer of 32: cheaper compiles.
    args = ["sweep", "--env", "cartpole", "--seeds", "2", "--num-envs", "4",
            "--unroll-length", "32", "--total-steps", "51200", "--num-logs",
            "40", "--network.hidden-sizes", "32", "--devices", "1", "--quiet",
            "--run-dir", str(root)]  # fmt: skip
    proc = subprocess.Popen(
        cli_command(*args, cache=cache),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env_of_this_process_devices(),
    )
    deadline = time.monotonic() + 240
    while not _committed(root, "p0-b0"):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no checkpoint"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    path = _sweep_dir(root)
    # A sweep on one device: no fake device setting, however many the child has.
    resume = f"purejaxdrl sweep --resume {path}"
    assert f"continue with: {resume}" in err
    assert "Traceback" not in err and not list(path.rglob("*orbax-checkpoint-tmp*"))
    capsys.readouterr()
    assert cli.main(["sweep", "--resume", str(path)]) == 0
    assert "batch 1 resumed at update" in capsys.readouterr().err
    # Every chunk recorded once, through the stop, to the end of the budget.
    for run in (0, 1):
        updates = [r["updates"] for r in _records(path, run)]
        assert updates == sorted(set(updates)) and updates[-1] == 400
        # Training time goes on from the stop, so steps/s counts all of it.
        lines = (path / "runs" / f"run-{run:04d}.jsonl").read_text().splitlines()
        times = [json.loads(x)["time"] for x in lines]
        assert times == sorted(times)
    meta = yaml.safe_load((path / "sweep.yaml").read_text())
    assert meta["train_seconds"] >= times[-1]


def _small_base(run_dir: pathlib.Path, every: int):
    """CartPole PPO, 4 updates of 8 envs x 128 steps in 4 chunks, on 1 device."""
    import purejaxdrl as pjd

    return pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"total_steps": 1024 * 4, "num_envs": 8, "num_logs": 4, "devices": 1,
         "run_dir": str(run_dir), "checkpoint": {"every": every}},
    )  # fmt: skip


def _interrupt(line: str) -> None:
    if "update 1 of 4" in line:  # chunk 2 is dispatched by then
        signal.raise_signal(signal.SIGINT)


def test_a_sweep_with_checkpoint_every_0_saves_on_a_stop_and_resumes_exactly(
    tmp_path, capsys
):
    # checkpoint.every 0 saves no due checkpoint, but a stop signal still saves
    # the batch (as `train` does, and as the help and the start line promise).
    import purejaxdrl as pjd
    from purejaxdrl.sweeps.program import sweep

    straight = sweep(_small_base(tmp_path / "a", 0), seeds=2, write_files=True)
    # Caught as pjd.SweepStopped (the class pjd.sweeps exports too), its
    # directory in `path` and the Python call beside the command.
    assert pjd.SweepStopped is pjd.sweeps.SweepStopped
    with pytest.raises(pjd.SweepStopped) as stopped:
        sweep(_small_base(tmp_path / "b", 0), seeds=2, write_files=True,
              notify=_interrupt)  # fmt: skip
    path = _sweep_dir(tmp_path / "b")
    assert stopped.value.path == path
    assert str(stopped.value) == (
        "stopped by SIGINT after update 2 of 4; continue with: "
        f"pjd.resume_sweep({str(path)!r}) (purejaxdrl "
        f"sweep --resume {path})"
    )
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert [p.name for p in (path / "checkpoints" / "p0-b0").iterdir()] == ["2"]
    # sweep.yaml's base holds the swept algorithm's section only (as a run's
    # config.yaml), and the resume reads the sweep back from it.
    base = yaml.safe_load((path / "sweep.yaml").read_text())["base"]
    assert base["algo"] == "ppo" and "ppo" in base
    assert not {"dqn", "impala", "sac"} & set(base)
    # A budget its batch of 2 runs on 1 device does not fit: refused in one
    # line, before anything compiles (sw21 #1: it was ignored silently).
    _refuses_a_budget_below_its_batch(path, capsys)
    messages: list[str] = []
    resume_sweep(path, notify=messages.append)
    assert "sweep: batch 1 resumed at update 2" in messages
    for run in (0, 1):
        assert _records(path, run) == _records(straight.run_dir, run)
        for a, b in zip(
            _params(path, run), _params(straight.run_dir, run), strict=True
        ):
            np.testing.assert_array_equal(a, b)  # bit for bit
    assert not (path / "checkpoints").exists()


def _refuses_a_budget_below_its_batch(path: pathlib.Path, capsys) -> None:
    from purejaxdrl import cli
    from purejaxdrl.config import ConfigError

    layout = json.loads((path / "checkpoints" / "p0.layout.json").read_text())
    need = 2 * layout["run_bytes"]
    capsys.readouterr()
    argv = ["sweep", "--resume", str(path), "--device-memory", "1KB"]
    assert cli.main([*argv, "--no-compile-cache"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        f"purejaxdrl: error: {path}: its checkpoints hold batches of 2 runs, 2 per "
        "device (~"
    )
    assert (
        "more than a budget of 1 KiB per device holds; resume without "
        "--device-memory (device_memory=None in Python) where they fit, or with "
        f"--device-memory {-(-need // 1024)}KiB (device_memory={need} in Python) "
        "or more"
    ) in err
    with pytest.raises(ConfigError, match="cannot split its recorded batches"):
        resume_sweep(path, device_memory=need - 1, console=False)


def test_a_resume_keeps_its_recorded_batches_and_says_so(tmp_path):
    # A sweep laid out in batches of one run (a budget of 1 byte), stopped and
    # resumed with no budget (room for both runs at once): the checkpoints
    # hold batches of 1, so they are kept, and the resume says so.
    import purejaxdrl as pjd
    from purejaxdrl.sweeps.program import sweep

    base = _small_base(tmp_path, 1)
    with pytest.raises(pjd.SweepStopped) as stopped:
        sweep(base, seeds=2, write_files=True, device_memory=1, notify=_interrupt)
    messages: list[str] = []
    resumed = resume_sweep(stopped.value.path, notify=messages.append)
    assert (
        "sweep: the sweep keeps its recorded batches of 1 run (its checkpoints "
        "hold them); "
        "a memory budget applies to programs not started yet"
    ) in messages
    assert [(x.batch_size, x.num_batches) for x in resumed.layouts] == [(1, 2)]
    assert "sweep: batch 2 of 2 done" in messages


def test_a_sweep_without_files_is_interrupted_not_promised_a_save(tmp_path):
    # Nowhere to save: Ctrl-C interrupts it, rather than announcing a save
    # after the current chunk and training on to the end.
    from purejaxdrl.sweeps.program import sweep

    with pytest.raises(KeyboardInterrupt):
        sweep(_small_base(tmp_path, 1), seeds=1, notify=_interrupt)


def _visible(monkeypatch, n: int) -> None:
    """This process shows the sweep only its first `n` CPU devices."""
    devices = sorted(jax.local_devices(), key=lambda d: d.id)[:n]
    monkeypatch.setattr(jax, "local_devices", lambda *args, **kwargs: devices)
    monkeypatch.setattr(jax, "local_device_count", lambda *args, **kwargs: n)


def test_a_sweep_laid_out_on_2_devices_resumes_where_4_are_visible(
    tmp_path, monkeypatch
):
    # A sweep left to choose its devices (devices: 0) where 2 were visible,
    # stopped, and resumed where 4 are (a preempted job rescheduled on a bigger
    # machine): its checkpoints hold a 2 x 1 layout, so it resumes on the
    # first 2 devices, says so, and ends as the sweep run straight through.
    # It was refused, as 4 devices would lay it out 2 x 2.
    import purejaxdrl as pjd
    from purejaxdrl.sweeps.program import sweep

    two = pjd.apply_overrides(_small_base(tmp_path / "a", 1), {"devices": 2})
    straight = sweep(two, seeds=2, write_files=True)
    assert [(x.sweep, x.data) for x in straight.layouts] == [(2, 1)]
    base = pjd.apply_overrides(_small_base(tmp_path / "b", 1), {"devices": 0})
    with monkeypatch.context() as patch:
        _visible(patch, 2)
        with pytest.raises(pjd.SweepStopped):
            sweep(base, seeds=2, write_files=True, notify=_interrupt)
    path = _sweep_dir(tmp_path / "b")
    messages: list[str] = []
    with monkeypatch.context() as patch:
        _visible(patch, 4)
        resumed = resume_sweep(path, notify=messages.append)
    assert (
        "sweep: resuming on 2 of 4 cpu devices: the sweep's checkpoints hold its "
        "2 x 1 (sweep x data) layout."
    ) in messages
    assert "sweep: batch 1 resumed at update 2" in messages
    assert [(x.sweep, x.data) for x in resumed.layouts] == [(2, 1)]
    assert resumed.table() == straight.table()
    for run in (0, 1):
        assert _records(path, run) == _records(straight.run_dir, run)
        for a, b in zip(
            _params(path, run), _params(straight.run_dir, run), strict=True
        ):
            np.testing.assert_array_equal(a, b)
