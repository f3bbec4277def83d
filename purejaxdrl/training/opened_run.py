"""The run this process opened last, and the command that resumes it.

A run of `train`, or a sweep or PBT run that writes its directory (its
command: `batch.resume_call`'s, in Python and on the command line).

Named by code that stops a run without knowing how it was started: a process
whose peer failed (`cli.processes`, from another thread), and a checkpoint
save or a log write that failed (`faults.save_failure`, `log_writes`). The
command is the one a stopped run prints (`parallel.resume_command`: fake
devices' setting, the session's `--logger` flags), so every resume hint
works as printed.
"""

import os
import pathlib

_OPENED: list[tuple[pathlib.Path, str]] = []


def remember(run_dir: pathlib.Path, command: str) -> None:
    """Records `run_dir`, opened now, and `command`, which resumes it.

    Kept absolute: a checkpoint's folder is named absolute (`Checkpointer`),
    and the run's as given (`runs/...`) would never hold it.
    """
    _OPENED[:] = [(pathlib.Path(run_dir).absolute(), command)]


def resume_command_for(directory: os.PathLike) -> str | None:
    """The resume command of the opened run that holds `directory`, if one does."""
    if not _OPENED:
        return None
    run_dir, command = _OPENED[0]
    path = pathlib.Path(directory).absolute()
    return command if path == run_dir or run_dir in path.parents else None


def resume_advice(directory: os.PathLike) -> str:
    """The clause saying how to go on once the run holding `directory` stopped.

    Its resume command where this process opened that run; otherwise
    `--resume`, which every entry point takes.
    """
    command = resume_command_for(directory)
    return f"continue with: {command}" if command else "resume the run (--resume)"


def full_disk_advice(path: os.PathLike) -> str:
    """A failed write's last words: what is kept, and what to do.

    One for a failed save (`faults.save_failure`) and a failed write of a
    run's log files (`log_writes`), which a full disk ends alike.
    """
    return (
        "the checkpoints before it are kept: free space (or fix the folder) "
        f"and {resume_advice(path)}."
    )


def resume_after_failure() -> str:
    """Where a run that lost a process continues from; "" without a checkpoint.

    For the run this process opened last, as a clause of the error line. Only
    finished saves count: orbax writes each under a temporary name, renamed
    to its update once complete.
    """
    if not _OPENED:
        return ""
    run_dir, command = _OPENED[0]
    saved = (run_dir / "checkpoints").glob("*")
    done = [p for p in saved if p.name.isdigit() and p.is_dir()]
    if not done:
        return ""
    newest = max(done, key=lambda p: int(p.name))
    return (
        f"; its newest checkpoint is {newest}: continue with: {command} (on "
        "every host, with its process flags)"
    )
