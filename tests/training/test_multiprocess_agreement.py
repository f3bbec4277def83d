"""Processes of one run agree on its config, and one that fails ends at once.

Two processes on loopback, as in test_multiprocess.py, stopped before they
compile anything.
"""

import os
import pathlib
import subprocess
import sys
import time

import pytest
import yaml

from purejaxdrl.config import to_dict
from purejaxdrl.training.config import TrainConfig
from tests.helpers import free_port


def _cluster(port: int, i: int, count: int = 2) -> list[str]:
    return ["--coordinator", f"127.0.0.1:{port}", "--num-processes", str(count),
            "--process-id", str(i)]  # fmt: skip


def _run_pair(
    args: list[list[str]], cwd: pathlib.Path, counts: tuple[int, int] = (2, 2)
) -> list[tuple[int, str]]:
    """(status, output) of `python -m purejaxdrl.cli` with each process's args.

    `counts`: each process's --num-processes.
    """
    port = free_port()
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}  # fmt: skip
    logs = [cwd / f"p{i}.log" for i in range(2)]
    procs = []
    for i, (extra, log) in enumerate(zip(args, logs, strict=True)):
        with log.open("w") as out:
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "purejaxdrl.cli",
                        *extra,
                        *_cluster(port, i, counts[i]),
                    ],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=env,
                    cwd=cwd,
                )  # fmt: skip
            )
    try:
        return [
            (p.wait(timeout=150), log.read_text())
            for p, log in zip(procs, logs, strict=True)
        ]
    finally:
        for p in procs:
            p.kill()


def _lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if not line.startswith("[Gloo]")]


@pytest.mark.timeout(200)
def test_processes_with_different_flags_both_stop_with_one_line(tmp_path):
    # Without the check, each process trained its own replica of the learner
    # with its own learning rate, silently; config.yaml had process 0's.
    run = ["train", "--num-envs", "8", "--total-steps", "1024", "--quiet",
           "--run-dir", str(tmp_path / "runs")]  # fmt: skip
    done = _run_pair([run, [*run, "--ppo.learning-rate", "0.1"]], tmp_path)
    expected = (
        "purejaxdrl: error: process 1's config differs from process 0's: "
        "ppo.learning_rate 0.1 vs 0.00025; run every process with the same flags."
    )
    for status, log in done:
        assert status == 2, log[-3000:]
        assert _lines(log) == [expected], log[-3000:]
    assert not (tmp_path / "runs").exists()  # stopped before making the run


@pytest.mark.timeout(200)
def test_a_resume_with_different_checkpoint_flags_stops_both(tmp_path):
    # Checkpoint flags may change on a resume; given to one process only, the
    # processes used to save at different updates: an orbax assertion, then
    # a C++ abort (134). config.yaml alone is all a resume reads this early.
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    text = yaml.safe_dump(to_dict(TrainConfig(num_envs=8)), sort_keys=False)
    (run_dir / "config.yaml").write_text(text)
    resume = ["train", "--resume", str(run_dir), "--quiet"]
    done = _run_pair([resume, [*resume, "--checkpoint.every", "3"]], tmp_path)
    for status, log in done:
        assert status == 2, log[-3000:]
        (line,) = _lines(log)
        assert line.startswith(
            "purejaxdrl: error: process 1's config differs from process 0's: "
            "checkpoint.every 3 vs "
        ), line
    assert sorted(p.name for p in run_dir.iterdir()) == ["config.yaml"]


# Process 1 raises an error no handler expects once joined; process 0 waits.
_RAISES = """
import sys, time
from purejaxdrl import cli
from purejaxdrl.cli import train
from purejaxdrl.cli.early_signals import EarlySignals

def train_command(argv):
    train._join_processes(argv, EarlySignals())
    print("joined at", time.time(), flush=True)
    if "--process-id" in argv and argv[argv.index("--process-id") + 1] == "1":
        raise RuntimeError("a bug")
    time.sleep(120)

train.train_command = train_command
sys.exit(cli.main(["train", *sys.argv[1:]]))
"""


@pytest.mark.timeout(200)
def test_an_unexpected_error_in_a_joined_process_ends_it_at_once(tmp_path):
    # Left to interpreter shutdown, the process waited in JAX's shutdown
    # barrier for its peer, then aborted with a C++ stack dump (134).
    port = free_port()
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RAISES, *_cluster(port, i)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            text=True,
        )  # fmt: skip
        for i in range(2)
    ]
    try:
        out, _ = procs[1].communicate(timeout=100)
        ended = time.time()
    finally:
        for p in procs:
            p.kill()
    assert procs[1].returncode == 1, out[-3000:]
    assert "Traceback" in out and "RuntimeError: a bug" in out, out[-3000:]
    # Timed from the join, not from the start (importing JAX: 20 s and more
    # under load).
    joined = float(out.partition("joined at ")[2].split()[0])
    assert "Check failure" not in out and ended - joined < 60, out[-3000:]


def _agreeing(monkeypatch):
    """`agree_on_run` as process 1 of 2, its first call's text process 0's."""
    from purejaxdrl.cli import run_agreement

    texts = []

    def gather_text(name: str, text: str) -> list[str]:
        texts.append(text)
        return [texts[0], text]

    monkeypatch.setattr(run_agreement, "gather_text", gather_text)
    return run_agreement.agree_on_run


def _args(resume=None):
    import types

    return types.SimpleNamespace(no_files=False, override=False, resume=resume)


def test_equal_configs_agree_whatever_their_options_order(monkeypatch):
    # The processes' texts are compared as they are: equal dicts given in
    # another order (--env.option a=1 --env.option b=2, and reversed) must
    # make equal texts, and a real difference is named.
    from purejaxdrl.cli.args import UsageError
    from purejaxdrl.training.config import EnvConfig

    def config(options: dict, seed: int = 0) -> TrainConfig:
        return TrainConfig(env=EnvConfig(id="CartPole-v1", options=options), seed=seed)

    agree = _agreeing(monkeypatch)
    agree(_args(), config({"a": 1, "b": 2}))
    agree(_args(), config({"b": 2, "a": 1}))
    with pytest.raises(UsageError, match="process 1's config differs .*: seed 7 vs 0"):
        agree(_args(), config({"a": 1, "b": 2}, seed=7))


def _run_with_checkpoints(path: pathlib.Path, steps: list[int]) -> pathlib.Path:
    for step in steps:
        (path / "checkpoints" / str(step)).mkdir(parents=True)
    (path / "checkpoints" / "24.orbax-checkpoint-tmp-1").mkdir()  # not saved yet
    return path


def test_resumes_spelled_differently_agree_on_the_same_checkpoint(
    monkeypatch, tmp_path
):
    # Each host may reach the shared folder by its own path.
    a = _run_with_checkpoints(tmp_path / "a", [8, 16])
    b = _run_with_checkpoints(tmp_path / "b", [8, 16])
    agree = _agreeing(monkeypatch)
    agree(_args(str(a)), TrainConfig())
    agree(_args(f"{b}/"), TrainConfig())


def test_resumes_from_different_checkpoints_stop_every_process(monkeypatch, tmp_path):
    # Not a shared filesystem (or a copy on one host): process 0 restored
    # update 16 and found the run complete, process 1 update 8 and waited in
    # a collective; 0 aborted in JAX's shutdown barrier (134), nothing said why.
    from purejaxdrl.cli.args import UsageError

    a = _run_with_checkpoints(tmp_path / "a", [8, 16])
    b = _run_with_checkpoints(tmp_path / "b", [8])
    agree = _agreeing(monkeypatch)
    agree(_args(str(a)), TrainConfig())
    with pytest.raises(UsageError) as e:
        agree(_args(str(b)), TrainConfig())
    assert str(e.value) == (
        f"process 1 resumes {b}, whose newest checkpoint is update 8 but process 0 "
        f"{a}, whose newest checkpoint is update 16; give every process the same "
        "--resume RUN_DIR (a shared filesystem)."
    )
    empty = tmp_path / "empty"
    with pytest.raises(UsageError, match=f"{empty}, whose newest checkpoint is none"):
        agree(_args(str(empty)), TrainConfig())


@pytest.mark.timeout(200)
def test_a_resumed_process_and_a_fresh_one_both_stop_with_one_line(tmp_path):
    # The resumed config equals the fresh one (but run_dir): both passed the
    # check, then the fresh process waited in the broadcast of its run
    # directory and the resumed one in its restore, for ever (SIGTERM too).
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    text = yaml.safe_dump(to_dict(TrainConfig(num_envs=8)), sort_keys=False)
    (run_dir / "config.yaml").write_text(text)
    fresh = ["train", "--num-envs", "8", "--quiet", "--run-dir", str(tmp_path / "r")]
    done = _run_pair([["train", "--resume", str(run_dir), "--quiet"], fresh], tmp_path)
    expected = (
        f"purejaxdrl: error: process 1 starts a new run but process 0 resumes "
        f"{run_dir}; give every process the same --resume RUN_DIR (a shared "
        "filesystem), or none to start a new run."
    )
    for status, log in done:
        assert status == 2, log[-3000:]
        assert _lines(log) == [expected], log[-3000:]
    assert not (tmp_path / "r").exists()


@pytest.mark.timeout(200)
def test_the_same_bad_flag_on_every_process_ends_each_with_its_line(tmp_path):
    # Process 0 hosts the coordination service: when it exited first, a peer
    # still reading its flags was aborted by JAX (134, a C++ stack dump). Here
    # process 1 is the slower one: its --env.imports module takes a second.
    (tmp_path / "slow_module.py").write_text("import time\ntime.sleep(1.5)\n")
    run = ["train", "--num-envs", "8", "--checkpoint.keep", "0", "--quiet"]
    slow = [*run, "--env.imports", "slow_module"]
    done = _run_pair([run, slow], tmp_path)
    for status, log in done:
        assert status == 2, log[-3000:]
        (line,) = _lines(log)
        assert line.startswith("purejaxdrl: error: checkpoint.keep=0 must be >= 1")


@pytest.mark.timeout(200)
def test_process_0_stopping_alone_stops_its_peer_with_one_line(tmp_path):
    # Process 0 hosts the coordination service: exiting while a peer ran
    # (waiting for 0's config here) aborted the peer with a C++ stack dump.
    run = ["train", "--num-envs", "8", "--total-steps", "1024", "--quiet",
           "--no-files"]  # fmt: skip
    done = _run_pair([[*run, "--checkpoint.keep", "0"], run], tmp_path)
    (status, log), (peer_status, peer_log) = done
    assert status == 2, log[-3000:]
    (line,) = _lines(log)
    assert line.startswith("purejaxdrl: error: checkpoint.keep=0 must be >= 1")
    assert peer_status == 1, peer_log[-3000:]
    (line,) = _lines(peer_log)
    assert line == (
        "purejaxdrl: error: process 1 of 2 stopped because the run failed "
        "elsewhere (a process died or became unreachable): process 0 stopped; "
        "its output says why"
    )


@pytest.mark.timeout(200)
def test_a_process_given_another_num_processes_stops_every_process(tmp_path):
    # JAX joins process 1 of "3" into process 0's run of 2: it trained, its
    # wrong flag never reported.
    run = ["train", "--num-envs", "8", "--total-steps", "1024", "--quiet",
           "--no-files"]  # fmt: skip
    done = _run_pair([run, run], tmp_path, counts=(2, 3))
    expected = (
        "purejaxdrl: error: process 1 was given --num-processes 3 but process 0 "
        "--num-processes 2; give every process the same --num-processes."
    )
    for status, log in done:
        assert status == 2, log[-3000:]
        assert _lines(log) == [expected], log[-3000:]
