"""Many hosts on loopback: processes started as a user starts them on two hosts.

Each process is `purejaxdrl train ... --coordinator --num-processes --process-id`
with 2 fake CPU devices; CPU collectives go through gloo.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import time

import flax.serialization
import jax
import numpy as np
import pytest

from purejaxdrl import cli
from tests.helpers import free_port

RUN = [
    "train",
    "--env",
    "cartpole",
    "--num-envs",
    "8",
    "--unroll-length",
    "16",
    "--ppo.num-minibatches",
    "4",
    "--ppo.num-epochs",
    "2",
    "--ppo.anneal-lr",  # so the budget is not baked into the program: the
    "false",  # kill test reuses the first test's compiled chunk from the cache
    "--env.normalize-observations",
    "true",
]
UPDATES = 3


def _start(
    args: list[str],
    devices: int,
    log: pathlib.Path,
    extra_env: dict[str, str] | None = None,
    cwd: pathlib.Path | None = None,
) -> subprocess.Popen:
    env = {
        **os.environ,
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}",
        **(extra_env or {}),
    }
    with log.open("w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "purejaxdrl.cli", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
        )


def _cluster(port: int, i: int) -> list[str]:
    return [
        "--coordinator",
        f"127.0.0.1:{port}",
        "--num-processes",
        "2",
        "--process-id",
        str(i),
    ]


def _params(run_dir: pathlib.Path) -> np.ndarray:
    (path,) = run_dir.glob("*/params.msgpack")
    tree = flax.serialization.msgpack_restore(path.read_bytes())
    return np.concatenate([np.ravel(x) for x in jax.tree.leaves(tree)])


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> list[str]:
    return ["--compile-cache", str(tmp_path_factory.mktemp("xla"))]


@pytest.mark.timeout(400)
def test_two_processes_match_one_process_with_four_devices(tmp_path, cache):
    steps = 8 * 16 * UPDATES
    run = [*RUN, *cache, "--total-steps", str(steps), "--num-logs", str(UPDATES)]
    run.append("--quiet")
    port = free_port()
    procs = [
        _start(
            [*run, "--run-dir", str(tmp_path / "two"), *_cluster(port, i)],
            2,
            tmp_path / f"two{i}.log",
        )
        for i in range(2)
    ]
    # The one-process run trains in this process meanwhile (a launch fewer),
    # on 4 of its 8 devices, into the session's cache (not the module's).
    one = [*RUN, "--total-steps", str(steps), "--num-logs", str(UPDATES), "--quiet"]
    one += ["--devices", "4", "--run-dir", str(tmp_path / "one")]
    try:
        assert cli.main(one) == 0
        for i, p in enumerate(procs):
            log = (tmp_path / f"two{i}.log").read_text
            assert p.wait(timeout=300) == 0, log()[-3000:]
    finally:
        for p in procs:
            p.kill()

    # Only process 0 wrote a run directory (and printed the summary).
    assert len(list((tmp_path / "two").iterdir())) == 1
    log0 = (tmp_path / "two0.log").read_text()
    assert "4 cpu device(s) in 2 processes" in log0
    assert "done:" not in (tmp_path / "two1.log").read_text()
    np.testing.assert_allclose(
        _params(tmp_path / "two"), _params(tmp_path / "one"), atol=1e-5, rtol=0
    )


@pytest.mark.timeout(400)
def test_killed_process_stops_the_other_within_60_seconds(tmp_path, cache):
    updates = 10**6  # far more than it will run; one update per chunk as above
    steps = str(8 * 16 * updates)
    run = [*RUN, *cache, "--total-steps", steps, "--num-logs", str(updates)]
    run.append("--no-files")
    port = free_port()
    logs = [tmp_path / f"p{i}.log" for i in range(2)]
    procs = [_start([*run, *_cluster(port, i)], 2, logs[i]) for i in range(2)]
    try:
        deadline = time.monotonic() + 240
        while "steps/s" not in logs[0].read_text():  # both are training now
            assert procs[0].poll() is None, logs[0].read_text()[-3000:]
            assert time.monotonic() < deadline, "training never started"
            time.sleep(0.5)
        procs[1].kill()
        killed = time.monotonic()
        status = procs[0].wait(timeout=60)
        elapsed = time.monotonic() - killed
    finally:
        for p in procs:
            p.kill()
    log = logs[0].read_text()
    assert status != 0 and elapsed < 60, log[-3000:]
    # Usually our one line (a collective failed, or the watchdog saw no
    # heartbeat); when the main thread is blocked in a way that starves the
    # watchdog, JAX's coordination service aborts the process itself, with its
    # own message naming the cause. Either way: stopped, bounded, and said why.
    ours = "stopped because the run failed elsewhere" in log
    jaxs = "This most likely indicates that another task died" in log
    assert ours or jaxs, log[-3000:]


# A stand-in for JAX's coordination client whose calls fail once "JAX" has begun
# shutting it down, and an exit handler registered before purejaxdrl's, as
# JAX's is (atexit runs the last registered first). Without the watchdog
# stopping first, a beat lands in that half-second window and the process exits
# 1 saying a peer failed, as one CI run did after training finished well.
_SHUTDOWN_RACE = """
import atexit, time
import jax
from jax._src import distributed
from purejaxdrl.cli import processes

shut = False

class Client:
    def key_value_set(self, key, value, allow_overwrite=False):
        if shut:
            raise RuntimeError("CANCELLED: the client is shutting down")

    def shutdown(self):
        pass

def jax_shutdown():
    global shut
    shut = True
    time.sleep(0.5)

jax.devices()  # the backend starts before the stand-in client is set
atexit.register(jax_shutdown)
distributed.global_state.client = Client()
processes._start_watchdog(timeout=60, interval=0.01)
time.sleep(0.1)
"""


def test_the_watchdog_stops_before_jax_shuts_its_client_down():
    done = subprocess.run(
        [sys.executable, "-c", _SHUTDOWN_RACE],
        capture_output=True,
        text=True,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "failed elsewhere" not in done.stderr


@pytest.mark.timeout(300)
def test_a_user_module_that_touches_jax_at_import_joins_first(tmp_path, cache):
    # `--env.imports` is imported to read the preset, before the run's flags
    # are all parsed: the processes join before it, or its module-level array
    # starts the backend and `jax.distributed` refuses to start after it.
    (tmp_path / "uses_jax.py").write_text(
        "import jax.numpy as jnp\nGOAL = jnp.ones(3)\n"
    )
    port = free_port()
    args = ["train", "--env.imports", "uses_jax", "--num-envs", "4",
            "--unroll-length", "8", "--total-steps", "64", "--no-files",
            "--quiet", "--devices", "1", "--coordinator", f"127.0.0.1:{port}",
            "--num-processes", "1", "--process-id", "0", *cache]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "purejaxdrl.cli", *args],
        cwd=tmp_path, capture_output=True, text=True, timeout=280,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def _one_line_errors(log: str) -> list[str]:
    lines = [line for line in log.splitlines() if not line.startswith("[Gloo]")]
    assert len(lines) == 1 and "Traceback" not in log, log[-3000:]
    return lines


@pytest.mark.timeout(120)
def test_a_process_whose_peers_never_come_says_so_within_its_init_timeout(tmp_path):
    # Process 1 of 2, and no process 0: JAX would wait 300 s, then abort with
    # a C++ stack dump (exit 134).
    port = free_port()
    args = ["train", "--no-files", "--quiet", *_cluster(port, 1)]
    args += ["--init-timeout", "2"]
    started = time.monotonic()  # its start-up too: 20 s and more under load
    done = subprocess.run(
        [sys.executable, "-m", "purejaxdrl.cli", *args],
        capture_output=True, text=True, timeout=100,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]
    assert time.monotonic() - started < 90  # not JAX's 300 s
    (line,) = _one_line_errors(done.stderr)
    assert line.startswith(
        f"purejaxdrl: error: process 1 of 2 could not join the run at coordinator "
        f"127.0.0.1:{port} within 2 s: check that"
    ), line


@pytest.mark.timeout(300)
def test_a_flag_error_after_joining_exits_2_and_stops_the_peer(tmp_path, cache):
    # The processes join before the flags are all read (a user's module may
    # touch JAX): the bad one used to abort in JAX's shutdown barrier (134).
    steps = str(4 * 8 * 10**6)
    run = ["train", "--num-envs", "4", "--unroll-length", "8", "--total-steps",
           steps, "--num-logs", str(10**6), "--no-files", "--quiet", "--devices",
           "1", *cache]  # fmt: skip
    port = free_port()
    logs = [tmp_path / f"p{i}.log" for i in range(2)]
    good = _start([*run, *_cluster(port, 0)], 1, logs[0])
    bad = _start([*run, "--checkpoint.keep", "0", *_cluster(port, 1)], 1, logs[1])
    try:
        assert bad.wait(timeout=120) == 2, logs[1].read_text()[-3000:]
        assert good.wait(timeout=120) == 1, logs[0].read_text()[-3000:]
    finally:
        for p in (good, bad):
            p.kill()
    (line,) = _one_line_errors(logs[1].read_text())
    assert line.startswith("purejaxdrl: error: checkpoint.keep=0 must be >= 1"), line
    assert "failed elsewhere" in logs[0].read_text()


# Joins a run of 2 and waits, as a training process would between chunks.
_JOIN_AND_WAIT = """
import sys, time
from purejaxdrl.cli.processes import DistributedConfig, initialize_distributed

port, process = sys.argv[1], int(sys.argv[2])
initialize_distributed(DistributedConfig(f"127.0.0.1:{port}", 2, process))
print("joined", flush=True)
time.sleep(120)
"""


@pytest.mark.timeout(120)
def test_when_process_0_dies_jax_stops_the_others_at_once(tmp_path):
    # Process 0 hosts the coordination service: when it dies, JAX's own error
    # poller ends the others before our watchdog can, with its message, a C++
    # stack trace and status 134 (SIGABRT). No setting of JAX 0.10 avoids it
    # (its missed-heartbeat callback cannot be given from Python); the guide
    # says so. This pins that: stopped at once, and said why.
    port = str(free_port())
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    logs = [tmp_path / f"p{i}.log" for i in range(2)]
    procs = []
    for i, log in enumerate(logs):
        with log.open("w") as out:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", _JOIN_AND_WAIT, port, str(i)],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=env,
                )  # fmt: skip
            )
    try:
        deadline = time.monotonic() + 60
        while not all("joined" in log.read_text() for log in logs):
            assert procs[1].poll() is None, logs[1].read_text()[-3000:]
            assert time.monotonic() < deadline, "the processes never joined"
            time.sleep(0.2)
        procs[0].kill()
        killed = time.monotonic()
        status = procs[1].wait(timeout=60)
        elapsed = time.monotonic() - killed
    finally:
        for p in procs:
            p.kill()
    log = logs[1].read_text()
    assert status in (1, -6, 134) and elapsed < 30, (status, log[-3000:])
    ours = "stopped because the run failed elsewhere" in log
    jaxs = "This most likely indicates that another task died" in log
    assert ours or jaxs, log[-3000:]


# Imported by `--env.imports` after the processes have joined, before anything
# is compiled: SIGTERM to process 1 alone, as a cluster pre-empting one host.
_SIGTERM_AT_IMPORT = """
import os, signal
if os.environ.get("PREEMPT_ME"):
    os.kill(os.getpid(), signal.SIGTERM)
"""


def _said_received(log: str) -> list[str]:
    """A process's lines that say it received a signal."""
    return [line for line in log.splitlines() if " received" in line]


def _both_exit_after_process_1s_sigterm(
    run: list[str],
    tmp_path: pathlib.Path,
    devices: int = 1,
    timeout: float = 240,
    status: int = 0,
) -> list[pathlib.Path]:
    """Runs `run` as 2 processes of `devices` CPU devices each in `tmp_path`,
    with PREEMPT_ME set in process 1 alone (`_SIGTERM_AT_IMPORT` reads it);
    asserts both exit with `status` within `timeout` seconds and returns their
    logs."""
    port = free_port()
    logs = [tmp_path / f"p{i}.log" for i in range(2)]
    procs = []
    for i, log in enumerate(logs):
        preempt = {"PREEMPT_ME": "1" * i}
        run_i = [*run, *_cluster(port, i)]
        procs.append(_start(run_i, devices, log, preempt, cwd=tmp_path))
    try:
        for log, p in zip(logs, procs, strict=True):
            assert p.wait(timeout=timeout) == status, log.read_text()[-3000:]
    finally:
        for p in procs:
            p.kill()
    return logs


def _both_stopped_unsaved(run: list[str], tmp_path: pathlib.Path) -> None:
    """Process 1 is sent SIGTERM before the first update: both exit 130.

    Process 0's last line says nothing was saved, and only process 0 says
    so (the guide: process 0 reports the stop); the signalled one says it
    received the signal, and the other says nothing of it.
    """
    logs = _both_exit_after_process_1s_sigterm(run, tmp_path, status=130)
    log0, log1 = (log.read_text() for log in logs)
    assert log0.splitlines()[-1] == (
        "interrupted: stopped before the first update; nothing was saved"
    ), log0[-3000:]
    assert "interrupted:" not in log1, log1[-3000:]
    assert _said_received(log1) == [
        "purejaxdrl: SIGTERM received: stopping with the other processes before "
        "the first chunk; nothing is saved; process 0 says where they stopped"
    ]
    assert _said_received(log0) == []


@pytest.mark.timeout(300)
def test_a_signal_before_training_stops_every_process_with_nothing_saved(
    tmp_path, cache
):
    # JAX's pre-emption notifier used to take the SIGTERM and tell no one:
    # both processes trained their whole budget and exited 0. Stopped before
    # the first update, the run is as one process's stopped while compiling
    # (checkpoints.md): exit 130, nothing saved, no folder.
    (tmp_path / "preempt.py").write_text(_SIGTERM_AT_IMPORT)
    run = ["train", "--env.imports", "preempt", "--total-steps", str(4 * 512),
           "--num-logs", "2", "--quiet", "--devices", "1", "--run-dir",
           str(tmp_path / "runs"), *cache]  # fmt: skip
    _both_stopped_unsaved(run, tmp_path)
    assert not (tmp_path / "runs").exists()


@pytest.mark.timeout(300)
def test_a_signal_stops_every_process_of_a_run_without_files(tmp_path, cache):
    # Without files nothing was held: the signalled process died at once
    # (status 143) and its peer stopped saying "a process died" (status 1).
    (tmp_path / "preempt.py").write_text(_SIGTERM_AT_IMPORT)
    run = ["train", "--env.imports", "preempt", "--total-steps", str(4 * 512),
           "--num-logs", "2", "--quiet", "--devices", "1", "--no-files",
           *cache]  # fmt: skip
    # Stopped before the first update: exit 130 in each, as one process.
    _both_stopped_unsaved(run, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "p0.log",
        "p1.log",
        "preempt.py",
    ]


def _on_unequal_hosts(
    tmp_path: pathlib.Path, *launches: tuple[list[str], str], most: int = 2
) -> list[tuple[list[int], list[str]]]:
    """Each launch `(args, tag)` as process 0 with `most` CPU devices and
    process 1 with one fewer, the launches side by side (each its own
    coordinator port): per launch, each process's exit status and output
    (logs named by `tag`)."""
    started: list[tuple[list[subprocess.Popen], list[pathlib.Path]]] = []
    try:
        for args, tag in launches:
            port = free_port()  # never one given before
            logs = [tmp_path / f"{tag}{i}.log" for i in range(2)]
            procs = [
                _start([*args, *_cluster(port, i)], most - i, logs[i]) for i in range(2)
            ]
            started.append((procs, logs))
        return [
            ([p.wait(timeout=240) for p in procs], [x.read_text() for x in logs])
            for procs, logs in started
        ]
    finally:
        for procs, _ in started:
            for p in procs:
                p.kill()


@pytest.mark.timeout(600)
def test_hosts_with_different_device_counts_train_on_the_fewest(tmp_path, cache):
    # A 2-device and a 1-device host built a 3-device and a 2-device mesh:
    # wrong advice (num_envs=4 "over the 3 devices of 2 processes"), or both
    # stopped after 40 s saying a process had died (none had). Now both take
    # the fewest, and process 0 says so; a --devices above it is refused.
    # With files, every step the processes took together counted devices
    # (JAX's multihost_utils, and orbax's barriers on them): "cannot reshape
    # array of size 3 into shape (2,1)", on a fresh run as on a resume.
    run = ["train", "--num-envs", "4", "--unroll-length", "8", "--total-steps",
           "64", "--num-logs", "2", "--quiet", *cache]  # fmt: skip
    runs = tmp_path / "runs"
    # The refused launch (a --devices above the fewest) compiles nothing: it
    # runs beside the first.
    (statuses, logs), refused = _on_unequal_hosts(
        tmp_path,
        ([*run, "--run-dir", str(runs)], "p"),
        ([*run, "--no-files", "--devices", "2"], "d"),
    )
    assert statuses == [0, 0], logs[0][-3000:] + logs[1][-3000:]
    assert "the processes have 2, 1 cpu devices: each trains on 1" in logs[0]
    assert "2 cpu device(s) in 2 processes" in logs[0], logs[0][-3000:]
    (run_dir,) = runs.iterdir()
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == ["1", "2"]

    # Resumed from its first checkpoint on the same hosts: the same run. With
    # a change, only process 0 says what changed, as it alone prints.
    resumed = tmp_path / "resumed" / run_dir.name
    shutil.copytree(run_dir, resumed)
    shutil.rmtree(resumed / "checkpoints" / "2")
    (resumed / "params.msgpack").unlink()
    resume = ["train", "--resume", str(resumed), "--checkpoint.keep", "4", *cache]
    ((statuses, logs),) = _on_unequal_hosts(tmp_path, (resume, "r"))
    assert statuses == [0, 0], logs[0][-3000:] + logs[1][-3000:]
    assert "resuming with checkpoint.keep" in logs[0]
    assert "resuming with" not in logs[1]
    assert (resumed / "checkpoints" / "2").is_dir()
    np.testing.assert_array_equal(_params(runs), _params(resumed.parent))

    statuses, logs = refused
    assert statuses[0] == 2, logs[0][-3000:] + logs[1][-3000:]
    assert _one_line_errors(logs[0]) == [
        "purejaxdrl: error: devices=2 must be between 1 and the 1 local cpu "
        "devices of process 1 (the processes have 2, 1); pass --devices 1 "
        "(devices=1 or make_mesh(1) in Python)."
    ]


# Imported by `--env.imports` in both processes: the run's second save is where
# process 1 dies (DIE_AT_SAVE set) and where process 0's save fails as orbax's
# barrier did when a process died while the run saved. No timing:
# the save itself sees the failure.
_DIE_AT_SECOND_SAVE = """
import os
import jax
from purejaxdrl.training import checkpoint

_save_now, _saves = checkpoint.Checkpointer._save_now, []

def _save_now_or_fail(self, *args, **kwargs):
    _saves.append(None)
    if len(_saves) < 2:
        return _save_now(self, *args, **kwargs)
    if os.environ.get("DIE_AT_SAVE"):
        os._exit(9)
    raise jax.errors.JaxRuntimeError(
        "INTERNAL: Barrier failed because: task is set to ERROR: UNAVAILABLE: "
        "Task 1 heartbeat timeout. This indicates that the remote task has failed"
    )

checkpoint.Checkpointer._save_now = _save_now_or_fail
"""


@pytest.mark.slow  # ~40 s: two processes compile and save
@pytest.mark.timeout(300)
def test_a_process_that_dies_while_the_run_saves_is_a_peers_failure(tmp_path, cache):
    # The save's barrier failure was said as a full disk ("free space ... and
    # resume the run"), then JAX's error poller aborted process 0 (status 134).
    (tmp_path / "diesave.py").write_text(_DIE_AT_SECOND_SAVE)
    runs = tmp_path / "runs"
    run = ["train", "--env.imports", "diesave", "--total-steps", str(4 * 512),
           "--num-logs", "2", "--checkpoint.every", "1", "--quiet", "--devices",
           "1", "--run-dir", str(runs), *cache]  # fmt: skip
    port = free_port()
    logs = [tmp_path / f"p{i}.log" for i in range(2)]
    procs = []
    for i, log in enumerate(logs):
        die = {"DIE_AT_SAVE": "1" * i}
        procs.append(_start([*run, *_cluster(port, i)], 1, log, die, cwd=tmp_path))
    try:
        statuses = [p.wait(timeout=240) for p in procs]
    finally:
        for p in procs:
            p.kill()
    log0 = logs[0].read_text()
    assert statuses == [1, 9], log0[-3000:]
    (run_dir,) = runs.iterdir()
    (saved,) = (run_dir / "checkpoints").iterdir()  # the first save's
    (line,) = _one_line_errors(log0)
    assert line == (
        "purejaxdrl: error: process 0 of 2 stopped because the run failed "
        "elsewhere (a process died or became unreachable): INTERNAL: Barrier "
        "failed because: task is set to ERROR: UNAVAILABLE: Task 1 heartbeat "
        "timeout. This indicates that the remote task has failed; its newest "
        f"checkpoint is {saved}: continue with: purejaxdrl train --resume "
        f"{run_dir} (on every host, with its process flags)"
    )


@pytest.mark.timeout(300)
def test_ppos_device_hint_counts_per_process_in_a_run_of_processes(tmp_path):
    # 16 minibatches of unroll_length=8 take environments 2 at a time; 4 over
    # the 4 devices of 2 processes x --devices 2 is 1 each. --devices counts
    # per process: 1 (2 devices, 2 each) fits. The hint once came from the
    # global count and could name --devices 2, the count that failed.
    run = ["train", "--num-envs", "4", "--unroll-length", "8",
           "--ppo.num-minibatches", "16", "--devices", "2", "--no-files",
           "--quiet"]  # fmt: skip
    port = free_port()
    logs = [tmp_path / f"p{i}.log" for i in range(2)]
    procs = [_start([*run, *_cluster(port, i)], 2, logs[i]) for i in range(2)]
    try:
        statuses = [p.wait(timeout=240) for p in procs]
    finally:
        for p in procs:
            p.kill()
    assert statuses[0] == 2, logs[0].read_text()[-3000:]
    assert _one_line_errors(logs[0].read_text()) == [
        "purejaxdrl: error: ppo.num_minibatches=16 with unroll_length=8 needs "
        "each device's environments to be a multiple of 2, got num_envs=4 over 4 "
        "devices = 1 each; pass --num-envs 8 (num_envs=8 in Python) or --devices "
        "1 (devices=1 in Python), or make num_minibatches a divisor of "
        "unroll_length, e.g. "
        "--ppo.num-minibatches 8 (ppo.num_minibatches=8 in Python)."
    ]
