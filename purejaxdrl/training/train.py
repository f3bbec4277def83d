"""`train()`: one run from a TrainConfig, as a recipe of host-side steps.

Prepare the experiment and run directory, compile, restore or init, then the
chunk loop (`loop.ChunkLoop`: dispatch, observe, evaluate, checkpoint, stop),
then finish. A run with a run directory checkpoints its whole state, resumes
exactly, stops cleanly on SIGINT / SIGTERM and refuses to train on NaNs.
"""

import contextlib
import dataclasses
import json
import math
import pathlib
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax

from purejaxdrl.observe.loggers import (
    LOGGERS,
    JsonlLogger,
    Logger,
    TensorBoardLogger,
    in_notebook,
    progress_logger,
)
from purejaxdrl.rng import make_key
from purejaxdrl.runners.anakin import RunnerState, abstract_state
from purejaxdrl.training.checkpoint import Checkpointer
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.experiment import Experiment, make_experiment
from purejaxdrl.training.loop import ChunkLoop
from purejaxdrl.training.programs import compile_programs, eval_key
from purejaxdrl.training.run import (
    Run,
    Start,
    attach_checkpointer,
    open_run,
    restore,
    start_wandb,
)
from purejaxdrl.training.run_files import write_outputs
from purejaxdrl.training.schedule import (
    chunk_lengths,
    chunk_schedule,
    summarize_chunk,
)

__all__ = ["TrainResult", "chunk_lengths", "summarize_chunk", "train"]


@dataclasses.dataclass
class TrainResult:
    """What a finished run reports.

    Attributes:
      state: the final RunnerState (parameters, optimiser, envs, key).
      mean_return: mean return of the episodes completed in the last chunk that
        completed any (NaN if none ever did).
      env_steps: environment steps taken.
      compile_seconds: time to compile the training programs.
      train_seconds: wall time after compilation.
      steps_per_second: env_steps / train_seconds (compile time excluded), all
        devices together.
      num_devices: how many devices trained (over all processes).
      history: one record per chunk, as written to metrics.jsonl (on a resumed
        run, the records before the checkpoint too).
      run_dir: the run's output folder, or None.
      updates: updates done (fewer than the budget when stopped early).
      stopped_by: what stopped the run early: a signal (SIGINT, SIGTERM) or
        `eval.stop_at` reached; None when it ran to the end.
      messages: what the run reported besides metrics (resume, skipped
        checkpoints, device changes).
      eval_return: mean return of the last evaluation (deterministic policy,
        `config.eval`), NaN without one.

    """

    state: RunnerState
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


def train(
    config: TrainConfig,
    *,
    loggers: Sequence[Logger] = (),
    console: bool | None = None,
    write_files: bool = False,
    resume: str | pathlib.Path | None = None,
    notify: Callable[[str], None] | None = None,
    log_to: Sequence[str] = (),
) -> TrainResult:
    """Trains `config.algo` on `config.env`. Not jittable: the host loop.

    With a run directory (`write_files` or `resume`), the whole runner state is
    checkpointed every `config.checkpoint.every` chunks and at the end, in the
    background; SIGINT or SIGTERM saves after the current chunk and returns
    (`stopped_by`); a NaN or infinite loss or parameter stops the run.

    Args:
      config: the run.
      loggers: extra sinks receiving one record per chunk.
      console: show a live progress bar (in the Jupyter cell when run from a
        notebook, else on stderr); None: only in Jupyter.
      write_files: write config.yaml, metrics.jsonl, summary.json, checkpoints
        and the final network parameters (params.msgpack) to a new folder
        under `config.run_dir` (files other than checkpoints: process 0 only).
      resume: a run directory to continue from its newest checkpoint that
        verifies; `config` must be its config (see `resume.resume_config`).
        The continued run is bitwise the uninterrupted one on the same devices.
      notify: called with each message (resume, skipped checkpoints, device
        changes) on process 0; they are also in `TrainResult.messages`.
      log_to: named sinks writing into the run directory (so they need one):
        "tensorboard" (event files in `tensorboard/`), "wandb" (a W&B run,
        files in `wandb/`; `WANDB_MODE=offline` keeps them local).

    Returns:
      A TrainResult (compile time reported separately from steps/s).

    Raises:
      NonFiniteError: a loss, metric or parameter became NaN or infinite; the
        message names the update, the metric and the last good checkpoint.

    """
    _check_sinks(log_to, write_files or resume is not None)
    if console is None:
        console = in_notebook()
    exp = make_experiment(config)
    run = open_run(config, resume=resume, write_files=write_files, notify=notify)
    wandb = start_wandb(run, log_to)
    key = make_key(config.seed, config.rng_impl)
    start_compile = time.perf_counter()
    abstract = abstract_state(exp.runner, key)
    attach_checkpointer(run, exp, abstract)
    start = restore(run, exp) if resume is not None else Start()
    schedule = chunk_schedule(config, start.done)
    programs = compile_programs(
        exp, abstract, key, [n for _, n in schedule], need_init=start.state is None
    )
    state = programs.init(key) if start.state is None else start.state
    if run.checkpointer is not None:
        jax.block_until_ready(run.checkpointer.pack(state))  # compiles the packer
    jax.block_until_ready(state)
    compile_seconds = time.perf_counter() - start_compile

    sinks = open_sinks(run, exp, start.history, loggers, wandb, log_to, console)
    loop = ChunkLoop(
        run=run,
        programs=programs,
        sinks=sinks,
        steps_per_update=exp.runner.steps_per_update,
        num_devices=exp.runner.mesh.size,
        done=start.done,
        history=start.history,
        seconds_before=start.seconds_before,
        eval_key=eval_key(key),
        last_saved=start.done if resume is not None else None,
    )
    try:
        state, stopped_by = loop.run_schedule(state, schedule)
    finally:
        close(sinks, run.checkpointer)
    return finish(run, loop, state, stopped_by, compile_seconds)


def _check_sinks(log_to: Sequence[str], has_run_dir: bool) -> None:
    """Named sinks exist and have a run directory to write into."""
    unknown = sorted(set(log_to) - set(LOGGERS))
    if unknown:
        raise ValueError(f"log_to={unknown}: the sinks are {list(LOGGERS)}")
    if log_to and not has_run_dir:
        raise ValueError(
            f"log_to={list(log_to)} writes into the run directory; pass "
            "write_files=True"
        )


def open_sinks(
    run: Run,
    exp: Experiment,
    history: list[dict[str, Any]],
    loggers: Sequence[Logger],
    wandb: Logger | None,
    log_to: Sequence[str],
    console: bool,
) -> list[Logger]:
    """Where each chunk's record goes; only process 0 writes.

    A resumed run's metrics.jsonl is rewritten with the checkpoint's records,
    not what the killed process wrote after it.
    """
    sinks = list(loggers) if run.main else []
    if run.run_dir is not None and run.main:
        jsonl = run.run_dir / "metrics.jsonl"
        jsonl.write_text("".join(json.dumps(r) + "\n" for r in history))
        sinks.append(JsonlLogger(jsonl))
        if "tensorboard" in log_to:
            sinks.append(TensorBoardLogger(run.run_dir / "tensorboard"))
    if wandb is not None:
        sinks.append(wandb)
    if console and run.main:
        config = run.config
        total_steps = config.num_updates * exp.runner.steps_per_update
        description = f"{config.algo} {config.env.id}"
        sinks.append(progress_logger(total_steps, description, exp.runner.mesh.size))
    return sinks


def close(sinks: Sequence[Logger], checkpointer: Checkpointer | None) -> None:
    """Closes the sinks and the checkpointer, even after an error."""
    for sink in sinks:
        sink.close()
    if checkpointer is not None:
        with contextlib.suppress(Exception):  # an error is already raised
            checkpointer.close()


def finish(
    run: Run,
    loop: ChunkLoop,
    state: RunnerState,
    stopped_by: str | None,
    compile_seconds: float,
) -> TrainResult:
    """The run's result; summary.json and params.msgpack in its directory."""
    train_seconds = time.perf_counter() - loop.start
    steps = (loop.done - loop.start_updates) * loop.steps_per_update
    result = TrainResult(
        state=state,
        mean_return=loop.mean_return,
        env_steps=loop.done * loop.steps_per_update,
        compile_seconds=compile_seconds,
        train_seconds=train_seconds,
        steps_per_second=steps / train_seconds if steps else math.nan,
        num_devices=loop.num_devices,
        history=loop.history,
        run_dir=run.run_dir,
        updates=loop.done,
        stopped_by=stopped_by,
        messages=run.messages,
        eval_return=loop.eval_return,
    )
    if run.run_dir is not None and run.main:
        num_updates = run.config.num_updates
        write_outputs(result, num_updates * loop.steps_per_update, num_updates)
    return result
