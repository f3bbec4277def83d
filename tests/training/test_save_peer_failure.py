"""A save that fails because a process of the run died is said as that.

orbax's barrier fails with the runtime's status (`INTERNAL: Barrier failed
because: ... heartbeat timeout`); the run said "free space". The
CLI ends such a run as a peer's failure (`tests/training/test_multiprocess.py`).
"""

import jax

from purejaxdrl.sweeps.batch import resume_call
from purejaxdrl.training import faults, opened_run


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
    monkeypatch.setattr(opened_run, "_OPENED", [])  # a run of another process
    error = _orbax_barrier_error()
    # One process: no peer to lose, and no disk's reason either: no advice
    # to free space, but the failure as it is.
    assert faults.save_failure(tmp_path, error) == (
        f"saving a checkpoint in {tmp_path} failed: orbax: saving step 3 failed; "
        "the checkpoints before it are kept; the operating system reported no "
        "error, so this is likely a purejaxdrl bug: please report this line; "
        "once it is fixed, resume the run (--resume)."
    )
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
        "--num-processes, --process-id flags)."
    )
    # A disk's own failure in a run of processes keeps the disk advice.
    full = OSError(28, "No space left on device")
    assert "free space" in faults.save_failure(tmp_path, full)


def test_a_failed_save_names_the_command_that_resumes_its_run(monkeypatch, tmp_path):
    # The advice said "--resume, with its --logger flags", and a run on fake
    # CPU devices resumed as advised on one device and was refused.
    command = f"JAX_NUM_CPU_DEVICES=2 purejaxdrl train --resume {tmp_path}"
    monkeypatch.setattr(opened_run, "_OPENED", [])
    opened_run.remember(tmp_path, command)
    full = OSError(28, "No space left on device")
    saves = tmp_path / "checkpoints"
    assert faults.save_failure(saves, full).endswith(
        f"free space (or fix the folder) and continue with: {command}."
    )
    monkeypatch.setattr(jax, "process_count", lambda: 2)
    assert faults.save_failure(saves, _orbax_barrier_error()).endswith(
        f"rerun every process with {command} (on every host, with its process flags)."
    )
    # A save outside the opened run is not given its command.
    other = tmp_path.parent / "sweep" / "checkpoints"
    assert faults.save_failure(other, full).endswith("and resume the run (--resume).")


def test_a_sweeps_failed_save_names_the_sweeps_resume_and_no_disk_it_did_not_blame(
    monkeypatch, tmp_path
):
    # sw19 #1: orbax refused a zero-size array, and the line said "free space
    # ... --resume, with its --logger flags": no disk's fault, and a sweep
    # resumes with `sweep --resume`.
    monkeypatch.setattr(opened_run, "_OPENED", [])
    opened_run.remember(tmp_path, resume_call("sweep", tmp_path, devices=4))
    refused = ValueError("Cannot save arrays with zero size: ParamInfo: [name=a]")
    line = faults.save_failure(tmp_path / "checkpoints" / "p0-b0", refused)
    assert "free space" not in line and "--logger" not in line
    assert line.endswith(
        f"please report this line; once it is fixed, continue with: "
        f"pjd.resume_sweep({str(tmp_path)!r}) (JAX_NUM_CPU_DEVICES=4 "
        f"purejaxdrl sweep --resume {tmp_path})."
    )
