"""Hosts with unequal device counts (2 and 1 fake CPU devices) write their run.

Every step the processes take together must not count devices: JAX's
`multihost_utils` helpers (and orbax's barriers on them) reshape
`jax.devices()` to (processes, local devices) and raised at once.
"""

import shutil

import numpy as np
import pytest

from tests.training.test_multiprocess import _cluster, _free_port, _params, _start


def _both_exit_0(run: list[str], tmp_path, tag: str) -> list[str]:
    port = _free_port()
    logs = [tmp_path / f"{tag}{i}.log" for i in range(2)]
    # Process 0 has 2 devices, process 1 one: each trains on 1.
    procs = [_start([*run, *_cluster(port, i)], 2 - i, logs[i]) for i in range(2)]
    try:
        for log, p in zip(logs, procs, strict=True):
            assert p.wait(timeout=240) == 0, log.read_text()[-3000:]
    finally:
        for p in procs:
            p.kill()
    return [log.read_text() for log in logs]


@pytest.mark.timeout(600)
def test_unequal_hosts_write_their_run_and_resume_it(tmp_path):
    # Failed in `agreed_run_dir` (a device broadcast), then in orbax's
    # CheckpointManager (sync_global_devices): "cannot reshape array of size 3
    # into shape (2,1)", on a fresh run as on a resume.
    cache = ["--compile-cache", str(tmp_path / "xla")]
    run = ["train", "--num-envs", "4", "--unroll-length", "8", "--total-steps",
           "64", "--num-logs", "2", "--quiet", *cache]  # fmt: skip
    logs = _both_exit_0([*run, "--run-dir", str(tmp_path / "runs")], tmp_path, "p")
    assert "2 cpu device(s) in 2 processes" in logs[0], logs[0][-3000:]
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == ["1", "2"]

    # Resumed from its first checkpoint on the same hosts: the same run.
    resumed = tmp_path / "resumed" / run_dir.name
    shutil.copytree(run_dir, resumed)
    shutil.rmtree(resumed / "checkpoints" / "2")
    (resumed / "params.msgpack").unlink()
    _both_exit_0(["train", "--resume", str(resumed), "--quiet", *cache], tmp_path, "r")
    assert (resumed / "checkpoints" / "2").is_dir()
    np.testing.assert_array_equal(_params(tmp_path / "runs"), _params(resumed.parent))
