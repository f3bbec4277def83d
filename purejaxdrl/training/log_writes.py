"""A run's own log files that cannot be written: one line, as a failed save.

A full disk (or a folder made read-only) while a run writes metrics.jsonl,
its TensorBoard events, summary.json or params.msgpack stops the run with one
line naming the file and the operating system's reason, and the command that
resumes it (`opened_run.resume_command_for`), as `faults.save_failure` says
for a checkpoint: the checkpoints already saved are kept, and a resume
rewrites metrics.jsonl from the newest one's records.
"""

import contextlib
import os
import pathlib
from collections.abc import Callable, Iterator
from typing import Any

from purejaxdrl.training.faults import failure_reason
from purejaxdrl.training.opened_run import full_disk_advice


class LogWriteError(RuntimeError):
    """Writing one of a run's log files failed (disk full, permissions, ...)."""


def log_write_failure(
    path: os.PathLike, error: OSError, unstarted: bool = False
) -> str:
    """The one line a run stops with when writing `path` failed with `error`.

    `unstarted`: a new run that has trained nothing yet, whose folder goes
    (`run_files.UnstartedRun`): the command is to be run again, not resumed.
    """
    reason = error.strerror or failure_reason(error)
    if error.filename and str(error.filename) != str(path):
        reason = f"{reason} ({error.filename})"  # a file inside `path`
    if unstarted:
        return (
            f"writing {path} failed: {reason}; the run trained nothing: free "
            "space (or fix the folder) and run the command again."
        )
    return (
        f"writing {path} failed: {reason}; the run stopped and {full_disk_advice(path)}"
    )


@contextlib.contextmanager
def writing(path: os.PathLike, unstarted: bool = False) -> Iterator[None]:
    """Raises an OSError of the block as a LogWriteError naming `path`."""
    try:
        yield
    except OSError as e:
        raise LogWriteError(log_write_failure(path, e, unstarted)) from e


class GuardedSink:
    """A sink writing `path` (a file or a folder) whose OSErrors are LogWriteErrors.

    Once a write failed, `close` closes quietly: the error was raised (a
    file object whose write failed fails its close's flush again).
    """

    def __init__(
        self, path: pathlib.Path, open_sink: Callable[[], Any], unstarted: bool
    ):
        """Opens the sink (`open_sink()`); `unstarted`: of a new run (`writing`)."""
        self.path = path
        self._failed = False
        with self._writing(unstarted):
            self._sink = open_sink()

    @contextlib.contextmanager
    def _writing(self, unstarted: bool = False) -> Iterator[None]:
        try:
            with writing(self.path, unstarted):
                yield
        except LogWriteError:
            self._failed = True
            raise

    def write(self, record: dict[str, Any]) -> None:
        """Passes `record` on to the sink."""
        with self._writing():
            self._sink.write(record)

    def close(self) -> None:
        """Closes the sink; quietly after a failed write."""
        if self._failed:
            with contextlib.suppress(OSError):
                self._sink.close()
            return
        with self._writing():
            self._sink.close()
