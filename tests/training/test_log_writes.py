"""A run's log files that cannot be written: one line, as a failed save (ds20)."""

import errno
import math
import pathlib
import types

import numpy as np
import pytest

from purejaxdrl import cli
from purejaxdrl.observe.loggers import JsonlLogger
from purejaxdrl.training import opened_run
from purejaxdrl.training.log_writes import GuardedSink, LogWriteError
from purejaxdrl.training.run_files import write_outputs

pytestmark = pytest.mark.timeout(300)

# Four chunks of one update each, each chunk saved.
ARGV = ["train", "--env", "cartpole", "--num-envs", "4", "--unroll-length", "8",
        "--total-steps", "128", "--num-logs", "4", "--checkpoint.every", "1",
        "--checkpoint.wait", "true", "--quiet", "--devices", "1"]  # fmt: skip
FULL = OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_while_writing_metrics_is_one_line_and_keeps_checkpoints(
    tmp_path, monkeypatch, capsys
):
    # ds20: a raw OSError traceback (two: metrics.jsonl's close failed again).
    real = JsonlLogger.write

    def write(self, record):
        if record["updates"] >= 3:
            self._file.write('{"env_steps": 9')  # half a line, then full
            raise FULL
        real(self, record)

    monkeypatch.setattr(JsonlLogger, "write", write)
    assert cli.main([*ARGV, "--run-dir", str(tmp_path)]) == 1
    (run,) = tmp_path.iterdir()
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (
        f"purejaxdrl: error: writing {run.absolute()}/metrics.jsonl failed: No "
        "space left on device; the run stopped and the checkpoints before it are "
        "kept: free space (or fix the folder) and continue with: purejaxdrl "
        f"train --resume {run}."
    )
    # The chunks before were saved (none replaced: checkpoint.wait); the one
    # whose record failed was not.
    saved = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert saved == ["1", "2"]


def test_a_sink_whose_write_failed_closes_quietly(tmp_path):
    class Events:  # TensorBoard's writer: its close flushes what failed again
        def write(self, record):
            raise FULL

        def close(self):
            raise FULL

    opened_run.remember(tmp_path, "purejaxdrl train --resume R")
    events = tmp_path / "tensorboard"
    sink = GuardedSink(events, Events, unstarted=False)
    with pytest.raises(LogWriteError, match=f"^writing {events} failed: No space"):
        sink.write({"env_steps": 1})
    sink.close()  # said already
    unwritten = GuardedSink(events, Events, unstarted=False)
    with pytest.raises(LogWriteError, match="continue with: purejaxdrl train"):
        unwritten.close()  # its own failure: said
    with pytest.raises(LogWriteError, match="trained nothing: free space .* again"):
        GuardedSink(events, lambda: Events().close(), unstarted=True)


def test_a_summary_that_cannot_be_written_names_it(tmp_path, monkeypatch):
    opened_run.remember(tmp_path, "purejaxdrl train --resume R")
    real = pathlib.Path.write_text

    def write_text(self, *args, **kwargs):
        if self.name == "summary.json":
            raise FULL
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "write_text", write_text)
    result = types.SimpleNamespace(
        mean_return=math.nan, env_steps=1, updates=1, stopped_by=None,
        compile_seconds=0.0, train_seconds=1.0, steps_per_second=1.0,
        num_devices=1, steps_per_second_per_device=1.0, eval_return=math.nan,
        history=[], run_dir=tmp_path,
        state=types.SimpleNamespace(agent=types.SimpleNamespace(params=np.ones(2))),
    )  # fmt: skip
    with pytest.raises(LogWriteError) as raised:
        write_outputs(result, 1, 1)
    assert str(raised.value) == (
        f"writing {tmp_path / 'summary.json'} failed: No space left on device; "
        "the run stopped and the checkpoints before it are kept: free space (or "
        "fix the folder) and continue with: purejaxdrl train --resume R."
    )


def test_a_full_disk_under_tensorboard_is_raised_where_the_run_writes(
    tmp_path, monkeypatch
):
    # ds20: tensorboardX's writer thread died on it (a traceback) and the
    # run's next records waited on that thread's queue for ever.
    from tensorboardX import record_writer

    from purejaxdrl.training.result import open_sinks
    from purejaxdrl.training.run import Run

    from .test_train import _config

    opened_run.remember(tmp_path, "purejaxdrl train --resume R")
    run = Run(config=_config(), run_dir=tmp_path, main=True)
    _, events = open_sinks(run, [{"env_steps": 32}], [], None, ["tensorboard"], None)

    def full(self, data):
        raise FULL

    monkeypatch.setattr(record_writer.RecordWriter, "write", full)
    with pytest.raises(LogWriteError, match=f"^writing {tmp_path}/tensorboard fail"):
        for steps in range(64, 64 * 40, 32):  # more than tensorboardX's queue
            events.write({"env_steps": steps, "loss": 1.0})
    events.close()  # said already
