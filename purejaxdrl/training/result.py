"""What a run reports, and the sinks and files its records and result go to.

Steps of the recipe (`train.py`) around its chunk loop.
"""

import contextlib
import dataclasses
import functools
import importlib.util
import json
import math
import pathlib
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from purejaxdrl.config import ConfigError
from purejaxdrl.observe.loggers import (
    LOGGERS,
    WANDB_MISSING,
    JsonlLogger,
    Logger,
    TensorBoardLogger,
    clean_record,
)
from purejaxdrl.observe.numbers import return_text
from purejaxdrl.observe.progress import (
    ConsoleLogger,
    NotebookProgress,
    progress_logger,
)
from purejaxdrl.training.checkpoint import Checkpointer
from purejaxdrl.training.experiment import Experiment
from purejaxdrl.training.log_writes import GuardedSink
from purejaxdrl.training.loop import ChunkLoop
from purejaxdrl.training.run import Run
from purejaxdrl.training.run_files import write_outputs


@dataclasses.dataclass
class TrainResult:
    """What a finished run reports.

    Attributes:
      state: the final RunnerState (parameters, optimiser, envs, key). A
        runner's `chunk` donates the state it is given (its buffers are reused
        for the next): to train on from it, pass a copy,
        `jax.tree.map(jnp.copy, result.state)`; given this one, `policy()`
        and `export` (which read its parameters) fail afterwards with "Array
        has been deleted".
      mean_return: mean return of the episodes completed in the last chunk that
        completed any (NaN if none ever did).
      env_steps: environment steps taken.
      compile_seconds: time to compile the training programs (or load them
        from the persistent cache) and build the first state: the progress
        line's `compiling` phase, plus a host runner's compiles inside chunks.
        A resume's checkpoint restore, before it, is in neither this nor
        train_seconds; nor is opening the loggers after it (metrics.jsonl
        rewritten, TensorBoard's writer: the first seconds of the progress
        line's `training` phase), which waits for compiling so that a run
        stopped while it compiles writes none of their files.
      train_seconds: training time up to the last chunk's record (not the
        final evaluation or checkpoint after it), compilation and the
        evaluations between chunks excluded (the records' `time`; the
        logging guide says what it counts); a resumed run's counts its
        sessions before too.
      steps_per_second: env_steps / train_seconds, all devices together (NaN
        when this session trained nothing), as the last record has it.
      num_devices: how many devices trained, over all processes: what
        summary.json and each metrics.jsonl record call `devices` (not
        `config.devices`, the local devices per process asked for, 0 for all).
      history: one record per chunk, as written to metrics.jsonl (on a resumed
        run, the records before the checkpoint too), NaN where the file has
        null (`episode/mean_return` of a chunk in which no episode ended).
      run_dir: the run's output folder, or None.
      updates: updates done (fewer than the budget when stopped early).
      stopped_by: what stopped the run early: a signal (SIGINT, SIGTERM; with
        or without a run directory) or `eval.stop_at` reached; None when it ran
        to the end.
      messages: what the run reported besides metrics (resume, skipped
        checkpoints, device changes).
      eval_return: mean return of the last evaluation (deterministic policy,
        `config.eval`), NaN without one.
      export: `export(out, *, overwrite=False)` writes the final policy to
        the folder `out` (made where missing) and returns it as a path (what
        `policy()` loads); it refuses the folders `policy(out)` and
        `export_policy` refuse, with a ConfigError: one holding an exported
        policy unless `overwrite`, and always a run directory (whose
        params.msgpack is the run's own). None when not made by `train`.
      config: the run's `TrainConfig`, the one it trained with; None when not
        made by `train`.

    `result.policy()` is the final policy, as `pjd.load_policy` gives an
    exported one.

    """

    state: Any
    mean_return: float
    env_steps: int
    compile_seconds: float
    train_seconds: float
    steps_per_second: float
    num_devices: int
    history: list[dict[str, Any]]
    run_dir: pathlib.Path | None
    updates: int = 0
    stopped_by: str | None = None
    messages: list[str] = dataclasses.field(default_factory=list)
    eval_return: float = math.nan
    # `write_policy` with this run's config, parameters and statistics, after
    # `check_policy_folder` (`train._exporter`).
    export: Callable[..., pathlib.Path] | None = dataclasses.field(
        default=None, repr=False
    )
    config: Any = dataclasses.field(default=None, repr=False)

    @property
    def steps_per_second_per_device(self) -> float:
        """Steps per device-second, as the last record has it (NaN: no updates).

        `steps_per_second / num_devices` for a run of one session; a run
        resumed on another device count weighs each session by its devices.
        """
        if math.isnan(self.steps_per_second) or not self.history:
            return math.nan
        last = self.history[-1]
        return float(last.get("steps_per_second_per_device", math.nan))

    def __repr__(self) -> str:
        # What a notebook cell shows: the run's outcome, not its state arrays.
        what = f"{self.config.algo} on {self.config.env.id}, " if self.config else ""
        parts = [
            f"{what}{self.updates:,} updates, {self.env_steps:,} env steps",
            f"return {return_text(self.mean_return)}",
        ]
        if not math.isnan(self.eval_return):
            parts.append(f"eval {return_text(self.eval_return)}")
        if not math.isnan(self.steps_per_second):
            parts.append(f"{self.steps_per_second:,.0f} steps/s")
        if self.stopped_by is not None:
            parts.append(f"stopped by {self.stopped_by}")
        if self.run_dir is not None:
            parts.append(f"run_dir={str(self.run_dir)!r}")
        return f"TrainResult({', '.join(parts)})"

    def policy(
        self, out: str | pathlib.Path | None = None, *, overwrite: bool = False
    ) -> Any:
        """The run's final policy (a `Policy`), as `load_policy` gives one.

        With `out`, it is also written there (`export(out, overwrite=...)`),
        as `purejaxdrl export` writes a run's (a run without files has none to
        export otherwise); a policy already in `out` is replaced only with
        `overwrite`, and a run directory is refused (ConfigError).
        """
        from purejaxdrl.training.policy.exported import load_policy

        if self.export is None:
            raise ValueError("this TrainResult was not made by train(): no policy")
        if out is not None:
            return load_policy(self.export(out, overwrite=overwrite))
        with tempfile.TemporaryDirectory() as folder:
            return load_policy(self.export(folder))


def check_sinks(
    log_to: Sequence[str] | None, has_run_dir: bool, loggers: Sequence[Any] | None = ()
) -> tuple[Sequence[Any], Sequence[str]]:
    """Named sinks exist and have a run directory; loggers are Loggers.

    Checked before anything compiles: a logger without `close` would
    otherwise fail after the last chunk, and the run's outputs with it.
    Returns (loggers, log_to), None read as none.
    """
    loggers, log_to = loggers or (), log_to or ()
    if callable(getattr(loggers, "write", None)):
        raise ConfigError(
            f"loggers={loggers!r} is one logger; pass a list of them, e.g. "
            f"loggers=[{type(loggers).__name__}(...)]"
        )
    for i, logger in enumerate(loggers):
        missing = [m for m in ("write", "close") if not callable(getattr(logger, m, 0))]
        if missing:
            raise ConfigError(
                f"loggers[{i}]={logger!r} has no {'() or '.join(missing)}(); a logger "
                "is an object with write(record) and close() "
                "(purejaxdrl.observe.loggers.Logger)"
            )
    if isinstance(log_to, str):
        raise ConfigError(
            f"log_to={log_to!r} is one string; pass a list of sink names, e.g. "
            f"log_to=[{log_to!r}]"
        )
    unknown = sorted(set(log_to) - set(LOGGERS))
    if unknown:
        raise ConfigError(f"log_to={unknown}: the sinks are {list(LOGGERS)}")
    if "wandb" in log_to and importlib.util.find_spec("wandb") is None:
        raise ConfigError(WANDB_MISSING)  # before anything trains
    if log_to and not has_run_dir:
        raise ConfigError(
            f"log_to={list(log_to)} writes into the run directory; pass "
            "write_files=True"
        )
    return loggers, log_to


def open_progress(
    run: Run, exp: Experiment, console: bool
) -> ConsoleLogger | NotebookProgress | None:
    """The progress line (process 0, when asked for), in its `compiling` phase.

    Opened before compilation, so that the seconds XLA takes are not silent;
    the recipe says `progress.phase("training")` when the chunks start.
    """
    if not (console and run.main):
        return None
    config = run.config
    total_steps = config.num_updates * exp.runner.steps_per_update
    description = f"{config.algo} {config.env.id}"
    progress = progress_logger(total_steps, description, exp.runner.mesh.size)
    # A host runner compiles little before its first chunk: its learner's
    # update compiles on the first batch the actors send.
    progress.phase("preparing" if exp.runner.compiles_late else "compiling")
    return progress


@contextlib.contextmanager
def closed_on_error(*opened: Any) -> Iterator[Callable[[Any], Any]]:
    """Closes what the block opened if it raises: nothing is left running.

    Yields `keep(x) -> x`, which adds `x` (anything with `close()`; None is
    skipped) to what is closed, newest first: a live progress line gives the
    terminal back, a W&B run ends, a checkpointer finishes its saves, host
    environment pools close. On success they stay open, for training.
    """
    things = [x for x in opened if x is not None]

    def keep(thing: Any) -> Any:
        if thing is not None:
            things.append(thing)
        return thing

    try:
        yield keep
    except BaseException:
        for thing in reversed(things):
            with contextlib.suppress(Exception):  # the error raised says why
                thing.close()
        raise


def open_sinks(
    run: Run,
    history: list[dict[str, Any]],
    loggers: Sequence[Logger],
    wandb: Logger | None,
    log_to: Sequence[str],
    progress: Logger | None,
) -> list[Logger]:
    """Where each chunk's record goes; only process 0 writes.

    A resumed run's metrics.jsonl is rewritten with the checkpoint's records,
    not what the killed process wrote after it. `progress` (`open_progress`'s)
    comes last. The run's own files raise a LogWriteError where they cannot
    be written (`log_writes`).
    """
    sinks = list(loggers) if run.main else []
    if run.run_dir is not None and run.main:
        jsonl = run.run_dir / "metrics.jsonl"
        # No update yet: a new run's folder goes with the error (UnstartedRun),
        # a resume had none to continue from: either way, the command again.
        unstarted = not history

        def open_jsonl() -> JsonlLogger:
            text = "".join(json.dumps(clean_record(r)) + "\n" for r in history)
            jsonl.write_text(text)
            return JsonlLogger(jsonl)

        # Ours: a full disk is one line (a user's logger raises as it does).
        sinks.append(GuardedSink(jsonl, open_jsonl, unstarted))
        if "tensorboard" in log_to:
            # Purged past the checkpoint, or whole: a resume with no usable
            # checkpoint starts over (a new run's folder is empty anyway).
            at = int(history[-1]["env_steps"]) if history else -1
            events = run.run_dir / "tensorboard"
            opened = functools.partial(TensorBoardLogger, events, at)
            sinks.append(GuardedSink(events, opened, unstarted))
        # Loggers are not in the saved config: a resume names them again. Its
        # folder tells even a run with no history yet (W&B refused to start).
        for name in LOGGERS:
            if name not in log_to and (run.run_dir / name).is_dir():
                run.say(
                    f"this run used --logger {name} before (its {name}/ folder); "
                    f"it does not now: pass --logger {name} with --resume to go on"
                )
    if wandb is not None:
        sinks.append(wandb)
    if progress is not None:
        sinks.append(progress)
    return sinks


def close(sinks: Sequence[Logger], checkpointer: Checkpointer | None) -> None:
    """Closes every sink and the checkpointer, even after an error.

    A sink whose close fails does not keep the others (or the checkpointer)
    open; the first such error is raised once all are closed.
    """
    errors = []
    for sink in sinks:
        try:
            sink.close()
        except Exception as e:  # a user's logger: any error
            errors.append(e)
    if checkpointer is not None:
        with contextlib.suppress(Exception):  # an error is already raised
            checkpointer.close()
    if errors:
        raise errors[0]


def finish(
    run: Run,
    loop: ChunkLoop,
    state: Any,
    stopped_by: str | None,
    compile_seconds: float,
    export: Callable[..., pathlib.Path] | None = None,
) -> TrainResult:
    """The run's result; summary.json and params.msgpack in its directory."""
    steps = (loop.done - loop.start_updates) * loop.steps_per_update
    # Training time is the last chunk's record's: over every session of the
    # run, and without what follows the last chunk (its evaluation, the wait
    # for the last checkpoint), as the records' steps/s have it.
    if steps and loop.history:
        train_seconds = float(loop.history[-1]["time"])
    else:
        train_seconds = loop.seconds_before + loop.elapsed()
    total = loop.done * loop.steps_per_update
    result = TrainResult(
        state=state,
        mean_return=loop.mean_return,
        env_steps=total,
        compile_seconds=compile_seconds + loop.late_compile(),
        train_seconds=train_seconds,
        steps_per_second=total / train_seconds if steps else math.nan,
        num_devices=loop.num_devices,
        history=loop.history,
        run_dir=run.run_dir,
        updates=loop.done,
        stopped_by=stopped_by,
        messages=run.messages,
        eval_return=loop.eval_return,
        export=export,
        config=run.config,
    )
    # A resumed run that trains nothing (it was complete) keeps the summary of
    # the session that trained, unless that one died before writing it.
    written = run.run_dir is not None and (run.run_dir / "summary.json").exists()
    if run.run_dir is not None and run.main and (steps or not written):
        num_updates = run.config.num_updates
        write_outputs(result, num_updates * loop.steps_per_update, num_updates)
    return result
