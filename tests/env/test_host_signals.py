"""Ctrl-C reaches a whole process group: async Gymnasium workers outlive it."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("gymnasium")
pytestmark = pytest.mark.timeout(300)


def test_a_group_wide_sigint_stops_an_async_run_with_a_checkpoint(tmp_path):
    root = tmp_path / "runs"
    run = [
        sys.executable, "-m", "purejaxdrl.cli", "train", "--env", "cartpole_envpool",
        "--algo", "ppo", "--env.id", "gymnasium:CartPole-v1",
        "--env.option", "vectorization_mode=async", "--total-steps", "5120000",
        "--num-logs", "5000",  # 2 updates of 512 steps a chunk: a prompt stop
        "--run-dir", str(root),
    ]  # fmt: skip
    # Its own session and process group, as a terminal's foreground job.
    proc = subprocess.Popen(
        run,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 200
    while not any(p.read_text() for p in root.glob("*/metrics.jsonl")):
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "no metrics in 200 s"
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)  # the workers too, as Ctrl-C does
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]
    assert "stopped by SIGINT" in out + err, (out + err)[-3000:]
    # The checkpoint of the update it stopped after, not only periodic ones.
    update = re.search(r"stopped by SIGINT after update ([\d,]+)", out + err)[1]
    saved = root.glob(f"*/checkpoints/{update.replace(',', '')}/purejaxdrl.sha256")
    assert list(saved), (out + err)[-3000:]
