"""The actor-learner runner over two processes on loopback, as on two hosts.

Each process has 2 fake CPU devices: one for its actors, one for its slice of
the learner mesh (2 devices over the 2 processes). Each steps its own half of
the environments and feeds its own learner slice; gradients meet in `pmean`.
"""

import json

import pytest

from tests.training.test_multiprocess import _cluster, _free_port, _start

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
    port = _free_port()
    logs = [tmp_path / f"p{i}.log" for i in range(2)]
    procs = [_start([*run, *_cluster(port, i)], 2, logs[i]) for i in range(2)]
    for p, log in zip(procs, logs, strict=True):
        assert p.wait(timeout=540) == 0, log.read_text()[-3000:]
    assert "2 cpu learner device(s) in 2 processes" in logs[0].read_text()
    (run_dir,) = (tmp_path / "runs").iterdir()  # process 0's only
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["mean_return"] >= 475, summary
