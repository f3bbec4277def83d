"""Builds a run from a TrainConfig and drives it: the host loop.

The host dispatches compiled chunks of updates and reads each chunk's metrics
only after the next chunk is queued, so the device never waits for logging or
checkpointing. A run with a run directory checkpoints its whole state, resumes
exactly, stops cleanly on SIGINT / SIGTERM and refuses to train on NaNs.
"""

import contextlib
import dataclasses
import functools
import json
import math
import pathlib
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import yaml
from jax.sharding import PartitionSpec as P

from purejaxdrl.config import ConfigError, to_dict
from purejaxdrl.observe.evaluation import make_evaluate
from purejaxdrl.observe.loggers import (
    LOGGERS,
    JsonlLogger,
    Logger,
    TensorBoardLogger,
    WandbLogger,
    in_notebook,
    progress_logger,
)
from purejaxdrl.parallel import is_main_process
from purejaxdrl.rng import make_key
from purejaxdrl.runners.anakin import RunnerState, abstract_state, shardings
from purejaxdrl.training.checkpoint import Checkpointer
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.experiment import make_experiment
from purejaxdrl.training.faults import NonFiniteError, StopSignals, first_non_finite
from purejaxdrl.training.packing import describe
from purejaxdrl.training.run_files import agreed_run_dir, make_run_dir, write_outputs

# Evaluation keys fold this into the run's key: a stream training never uses.
EVAL_STREAM = 0x45564C


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


def chunk_lengths(num_updates: int, num_logs: int) -> list[int]:
    """Splits `num_updates` into about `num_logs` chunks of equal length.

    Prefers a length that divides `num_updates` (one compiled program); otherwise
    a last, shorter chunk is compiled separately.
    """
    target = max(1, num_updates // max(1, num_logs))
    divisors = [d for d in range(1, num_updates + 1) if num_updates % d == 0]
    best = min(divisors, key=lambda d: abs(math.log(d / target)))
    if 0.5 <= best / target <= 2.0:
        return [best] * (num_updates // best)
    lengths = [target] * (num_updates // target)
    if num_updates % target:
        lengths.append(num_updates % target)
    return lengths


def summarize_chunk(metrics: dict[str, np.ndarray]) -> dict[str, float]:
    """Means of per-update metrics over a chunk; episode means from the sums."""
    out = {
        k: float(np.mean(v)) for k, v in metrics.items() if not k.startswith("episode/")
    }
    if "episode/count" in metrics:
        count = float(np.sum(metrics["episode/count"]))
        out["episode/count"] = count
        for name in ("return", "length"):
            total = float(np.sum(metrics[f"episode/{name}_sum"]))
            out[f"episode/mean_{name}"] = total / count if count else math.nan
    return out


def compile_all(lower: dict[Any, Callable[[], Any]]) -> dict[Any, Any]:
    """Lowers programs one by one and compiles each on its own thread.

    XLA compiles outside the GIL, so a program compiles while the next one is
    traced and lowered, and all of them compile side by side on the cores.

    Args:
      lower: name -> a function returning the lowered program (`jit.lower`);
        longest to compile first.

    Returns:
      name -> the compiled program.

    """
    with ThreadPoolExecutor(len(lower) or 1) as pool:
        futures = {k: pool.submit(f().compile) for k, f in lower.items()}
        return {k: f.result() for k, f in futures.items()}


def chunk_schedule(config: TrainConfig, done: int) -> list[tuple[int, int]]:
    """(chunk index, length) of the chunks left after `done` updates.

    A resumed run continues the same schedule (same chunk lengths, so the same
    compiled programs, so bitwise the same updates). If `done` is not a chunk
    boundary of it (the budget or logging was changed with --override), the
    rest is split afresh.
    """
    lengths = chunk_lengths(config.num_updates, config.num_logs)
    ends = np.cumsum([0, *lengths])
    if done in ends:
        first = int(np.searchsorted(ends, done))
        return list(enumerate(lengths))[first:]
    left = config.num_updates - done
    if left <= 0:
        return []
    logs = max(1, round(config.num_logs * left / config.num_updates))
    first = int(np.searchsorted(ends, done))
    return [(first + i, n) for i, n in enumerate(chunk_lengths(left, logs))]


def _agreed_stop(stop: StopSignals) -> bool:
    """Whether any process was asked to stop (all must stop at the same chunk)."""
    if jax.process_count() == 1:
        return stop.requested is not None
    from jax.experimental import multihost_utils

    flags = multihost_utils.process_allgather(np.int32(stop.requested is not None))
    if np.any(flags) and stop.requested is None:
        stop.requested = "a peer's signal"
    return bool(np.any(flags))


@jax.jit
def _params_finite(state: RunnerState) -> jax.Array:
    return jnp.all(
        jnp.stack([jnp.isfinite(x).all() for x in jax.tree.leaves(state.agent.params)])
    )


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
    unknown = sorted(set(log_to) - set(LOGGERS))
    if unknown:
        raise ValueError(f"log_to={unknown}: the sinks are {list(LOGGERS)}")
    if log_to and not (write_files or resume):
        raise ValueError(
            f"log_to={list(log_to)} writes into the run directory; pass "
            "write_files=True"
        )
    if console is None:
        console = in_notebook()
    exp = make_experiment(config)
    runner = exp.runner
    steps_per_update = runner.steps_per_update
    total_steps = config.num_updates * steps_per_update
    num_devices = runner.mesh.size
    # Every process runs the same program; only process 0 speaks.
    main = is_main_process()
    messages: list[str] = []

    def say(line: str) -> None:
        messages.append(line)
        if notify is not None and main:
            notify(line)

    run_dir = None
    if resume is not None:
        run_dir = pathlib.Path(resume)
        if main:  # the config it continues with (changed only with --override)
            text = yaml.safe_dump(to_dict(config), sort_keys=False)
            (run_dir / "config.yaml").write_text(text)
    elif write_files:
        run_dir = agreed_run_dir(make_run_dir(config) if main else None)
    key = make_key(config.seed, config.rng_impl)
    checkpointer = None
    wandb = None
    if "wandb" in log_to and main:
        # Started before compiling: W&B's service sets itself up (a process,
        # system metadata) while XLA compiles, not while the run trains.
        wandb = WandbLogger(run_dir, run_dir.name, to_dict(config))
    start_compile = time.perf_counter()
    abstract = abstract_state(runner, key)
    if run_dir is not None:
        checkpointer = Checkpointer(
            run_dir / "checkpoints",
            abstract,
            shardings(runner, abstract),
            runner.mesh,
            keep=config.checkpoint.keep,
            keep_best=config.checkpoint.keep_best,
        )
        state_index = describe(abstract)

    state, done, history, seconds_before = None, 0, [], 0.0
    if resume is not None and exp.agent.state_spec != P():
        # A replay buffer is split into one shard per device, with its own
        # FIFO position: it cannot be re-split like the environments.
        saved = (checkpointer.newest_meta() or {}).get("devices", num_devices)
        if saved != num_devices:
            raise ConfigError(
                f"--resume {run_dir}: this {config.algo} run keeps a replay buffer "
                f"in {saved} shards, one per device, and resumes only on {saved} "
                f"devices, not {num_devices}; pass --devices {saved}."
            )
    if resume is not None:
        restored = checkpointer.restore_latest()
        for line in restored.skipped:
            say(line)
        if restored.step is None:
            say(f"no usable checkpoint in {run_dir}; starting from update 0")
        else:
            state, done = restored.state, restored.step
            history = list(restored.meta["history"])
            seconds_before = float(restored.meta["train_seconds"])
            say(
                f"resumed at update {done:,} of {config.num_updates:,} from "
                f"{checkpointer.directory / str(done)}"
            )
            saved_devices = restored.meta.get("devices")
            if saved_devices != num_devices:
                say(
                    f"saved on {saved_devices} device(s), resumed on {num_devices}: "
                    f"learner state replicated, the {config.num_envs} environments "
                    f"re-split to {config.num_envs // num_devices} per device"
                )
    schedule = chunk_schedule(config, done)
    lower: dict[Any, Callable[[], Any]] = {
        n: functools.partial(runner.train_chunk(n).lower, abstract) for _, n in schedule
    }
    if state is None:
        lower["init"] = functools.partial(runner.init.lower, key)
    evaluate, eval_every = None, config.eval.every
    eval_key = jax.random.fold_in(key, EVAL_STREAM)
    if config.eval.episodes:
        evaluate = make_evaluate(
            exp.env,
            exp.network,
            episodes=config.eval.episodes,
            max_steps=config.eval.max_steps,
        )
        args = (abstract.agent.params, abstract.env_params, eval_key)
        lower["evaluate"] = functools.partial(evaluate.lower, *args)
    programs = compile_all(lower)
    evaluate = programs.pop("evaluate", None)
    if state is None:
        state = programs.pop("init")(key)
    if checkpointer is not None:
        jax.block_until_ready(checkpointer.pack(state))  # compiles the packer
    jax.block_until_ready(state)
    compile_seconds = time.perf_counter() - start_compile

    sinks = list(loggers) if main else []
    if run_dir is not None and main:
        jsonl = run_dir / "metrics.jsonl"
        # A resumed run's records are the checkpoint's, not what the killed
        # process wrote after it.
        jsonl.write_text("".join(json.dumps(r) + "\n" for r in history))
        sinks.append(JsonlLogger(jsonl))
        if "tensorboard" in log_to:
            sinks.append(TensorBoardLogger(run_dir / "tensorboard"))
    if wandb is not None:
        sinks.append(wandb)
    if console and main:
        description = f"{config.algo} {config.env.id}"
        sinks.append(progress_logger(total_steps, description, num_devices))

    mean_return = eval_return = math.nan
    for rec in history:
        value = rec.get("episode/mean_return")
        if value is not None and not math.isnan(value):
            mean_return = value
    start_updates, last_saved = done, (done if resume is not None else None)
    last_index = schedule[-1][0] if schedule else -1
    every = config.checkpoint.every
    start = time.perf_counter()

    def meta(updates: int) -> dict[str, Any]:
        return {
            "updates": updates,
            "env_steps": updates * steps_per_update,
            "num_updates": config.num_updates,
            "train_seconds": seconds_before + time.perf_counter() - start,
            "devices": num_devices,
            "config": to_dict(config),
            "history": list(history),
            "state": state_index,
        }

    def check_finite(host: dict, length: int, ends_at: int, finite: Any) -> None:
        bad = first_non_finite(host)
        if bad is None and finite is not None and not bool(finite):
            bad = ("a parameter", length - 1, math.nan)
        if bad is None:
            return
        name, index, value = bad
        if checkpointer is not None:
            checkpointer.wait()  # the last good checkpoint is on disk
        if last_saved is None:
            where = "no checkpoint was saved before it"
        else:
            where = (
                f"the last good checkpoint is update {last_saved:,} in "
                f"{checkpointer.directory / str(last_saved)}; resume it with "
                f"`purejaxdrl train --resume {run_dir} --override` and a lower "
                "learning rate"
            )
        raise NonFiniteError(
            f"update {ends_at - length + index + 1:,}: {name} is {value}; the run "
            f"stopped instead of training on non-finite values; {where}."
        )

    def finish(
        metrics: Any, length: int, snapshot: Any, ends_at: int, evaluated: Any
    ) -> None:
        nonlocal done, mean_return, last_saved, eval_return, reached
        host = jax.device_get(metrics)  # blocks on this chunk only
        check_finite(host, length, ends_at, snapshot and snapshot[1])
        summary = summarize_chunk(host)
        done = ends_at
        elapsed = time.perf_counter() - start
        sps = (done - start_updates) * steps_per_update / elapsed
        rec = {
            "env_steps": done * steps_per_update,
            "updates": done,
            "time": seconds_before + elapsed,
            "steps_per_second": sps,
            "steps_per_second_per_device": sps / num_devices,
            "devices": num_devices,
            "eta_seconds": (config.num_updates - done) * steps_per_update / sps,
            **summary,
        }
        if not math.isnan(summary.get("episode/mean_return", math.nan)):
            mean_return = summary["episode/mean_return"]
        if evaluated is not None:
            returns, lengths = jax.device_get(evaluated)
            eval_return = float(np.mean(returns))
            rec["eval/mean_return"] = eval_return
            rec["eval/mean_length"] = float(np.mean(lengths))
            if stop_at is not None and eval_return >= stop_at and reached is None:
                reached = f"eval.stop_at ({eval_return:.1f} >= {stop_at:g})"
        history.append(rec)
        for sink in sinks:
            sink.write(rec)
        if snapshot is not None:
            metric = summary.get("episode/mean_return")
            checkpointer.save(done, snapshot[0], meta(done), metric)
            last_saved = done

    signals = StopSignals(announce=main) if checkpointer else contextlib.nullcontext()
    stopped_by = None
    # Every process reads the same evaluation, so all stop after the same chunk.
    stop_at, reached = config.eval.stop_at, None
    try:
        with signals:
            pending, dispatched = None, done
            for index, length in schedule:
                if checkpointer is not None and _agreed_stop(signals):
                    break
                state, metrics = programs[length](state)  # queued, not awaited
                dispatched += length
                snapshot = evaluated = None
                if evaluate is not None and (
                    index == last_index
                    or (eval_every and (index + 1) % eval_every == 0)
                ):
                    # Queued behind the chunk, read with its metrics; its own
                    # key stream, so training is the same with or without it.
                    evaluated = evaluate(
                        state.agent.params,
                        state.env_params,
                        jax.random.fold_in(eval_key, index),
                    )
                if checkpointer is not None and (
                    index == last_index or (every and (index + 1) % every == 0)
                ):
                    # Device copies queued behind this chunk; `state` itself is
                    # donated to the next one.
                    snapshot = (checkpointer.pack(state), _params_finite(state))
                if pending is not None:
                    finish(*pending)
                pending = (metrics, length, snapshot, dispatched, evaluated)
                if reached is not None:
                    break  # after the chunk already queued
            if pending is not None:
                finish(*pending)
            if checkpointer is not None and signals.requested is not None:
                stopped_by = signals.requested
            elif reached is not None and done < config.num_updates:
                stopped_by = reached
            if checkpointer is not None and stopped_by and last_saved != done:
                snapshot = (checkpointer.pack(state), _params_finite(state))
                check_finite({}, 1, done, snapshot[1])
                checkpointer.save(done, snapshot[0], meta(done))
                last_saved = done
            jax.block_until_ready(state)
            if checkpointer is not None:
                checkpointer.wait()
    finally:
        for sink in sinks:
            sink.close()
        if checkpointer is not None:
            with contextlib.suppress(Exception):  # an error is already raised
                checkpointer.close()
    train_seconds = time.perf_counter() - start
    steps = (done - start_updates) * steps_per_update
    result = TrainResult(
        state=state,
        mean_return=mean_return,
        env_steps=done * steps_per_update,
        compile_seconds=compile_seconds,
        train_seconds=train_seconds,
        steps_per_second=steps / train_seconds if steps else math.nan,
        num_devices=num_devices,
        history=history,
        run_dir=run_dir,
        updates=done,
        stopped_by=stopped_by,
        messages=messages,
        eval_return=eval_return,
    )
    if run_dir is not None and main:
        write_outputs(result, total_steps, config.num_updates)
    return result
