"""Kill a host-env run as a user's machine does, then resume it to the end.

Host environments cannot be snapshotted: a resumed run restarts them with new
seeds, so it continues the training (learner state, optimiser, update count)
rather than repeating the uninterrupted run bit for bit.
"""

import json
import pathlib
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("envpool")
pytestmark = pytest.mark.timeout(600)

UPDATES = 600  # 32 envs x 16 steps each: 307,200 steps, 20 chunks of 30
# Deterministic mode (a fixed lag of one update): on a loaded CI machine a
# free-running actor's lag, and with it the learning, varies from run to run.
RUN = [
    "train", "--env", "cartpole_envpool", "--algo", "impala",
    "--total-steps", str(32 * 16 * UPDATES),
    "--num-logs", "20", "--quiet", "--host.deterministic", "true",
]  # fmt: skip


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "purejaxdrl.cli", *args]


def _committed(root: pathlib.Path) -> list[int]:
    return sorted(
        int(p.parent.name) for p in root.glob("*/checkpoints/*/purejaxdrl.sha256")
    )


def test_sigkill_then_resume_continues_to_the_end_and_learns(tmp_path):
    root = tmp_path / "runs"
    proc = subprocess.Popen(
        _cli(*RUN, "--run-dir", str(root)),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while len(_committed(root)) < 3:  # a quarter of the run or so
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "no checkpoints in 300 s"
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = _committed(root)[-1]
    (run_dir,) = root.iterdir()
    assert not (run_dir / "summary.json").exists()  # really killed mid-run

    resumed = subprocess.run(
        _cli("train", "--resume", str(run_dir)),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resumed at update {killed_at:,}" in resumed.stderr
    assert "restart with new seeds" in resumed.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["updates"] == UPDATES
    assert summary["mean_return"] >= 475, summary
    # Each chunk once, the resumed ones after the checkpointed ones.
    records = [json.loads(x) for x in (run_dir / "metrics.jsonl").open()]
    steps = [r["env_steps"] for r in records]
    assert steps == sorted(set(steps)) and len(steps) == 20


def test_trains_docstring_promises_a_bitwise_resume_for_device_envs_alone():
    # checkpoints.md#host-environments: a host resume is not bit-identical (hr15 #9).
    import purejaxdrl as pjd

    doc = " ".join(pjd.train.__doc__.split())
    assert "On device environments the continued run is bitwise" in doc
    assert "a host-env run restarts its environments, so it continues" in doc
