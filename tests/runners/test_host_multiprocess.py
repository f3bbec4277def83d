"""The actor-learner runner over two processes on loopback, as on two hosts.

Each process has 2 fake CPU devices: one for its actors, one for its slice of
the learner mesh (2 devices over the 2 processes). Each steps its own half of
the environments and feeds its own learner slice; gradients meet in `pmean`.
"""

import json
import re

import pytest

from tests.helpers import free_port
from tests.training.test_multiprocess import (
    _both_exit_after_process_1s_sigterm,
    _cluster,
    _on_unequal_hosts,
    _one_line_errors,
    _start,
)

pytest.importorskip("envpool")
pytest.importorskip("gymnasium")


# PPO's 500k steps took 185 s alone on 2 CPU cores (2026-11-28) and more than
# 300 s beside another pytest worker: the wait leaves room for a busy machine.
@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("algo", "env_id"),
    [
        ("impala", "gymnasium:CartPole-v1"),
        pytest.param("ppo", "envpool:CartPole-v1", marks=pytest.mark.slow),
    ],
)
def test_two_processes_learn_cartpole(algo, env_id, tmp_path):
    run = ["train", "--env", "cartpole_envpool", "--algo", algo, "--env.id", env_id]
    # Deterministic actors (batch k acts with version k - 1): the same run
    # however busy the machine. Free-running ones, timed by a loaded CI
    # worker, once ended IMPALA at a return of 176 (2026-12-03).
    run += ["--num-logs", "5", "--quiet", "--host.deterministic", "true"]
    run += ["--run-dir", str(tmp_path / "runs")]
    port = free_port()
    logs = [tmp_path / f"p{i}.log" for i in range(2)]
    procs = [_start([*run, *_cluster(port, i)], 2, logs[i]) for i in range(2)]
    for p, log in zip(procs, logs, strict=True):
        assert p.wait(timeout=540) == 0, log.read_text()[-3000:]
    assert "2 cpu learner device(s) in 2 processes" in logs[0].read_text()
    (run_dir,) = (tmp_path / "runs").iterdir()  # process 0's only
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["mean_return"] >= 475, summary


# Imported by `--env.imports`: a CartPole whose 300th step (of any of the
# process's environments) sends SIGTERM to process 1 alone, mid-chunk, as a
# cluster pre-empting one host.
_PREEMPTED_CARTPOLE = """
import os, signal, threading
import gymnasium as gym

_steps, _lock = [0], threading.Lock()


class Preempted(gym.Env):
    def __init__(self):
        self.env = gym.make("CartPole-v1")
        self.observation_space = self.env.observation_space
        self.action_space = self.env.action_space

    def reset(self, *, seed=None, options=None):
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        with _lock:
            _steps[0] += 1
            if _steps[0] == 300 and os.environ.get("PREEMPT_ME"):
                os.kill(os.getpid(), signal.SIGTERM)
        return self.env.step(action)


gym.register("purejaxdrl-test/Preempted-v0", entry_point=Preempted)
"""


@pytest.mark.timeout(600)
def test_a_signal_mid_chunk_stops_every_process_after_the_same_update(tmp_path):
    # One chunk of 1,000 updates: the stop came only after all of them, or
    # (the stop agreed in the learner, the loop not told) process 0 finished
    # "done" while process 1 saved alone and found no peer.
    (tmp_path / "preempted.py").write_text(_PREEMPTED_CARTPOLE)
    run = ["train", "--env", "cartpole_envpool", "--algo", "impala",
           "--env.id", "gymnasium:purejaxdrl-test/Preempted-v0",
           "--env.imports", "preempted", "--num-envs", "8",
           "--total-steps", str(8 * 16 * 1000), "--num-logs", "1", "--quiet",
           "--host.deterministic", "true",
           "--run-dir", str(tmp_path / "runs")]  # fmt: skip
    logs = _both_exit_after_process_1s_sigterm(run, tmp_path, 2, timeout=540)
    log0 = logs[0].read_text()
    # Process 1's 4 environments step 300 times in its first 5 batches of 16.
    stopped = re.search(r"stopped by a peer's signal after update (\d+) of 1,000", log0)
    assert stopped and int(stopped[1]) <= 10, log0[-3000:]
    (run_dir,) = (tmp_path / "runs").iterdir()
    saved = [p.name for p in (run_dir / "checkpoints").iterdir() if p.name.isdigit()]
    assert saved == [stopped[1]], log0[-3000:]


@pytest.mark.timeout(600)
def test_hosts_with_unequal_device_counts_train_on_the_fewest(tmp_path):
    # Process 0 (3 devices) put its actors on one and its learner on two,
    # process 1 (2 devices) its learner on one: a learner mesh of 2 + 1
    # devices ("non-uniform sharding" at the first batch); and the metrics'
    # process_allgather raised on any unequal counts ("cannot reshape"). Now
    # both split the fewest alike, and a --devices above it is one line.
    run = ["train", "--env", "cartpole_envpool", "--num-envs", "4",
           "--unroll-length", "8", "--total-steps", "64", "--num-logs", "1",
           "--no-files", "--quiet"]  # fmt: skip
    # The refused launch runs beside the one that trains (own ports).
    (ok, logs), (refused, refused_logs) = _on_unequal_hosts(
        tmp_path, (run, "p"), ([*run, "--devices", "3"], "d"), most=3
    )
    assert ok == [0, 0], [log[-3000:] for log in logs]
    assert "the processes have 3, 2 cpu devices: each trains on 2" in logs[0]
    assert "2 cpu learner device(s) in 2 processes" in logs[0], logs[0][-3000:]
    assert refused == [2, 2], [log[-3000:] for log in refused_logs]
    assert _one_line_errors(refused_logs[0]) == [
        "purejaxdrl: error: devices=3 must be between 1 and the 2 local cpu "
        "devices of process 1 (the processes have 3, 2); pass at most --devices 2 "
        "(devices=2 or make_mesh(2) in Python)."
    ]
