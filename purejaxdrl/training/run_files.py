"""What a run writes: its folder, config, summary and final parameters.

Host-side only. Process 0 writes files; every process of a multi-host run
learns the folder's name, since every process writes its checkpoint shards.
"""

import contextlib
import datetime
import functools
import json
import math
import os
import pathlib
import shutil
import socket
import time
from collections.abc import Callable
from typing import Any

import flax.serialization
import jax
import yaml

from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways
from purejaxdrl.coordination import broadcast_text
from purejaxdrl.observe.loggers import clean_record
from purejaxdrl.training.config import TrainConfig, run_dict
from purejaxdrl.training.log_writes import writing
from purejaxdrl.training.run_folder import OWN_FILES


def new_dir(parent: str | pathlib.Path, prefix: str) -> pathlib.Path:
    """Creates `parent/<prefix>_<time>` (`-2`, `-3`, ... if it exists).

    `parent` holds runs (train's `--run-dir`); one that is itself a run, an
    exported policy, a sweep or a PBT is refused rather than nested into.

    Raises:
      ConfigError: `parent` is itself a run (or policy, sweep, PBT); it, or a
        folder above it, is a file; or the folder cannot be made (read-only,
        no permission, a name too long).

    """
    try:
        return _new_dir(pathlib.Path(parent), prefix)
    except OSError as e:
        raise ConfigError(
            f"run_dir={str(parent)!r}: cannot make a run folder there "
            f"({e.strerror}); pass a folder you can write to: "
            f"{both_ways('--run-dir', 'run_dir', 'DIR', repr('DIR'))}."
        ) from None


_WHAT = {
    "config.yaml": "a run",
    "policy.json": "an exported policy",
    "sweep.yaml": "a sweep directory",
    "pbt.yaml": "a PBT directory",
}


def _check_not_a_run(parent: pathlib.Path) -> None:
    """Refuses a `run_dir` that is a run itself (`OWN_FILES`), naming its parent."""
    own = [name for name in OWN_FILES if (parent / name).is_file()]
    if own:
        up = parent.parent if parent.name not in ("", "..") else parent.resolve().parent
        raise ConfigError(
            f"run_dir={str(parent)!r} is itself {_WHAT[own[0]]} (it holds "
            f"{own[0]}), and new runs are made inside run_dir, beside the others; "
            f"pass the folder that holds it, --run-dir {str(up)!r}."
        )


def _new_dir(parent: pathlib.Path, prefix: str) -> pathlib.Path:
    _check_not_a_run(parent)  # (a name too long is new_dir's OSError)
    for folder in (parent, *parent.parents):
        if folder.exists() and not folder.is_dir():
            raise ConfigError(
                f"run_dir={str(parent)!r}: {str(folder)!r} is a file, not a "
                "folder; pass a folder for the runs, made where missing: "
                f"{both_ways('--run-dir', 'run_dir', 'DIR', repr('DIR'))}."
            )
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = parent / f"{prefix}_{stamp}"
    suffix = 1
    while True:
        try:
            path.mkdir(parents=True)
            return path
        except FileExistsError:
            suffix += 1
            path = parent / f"{prefix}_{stamp}-{suffix}"


def check_writable(run_dir: pathlib.Path) -> None:
    """That a resume can write in `run_dir` (checkpoints, config.yaml) at all.

    Raises:
      ConfigError: naming the folder and why not (read-only, permissions).

    """
    probe = run_dir / f".purejaxdrl-write-test-{jax.process_index()}"
    try:
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise ConfigError(
            f"--resume {run_dir}: cannot write there ({e.strerror}), and a resume "
            "writes checkpoints and config.yaml; make the folder writable, or "
            "copy the run somewhere you can write to and resume the copy."
        ) from None


class RunLock:
    """Process 0's exclusive hold on a run directory while it trains the run.

    Two processes training one run (a resume started twice) would delete each
    other's checkpoints in progress; the second is refused instead. An
    advisory `flock` on `LOCK_FILE`: the system releases it when the process
    ends, however it ends.
    """

    def __init__(self, run_dir: pathlib.Path):
        """Takes the lock, or raises ConfigError naming the process that holds it."""
        self._file = open(run_dir / LOCK_FILE, "a+")  # noqa: SIM115 (held open)
        if not _lock_exclusively(self._file):
            self._file.seek(0)
            holder = self._file.read().strip() or "another process"
            self._file.close()
            raise ConfigError(
                f"{run_dir} is being trained by {holder} now; wait for it to "
                "end (or stop it: it saves and exits on Ctrl-C), then resume."
            )
        self._file.seek(0)
        self._file.truncate()
        self._file.write(f"process {os.getpid()} on {socket.gethostname()}")
        self._file.flush()

    def close(self) -> None:
        """Releases the lock."""
        self._file.close()

    def __enter__(self) -> "RunLock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


LOCK_FILE = ".purejaxdrl.lock"
_LOCK_TRIES = 20  # 50 ms apart: a second


def _lock_exclusively(file: Any) -> bool:
    """Whether this process took `file`'s exclusive `flock` (within a second).

    An eval or export asking whether the run trains (`restored._trainer`)
    holds the lock shared for an instant: a trainer starting then waits it out.
    """
    import fcntl

    for _ in range(_LOCK_TRIES):
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            time.sleep(0.05)
    return False


def run_lock(directory: pathlib.Path | None) -> RunLock | None:
    """`RunLock(directory)` on process 0; None without a folder or elsewhere.

    The one rule for who holds a run's folder: `train` (`run.lock_run`), a
    sweep's or PBT run's training (`held`).

    Raises:
      ConfigError: another process trains the run now.

    """
    if directory is None or jax.process_index() != 0:
        return None
    return RunLock(directory)


def held(directory: pathlib.Path | None) -> contextlib.AbstractContextManager:
    """`run_lock(directory)` for a `with`; nothing where it takes none."""
    return run_lock(directory) or contextlib.nullcontext()


def holding_run_dir(train: Callable[..., Any]) -> Callable[..., Any]:
    """`train(result, ...)`, holding `result.run_dir` (`held`) while it runs.

    For a sweep's or PBT run's training: one process at a time per folder.
    """

    @functools.wraps(train)
    def held_train(result: Any, *args: Any, **kwargs: Any) -> Any:
        with held(result.run_dir):
            return train(result, *args, **kwargs)

    return held_train


def write_atomically(path: pathlib.Path, text: str) -> None:
    """Writes `text` to `path` whole or not at all: a kill leaves the old file."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def make_run_dir(config: TrainConfig) -> pathlib.Path:
    """Creates `run_dir/<env>_<algo>_<time>` and writes the resolved config there."""
    # Written out before the folder is made: a config YAML cannot hold leaves
    # no folder behind.
    text = yaml.safe_dump(run_dict(config), sort_keys=False)
    path = new_dir(
        config.run_dir,
        f"{config.env.id.replace('/', '-').replace(':', '-')}_{config.algo}",
    )
    (path / "config.yaml").write_text(text)
    return path


class UnstartedRun:
    """Removes a new run's folder when its setup fails: Ctrl-C while compiling.

    Given to `closed_on_error`, which closes it only when the setup raised.
    The folder then holds what the setup made (config.yaml, the lock, an empty
    checkpoints/) and no update: gone, `runs/` lists only runs that trained,
    and the same command starts afresh; so is its parent (train's --run-dir)
    where the setup made it (`parent_made`) and nothing else is in it. A
    folder holding anything else (a W&B run's files, which the error names)
    is kept.
    """

    # And, for a signal the chunk loop took over before its first chunk, its
    # logs of no update.
    MADE = frozenset(
        {"config.yaml", "checkpoints", LOCK_FILE, "metrics.jsonl", "tensorboard"}
    )

    def __init__(self, run_dir: pathlib.Path | None, parent_made: bool = False):
        self.run_dir = run_dir
        self.parent_made = parent_made

    def close(self) -> None:
        """Removes the folder if it holds only what the setup made."""
        folder = self.run_dir
        if folder is None or not folder.is_dir():
            return
        checkpoints = folder / "checkpoints"
        if {p.name for p in folder.iterdir()} <= self.MADE and not (
            checkpoints.is_dir() and any(checkpoints.iterdir())
        ):
            shutil.rmtree(folder, ignore_errors=True)
            if self.parent_made:
                with contextlib.suppress(OSError):  # not empty: another run's
                    folder.parent.rmdir()


def agreed_run_dir(path: pathlib.Path | None) -> pathlib.Path:
    """Process 0's run directory, known to every process (they all checkpoint).

    Through the coordination service, not a device broadcast: hosts may have
    unequal device counts (`coordination`).
    """
    return pathlib.Path(broadcast_text("run_dir", None if path is None else str(path)))


def last_values(history: list[dict[str, Any]], prefix: str) -> dict[str, float]:
    """The last finite value of each record key starting with `prefix`."""
    out: dict[str, float] = {}
    for record in history:
        for key, value in record.items():
            if key.startswith(prefix) and value is not None and not math.isnan(value):
                out[key] = float(value)
    return out


def _evaluated(history: list[dict[str, Any]]) -> dict[str, float]:
    """`eval/env/<name>` of the evaluation `eval_return` is of: the last."""
    last = [r for r in history if r.get("eval/mean_return") is not None]
    return last_values(last[-1:], "eval/env/")


def write_outputs(result: Any, total_steps: int, num_updates: int) -> None:
    """summary.json and the final network parameters (params.msgpack).

    Args:
      result: the run's TrainResult.
      total_steps: the run's budget of environment steps.
      num_updates: the run's budget of updates.

    """
    ret = result.mean_return
    summary = {
        "mean_return": None if math.isnan(ret) else ret,
        "env_steps": result.env_steps,
        "total_steps": total_steps,
        "updates": result.updates,
        "complete": result.updates == num_updates,
        "stopped_by": result.stopped_by,
        "compile_seconds": result.compile_seconds,
        "train_seconds": result.train_seconds,
        "steps_per_second": result.steps_per_second,
        "devices": result.num_devices,
        "steps_per_second_per_device": result.steps_per_second_per_device,
        # The last evaluation's (deterministic policy), NaN -> null without one.
        "eval_return": result.eval_return,
        # The environment's own metrics (`env/<name>`), as `mean_return`: their
        # last values; and the last evaluation's (`eval/env/<name>`).
        **last_values(result.history, "env/"),
        **(_evaluated(result.history) if not math.isnan(result.eval_return) else {}),
    }
    text = json.dumps(clean_record(summary), indent=2)
    with writing(path := result.run_dir / "summary.json"):  # a full disk: one line
        path.write_text(text + "\n")
    # The final network parameters, e.g. to evaluate the policy; the whole
    # state (optimiser, environments, keys) is in checkpoints/.
    params = jax.device_get(result.state.agent.params)
    with writing(path := result.run_dir / "params.msgpack"):
        path.write_bytes(flax.serialization.msgpack_serialize(params))
