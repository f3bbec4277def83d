"""How a stopped sweep or PBT run, and the resume / load errors, say to go on.

A Python caller is told the Python call beside the command (as the policy
functions' errors do); the command line, which alone reaches its own stop
message, names only the command.
"""

import pickle

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.parallel import fake_devices_setting
from purejaxdrl.sweeps import program
from purejaxdrl.sweeps.batch import resume_call
from purejaxdrl.sweeps.pbt import population
from purejaxdrl.sweeps.pbt.store import PBTCheckpoint
from purejaxdrl.training import opened_run
from purejaxdrl.training.checkpoint import CheckpointError
from purejaxdrl.training.log_writes import LogWriteError

REASON = "stopped by SIGINT after update 2 of 4"


def test_sweep_stopped_is_public_with_its_path_and_both_spellings(tmp_path):
    assert "SweepStopped" in pjd.__all__ and pjd.SweepStopped is pjd.sweeps.SweepStopped
    e = pjd.SweepStopped(REASON, tmp_path, "pbt")
    assert e.path == tmp_path and e.reason == REASON and e.command == "pbt"
    assert str(e) == (
        f"{REASON}; continue with: pjd.resume_pbt({str(tmp_path)!r}) "
        f"({fake_devices_setting(0)}purejaxdrl pbt --resume {tmp_path})"
    )  # devices=0 (its default): all the process's, as a sweep's default
    one = pjd.SweepStopped(REASON, tmp_path, "pbt", devices=1)
    assert str(one).endswith(f"(purejaxdrl pbt --resume {tmp_path})")
    assert str(pickle.loads(pickle.dumps(one))) == str(one)
    again = pickle.loads(pickle.dumps(e))  # e.g. across processes: path kept
    assert (str(again), again.path) == (str(e), e.path)
    assert str(pjd.SweepStopped(REASON)) == REASON  # inside a batch: no path yet


@pytest.mark.parametrize(("name", "module"), [("sweep", program), ("pbt", population)])
def test_the_command_line_names_only_the_command_to_continue(
    name, module, tmp_path, monkeypatch, capsys
):
    def stopped(*args, **kwargs):
        raise pjd.SweepStopped(REASON, tmp_path, name)

    monkeypatch.setattr(module, name, stopped)
    argv = [name, "--no-files", "--quiet", "--no-compile-cache"]
    argv += ["--explore", "learning_rate=loguniform:1e-4:1e-2"] if name == "pbt" else []
    assert cli.main(argv) == 0
    assert capsys.readouterr().err == (
        f"purejaxdrl: {name} {REASON}; continue with: "
        f"{fake_devices_setting(0)}purejaxdrl {name} --resume {tmp_path}\n"
    )


@pytest.mark.parametrize("error", [CheckpointError, LogWriteError])
@pytest.mark.parametrize(("name", "module"), [("sweep", program), ("pbt", population)])
def test_a_failed_save_or_log_write_is_one_line_and_exit_1(
    name, module, error, tmp_path, monkeypatch, capsys
):
    # A full disk under `sweep` printed the save's line at the foot of two
    # tracebacks (the docs said one line, as `train` gives).
    line = f"saving a checkpoint in {tmp_path} failed: No space left on device; ..."

    def fails(*args, **kwargs):
        raise error(line)

    monkeypatch.setattr(module, name, fails)
    argv = [name, "--no-files", "--quiet", "--no-compile-cache"]
    argv += ["--explore", "learning_rate=loguniform:1e-4:1e-2"] if name == "pbt" else []
    assert cli.main(argv) == 1
    assert capsys.readouterr().err == f"purejaxdrl: error: {line}\n"


def test_a_population_on_fake_cpu_devices_resumes_with_their_setting(
    tmp_path, monkeypatch, capsys
):
    def stopped(*args, **kwargs):
        raise pjd.SweepStopped(REASON, tmp_path, "sweep")

    monkeypatch.setattr(program, "sweep", stopped)
    monkeypatch.setattr(jax, "default_backend", lambda: "cpu")
    monkeypatch.setattr(jax, "local_device_count", lambda: 2)
    assert cli.main(["sweep", "--no-files", "--quiet", "--no-compile-cache"]) == 0
    assert capsys.readouterr().err == (
        f"purejaxdrl: sweep {REASON}; continue with: "
        f"JAX_NUM_CPU_DEVICES=2 purejaxdrl sweep --resume {tmp_path}\n"
    )
    assert str(pjd.SweepStopped(REASON, tmp_path, "pbt")).endswith(
        f"(JAX_NUM_CPU_DEVICES=2 purejaxdrl pbt --resume {tmp_path})"
    )


def _message(call, *args) -> str:
    with pytest.raises(pjd.ConfigError) as e:
        call(*args)
    return str(e.value)


def test_resume_and_load_errors_name_the_python_call_too(tmp_path):
    empty, run, pbt_dir, sweep_dir = (tmp_path / n for n in ("e", "r", "p", "s"))
    for folder in (empty, run, pbt_dir, sweep_dir):
        folder.mkdir()
    (run / "config.yaml").write_text("algo: ppo\n")
    (pbt_dir / "pbt.yaml").write_text("status: running\n")
    (sweep_dir / "sweep.yaml").write_text("status: running\n")
    assert f"(pjd.resume_pbt({str(pbt_dir)!r}) in Python)" in _message(
        pjd.resume_sweep, pbt_dir
    )
    assert f"(pjd.resume_sweep({str(sweep_dir)!r}) in Python)" in _message(
        pjd.resume_pbt, sweep_dir
    )
    assert f"pjd.train(config, resume={str(run)!r}) in Python" in _message(
        pjd.resume_sweep, run
    )
    assert "pjd.sweep(..., write_files=True) or `purejaxdrl sweep`" in _message(
        pjd.resume_sweep, empty
    )
    assert "pjd.sweep(..., write_files=True) or `purejaxdrl sweep`" in _message(
        pjd.load_sweep, empty
    )
    assert "pjd.pbt(..., write_files=True) or `purejaxdrl pbt`" in _message(
        pjd.load_pbt, empty
    )
    # Stopped (or still training): the resume that finishes it, both ways.
    assert (
        f"`purejaxdrl sweep --resume {sweep_dir}` "
        f"(pjd.resume_sweep({str(sweep_dir)!r}) in Python) finishes it."
    ) in _message(pjd.load_sweep, sweep_dir)
    assert f"(pjd.resume_pbt({str(pbt_dir)!r}) in Python) finishes it." in _message(
        pjd.load_pbt, pbt_dir
    )


def test_the_writing_line_of_a_sweep_on_fake_cpu_devices_keeps_their_setting(
    tmp_path, monkeypatch
):
    # `sweep: writing DIR (if stopped, `CMD` continues it...)`: the command of
    # a sweep on 2 faked CPU devices starts with their setting, or, run as
    # printed, it sees 1 device and its resume is refused. Training is
    # replaced: the line is said before the first program compiles.
    def trained(result, *args):
        return result

    monkeypatch.setattr(program, "_train_plan", trained)
    monkeypatch.setattr(jax, "default_backend", lambda: "cpu")
    said = []
    base = pjd.apply_overrides(
        pjd.TrainConfig(), {"run_dir": str(tmp_path), "devices": 2}
    )
    result = pjd.sweep(base, write_files=True, notify=said.append)
    (line,) = [m for m in said if m.startswith("sweep: writing")]
    again = f"JAX_NUM_CPU_DEVICES=2 purejaxdrl sweep --resume {result.run_dir}"
    assert f"(if stopped, `{again}` continues it" in line


def test_a_sweep_and_a_population_that_write_files_tell_a_failed_save_their_resume(
    tmp_path, monkeypatch
):
    # A failed save's line (`faults.save_failure`) names the command that
    # continues the directory it was saved in: a sweep's said "--resume, with
    # its --logger flags", a train run's (sw19 #1).
    monkeypatch.setattr(opened_run, "_OPENED", [])
    seen = []

    def stops(result, group, runs, label, memory, say, progress, store, stop):
        seen.append(opened_run.resume_command_for(store.directory / "checkpoints"))
        raise pjd.SweepStopped(REASON)

    monkeypatch.setattr(program, "_train_group", stops)
    base = pjd.apply_overrides(pjd.TrainConfig(), {"run_dir": str(tmp_path)})
    with pytest.raises(pjd.SweepStopped) as e:
        pjd.sweep(base, write_files=True, console=False)
    assert seen == [resume_call("sweep", e.value.path)]
    mesh = jax.make_mesh((1,), ("sweep",), devices=jax.devices()[:1])
    members = jax.device_put(np.zeros(2, np.float32), NamedSharding(mesh, P("sweep")))
    PBTCheckpoint(tmp_path / "p", members, {"w": members}, mesh, devices=2)
    assert opened_run.resume_command_for(tmp_path / "p" / "checkpoints") == (
        resume_call("pbt", tmp_path / "p", 2)
    )


def test_resume_of_a_folder_of_runs_names_the_run_inside_it(tmp_path):
    # sw19 #10: `sweep --resume` of the folder a `train --run-dir` made said
    # only "no sweep.yaml there"; a missing path and a file said the same.
    folder = tmp_path / "runs"
    run = folder / "CartPole-v1_ppo_1"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text("algo: ppo\n")
    assert (
        f"--resume {folder}: no sweep.yaml there: it is a folder of runs (--run-dir "
        f"makes each inside it) holding {str(run)!r}, a train run that resumes with "
        f"`purejaxdrl train --resume {run}` (pjd.train(config, resume={str(run)!r}) "
        "in Python); pass a directory that"
    ) in _message(pjd.resume_sweep, folder)
    swept = folder / "sweep_CartPole-v1_ppo_2"  # the command's own kind first
    swept.mkdir()
    (swept / "sweep.yaml").write_text("status: running\n")
    assert (
        f"holding {str(swept)!r} and 1 more, a sweep run that resumes with "
        f"`purejaxdrl sweep --resume {swept}`"
    ) in _message(pjd.resume_sweep, folder)
    assert "absent: no such directory; pass" in _message(
        pjd.resume_pbt, tmp_path / "absent"
    )
    (tmp_path / "notes.txt").write_text("")
    assert "notes.txt: a file, not a directory" in _message(
        pjd.resume_sweep, tmp_path / "notes.txt"
    )


def test_a_relative_directory_is_recorded_absolute(tmp_path, monkeypatch):
    # sw21 #2: a sweep or PBT run resumed as `--resume dB/sweep_...` from its
    # parent folder wrote `load_sweep('dB/...')` into sweep.yaml and summary.md,
    # right only from that folder. Training is replaced: the directories and
    # the results' `run_dir` are what the records are written from.
    monkeypatch.setattr(program, "_train_plan", lambda result, *args: result)
    monkeypatch.setattr(population, "_train", lambda result, *args: result)
    monkeypatch.chdir(tmp_path)
    base = pjd.apply_overrides(pjd.TrainConfig(), {"run_dir": "runs"})
    explore = {"learning_rate": ("loguniform", 1e-4, 1e-3)}
    started = [
        pjd.sweep(base, write_files=True, console=False).run_dir,
        pjd.pbt(base, explore=explore, population=2, write_files=True,
                console=False).run_dir,
    ]  # fmt: skip
    assert all(path.is_absolute() and path.is_dir() for path in started)
    relative = [path.relative_to(tmp_path) for path in started]
    resumed = [
        pjd.resume_sweep(relative[0], console=False).run_dir,
        pjd.resume_pbt(str(relative[1]), console=False).run_dir,
    ]
    assert resumed == started
