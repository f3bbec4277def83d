"""Checkpoints that cannot be written or read: one line each, and nothing more tried."""

import logging
import os
import subprocess
import sys
import threading

import pytest

from purejaxdrl.training import checkpoint
from purejaxdrl.training.checkpoint import Checkpointer, CheckpointError
from purejaxdrl.training.faults import read_failure
from purejaxdrl.training.save_queue import Save, SaveWriter

from .test_checkpoint import _tiny_checkpointer

pytestmark = pytest.mark.timeout(300)

_LIMIT = 32 * 1024  # bytes per file: below a CartPole state, above the run's logs
# The command, with writes past `_LIMIT` failing (EFBIG, the signal ignored)
# as on a full disk; set in the child itself, not in a `preexec_fn` run
# between fork and exec of this process full of JAX's threads.
_SMALL_FILES = (
    "import resource, runpy, signal\n"
    "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
    f"resource.setrlimit(resource.RLIMIT_FSIZE, ({_LIMIT}, {_LIMIT}))\n"
    "runpy.run_module('purejaxdrl.cli', run_name='__main__')\n"
)


def test_a_save_that_cannot_be_written_is_one_line_and_the_last_tried(tmp_path):
    # A full disk, as the command line meets it: orbax's worker threads log
    # each failed write with its traceback (some 230 lines before the error),
    # and the saves queued behind the failed one were tried too.
    env = {**os.environ, "JAX_ENABLE_COMPILATION_CACHE": "false"}
    env.pop("JAX_COMPILATION_CACHE_DIR", None)  # its writes would fail too
    out = subprocess.run(
        [sys.executable, "-c", _SMALL_FILES, "train", "--env", "cartpole",
         "--num-envs", "4", "--unroll-length", "8", "--num-logs", "10", "--quiet",
         "--ppo.num-epochs", "1", "--ppo.num-minibatches", "1",
         "--total-steps", "3200", "--checkpoint.wait", "true",
         "--no-compile-cache", "--run-dir", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=240,
    )  # fmt: skip
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 1, out.stderr[-3000:]
    assert len(lines) == 1, out.stderr[-3000:]
    assert lines[0].startswith("purejaxdrl: error: saving a checkpoint in ")
    assert "failed: File too large; the checkpoints before it are kept" in lines[0]
    (run,) = tmp_path.iterdir()
    # The command that resumes it, as a stopped run prints it.
    assert lines[0].endswith(f"continue with: purejaxdrl train --resume {run}.")
    tried = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert tried == ["10.orbax-checkpoint-tmp"]  # the first due save, only


def test_after_a_failed_save_the_waiting_ones_are_dropped_and_none_written():
    written, started, release = [], threading.Event(), threading.Event()

    def write(save: Save) -> None:
        if save.step == 1:
            started.set()
            release.wait(timeout=10)
            raise OSError(28, "No space left on device")
        written.append(save.step)

    writer = SaveWriter(write)
    writer.put(Save(1, {}, {}, None, False))
    assert started.wait(timeout=10)
    writer.put(Save(2, {}, {}, None, False))  # waits behind the one failing
    release.set()
    writer.join()
    assert writer.take_error() is not None
    assert writer.take_error() is None  # given once ...
    assert writer.take_error(again=True) is not None  # ... unless asked again
    writer.put(Save(3, {}, {}, None, False))  # after the error was taken
    writer.close()
    assert written == []


def test_a_failed_save_is_raised_by_every_later_save(tmp_path, monkeypatch):
    def fail(self, step, packed, meta, metric):
        raise OSError(28, "No space left on device", str(self.directory))

    monkeypatch.setattr(Checkpointer, "_save_now", fail)
    ck, state = _tiny_checkpointer(tmp_path)
    ck.save(1, ck.pack(state(1)), {"updates": 1})
    with pytest.raises(CheckpointError, match="No space left on device"):
        ck.wait()
    for _ in range(2):  # said by wait (once), then by each save
        with pytest.raises(CheckpointError, match="No space left on device"):
            ck.save(2, ck.pack(state(2)), {"updates": 2})
    ck.close()  # said already: closes quietly


def test_a_multi_process_save_that_fails_is_a_checkpoint_error(tmp_path, monkeypatch):
    # Saved on the loop's thread there: orbax's own error was raised as it was.
    def fail(self, step, packed, meta, metric):
        raise ValueError("OUT_OF_RANGE: Error writing ... [os_error_code='28']")

    ck, state = _tiny_checkpointer(tmp_path)
    monkeypatch.setattr(Checkpointer, "_save_now", fail)
    monkeypatch.setattr(checkpoint.jax, "process_count", lambda: 2)
    packed = ck.pack(state(1))
    with pytest.raises(CheckpointError, match="failed: No space left on device; "):
        ck.save(1, packed, {"updates": 1})
    monkeypatch.undo()
    ck.close()


_TENSORSTORE_TAIL = (
    " See full TensorStore details: <bound method pybind11_detail_function_record"
    "_v1_system_libstdcpp_gxx_abi_1xxx_use_cxx11_abi_1.spec of TensorStore({\n"
    "  'base': {\n    'driver': 'zarr',\n    'dtype': 'float32',"
)


def test_a_checkpoint_that_cannot_be_read_says_why_without_pybinds_repr():
    # A step whose state file was truncated after orbax committed it, before
    # its manifest: TensorStore's error, raised from its reader's.
    outer = "Encountered error while reading array index: (slice(0, 27475, 1),)."
    inner = ValueError(
        'OUT_OF_RANGE: Error reading "shared_float32/0" in OCDBT database at local '
        'file "/runs/R/checkpoints/200/state/": Requested byte range [0, 106525) '
        "is not valid for value of size 1000"
    )
    try:
        raise Exception(outer + _TENSORSTORE_TAIL) from inner
    except Exception as e:
        error = e
    assert read_failure(error) == (
        "Encountered error while reading array index: (slice(0, 27475, 1),): "
        "Requested byte range [0, 106525) is not valid for value of size 1000"
    )
    assert read_failure(Exception(outer + _TENSORSTORE_TAIL)) == outer[:-1]
    unreadable = PermissionError(13, "Permission denied", "/runs/R/checkpoints/2")
    assert read_failure(RuntimeError("x")) == "x"
    assert read_failure(unreadable) == "Permission denied (/runs/R/checkpoints/2)"


def test_a_failing_saves_late_callbacks_are_dropped_from_its_start(monkeypatch, capsys):
    # TensorStore's writes call back into orbax's closed loop: one CI run
    # printed five such tracebacks before the save raised and the hook that
    # drops them (installed only then) was in place.
    from purejaxdrl.training import orbax_logs

    monkeypatch.setattr(orbax_logs._FILTER, "failed", False)
    caught = []  # Python's hook takes its own argument type alone: catch one
    monkeypatch.setattr(sys, "unraisablehook", caught.append)

    class Raises:
        def __del__(self):
            raise RuntimeError("from __del__")

    Raises()
    args_type = type(caught[0])
    monkeypatch.setattr(sys, "unraisablehook", sys.__unraisablehook__)

    def unraisable(error: Exception) -> None:
        sys.unraisablehook(args_type((type(error), error, None, None, None)))

    with orbax_logs.quiet_orbax():
        unraisable(RuntimeError("Event loop is closed"))  # dropped: a save runs
        unraisable(RuntimeError("something else"))  # shown
    unraisable(RuntimeError("Event loop is closed"))  # shown: no save, none failed
    err = capsys.readouterr().err
    assert err.count("Event loop is closed") == 1 and "something else" in err


def _orbax_task_error() -> BaseException:
    """An error whose traceback runs through orbax's code, as its tasks' do."""
    from purejaxdrl.training import orbax_logs

    # A function compiled as if it were one of orbax's files.
    source = "def write():\n    raise OSError(28, 'No space left on device')\n"
    scope: dict = {}
    exec(compile(source, orbax_logs._ORBAX + "serialization.py", "exec"), scope)
    write = scope["write"]
    try:
        write()
    except OSError as error:
        return error
    raise AssertionError("unreachable")


def test_after_a_failed_save_orbaxs_late_logs_and_tasks_say_nothing(
    monkeypatch, capsys
):
    # ds20 #2: orbax's threads logged their tracebacks after the save had
    # raised (the filter was off by then), and asyncio reported orbax's failed
    # tasks ("Task exception was never retrieved"): 40-140 lines after the one.
    from purejaxdrl.training import orbax_logs

    monkeypatch.setattr(orbax_logs._FILTER, "failed", False)
    absl, aio = logging.getLogger("absl"), logging.getLogger("asyncio")
    orbax_file = orbax_logs._ORBAX + "checkpoint/_src/handler.py"

    def log(logger: logging.Logger, text: str, path: str, error=None) -> None:
        exc_info = (type(error), error, error.__traceback__) if error else None
        logger.handle(
            logger.makeRecord(logger.name, logging.ERROR, path, 1, text, (), exc_info)
        )

    def said() -> str:
        log(absl, "orbax: write failed", orbax_file)
        log(aio, "Task exception was never retrieved", "tasks.py", task_error)
        log(aio, "another task failed", "tasks.py", OSError(5, "elsewhere"))
        log(absl, "a user's own log", "/home/me/train.py")
        return capsys.readouterr().err

    task_error = _orbax_task_error()
    handler = logging.StreamHandler(sys.stderr)
    for logger in (absl, aio):
        monkeypatch.setattr(logger, "handlers", [handler])
        monkeypatch.setattr(logger, "propagate", False)
    err = said()  # no save ran, none failed: all is said
    assert "orbax: write failed" in err and "never retrieved" in err
    with pytest.raises(OSError), orbax_logs.quiet_orbax():
        raise OSError(28, "No space left on device")
    err = said()  # after the failed save: orbax's records alone are dropped
    assert "orbax: write failed" not in err and "never retrieved" not in err
    assert "another task failed" in err and "a user's own log" in err


def test_orbax_speaks_again_once_a_new_runs_checkpointer_is_made(tmp_path, monkeypatch):
    # ds20: after a failed save orbax's records were dropped for the rest of
    # the process: a notebook's later runs showed none of its logs.
    from purejaxdrl.training import orbax_logs

    monkeypatch.setattr(orbax_logs._FILTER, "failed", False)

    absl = logging.getLogger("absl")
    record = absl.makeRecord("absl", logging.ERROR, orbax_logs._ORBAX + "x.py", 1,
                             "orbax speaks", (), None)  # fmt: skip
    with pytest.raises(OSError), orbax_logs.quiet_orbax():
        raise OSError(28, "No space left on device")
    assert not orbax_logs._FILTER.filter(record)  # the failed run's: dropped
    assert orbax_logs._FILTER in absl.filters
    ck, _ = _tiny_checkpointer(tmp_path)  # the next run's
    ck.close()
    assert orbax_logs._FILTER.filter(record) and orbax_logs._FILTER not in absl.filters
