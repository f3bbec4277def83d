"""A save that fails because a process of the run died is said as that.

orbax's barrier fails with the runtime's status (`INTERNAL: Barrier failed
because: ... heartbeat timeout`); the run said "free space". The
CLI ends such a run as a peer's failure (`tests/training/test_multiprocess.py`).
"""

import jax

from purejaxdrl.training import faults


def _orbax_barrier_error() -> Exception:
    """A save's error as orbax raised it when a process died."""
    try:
        try:
            raise jax.errors.JaxRuntimeError(
                "INTERNAL: Barrier failed because: task is set to ERROR: "
                "UNAVAILABLE: Task 1 heartbeat timeout."
            )
        except jax.errors.JaxRuntimeError as barrier:
            raise ValueError("orbax: saving step 3 failed") from barrier
    except ValueError as error:
        return error


def test_a_save_that_lost_a_process_is_not_a_full_disk(monkeypatch, tmp_path):
    error = _orbax_barrier_error()
    # One process: no peer to lose; the disk advice stands.
    assert "free space" in faults.save_failure(tmp_path, error)
    assert faults.lost_process(error) is None
    monkeypatch.setattr(jax, "process_count", lambda: 2)
    assert faults.lost_process(error) is error.__cause__
    line = faults.save_failure(tmp_path, error)
    assert "free space" not in line
    assert line == (
        f"saving a checkpoint in {tmp_path} failed because the run lost a "
        "process: INTERNAL: Barrier failed because: task is set to ERROR: "
        "UNAVAILABLE: Task 1 heartbeat timeout.; the checkpoints before it are "
        "kept: rerun every process with --resume (and its --coordinator, "
        "--num-processes, --process-id, --logger flags)."
    )
    # A disk's own failure in a run of processes keeps the disk advice.
    full = OSError(28, "No space left on device")
    assert "free space" in faults.save_failure(tmp_path, full)
