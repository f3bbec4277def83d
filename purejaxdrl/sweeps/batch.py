"""One batch of a sweep's runs: its chunks, their records and checkpoints."""

import math
import pathlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import jax

from purejaxdrl.observe.plots import RETURN
from purejaxdrl.parallel import resume_command
from purejaxdrl.runners.anakin import RunnerState
from purejaxdrl.sweeps.checkpoints import BatchCheckpoint
from purejaxdrl.sweeps.messages import progress_line
from purejaxdrl.sweeps.result import SweepResult
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.faults import first_non_finite
from purejaxdrl.training.loop import pipelined
from purejaxdrl.training.schedule import summarize_chunk
from purejaxdrl.types import Metrics


class SweepStopped(Exception):
    """A sweep or PBT run stopped by a signal (SIGINT, SIGTERM) after saving.

    `pjd.resume_sweep(e.path)` (`purejaxdrl sweep --resume DIR`) continues a
    sweep, `pjd.resume_pbt(e.path)` (`purejaxdrl pbt --resume DIR`) a PBT run;
    the message names both.

    Attributes:
      reason: what stopped it and when (`stopped by SIGINT after update 5 of 8`).
      path: the directory to resume (None only inside a batch, before the
        sweep or population that trains it adds it).
      command: `sweep` or `pbt`, whichever wrote `path`.
      devices: its `devices` setting (0: all of this process's), which the
        printed resume command's fake CPU device setting follows.

    """

    def __init__(
        self,
        reason: str,
        path: str | pathlib.Path | None = None,
        command: str = "sweep",
        devices: int = 0,
    ) -> None:
        self.reason = reason
        self.path = None if path is None else pathlib.Path(path)
        self.command = command
        self.devices = devices
        super().__init__(
            reason
            if self.path is None
            else f"{reason}; continue with: {resume_call(command, self.path, devices)}"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from its parts (not its message) when pickled, path kept.
        return type(self), (self.reason, self.path, self.command, self.devices)


def resume_call(command: str, path: pathlib.Path, devices: int = 0) -> str:
    """How to continue `command`'s directory `path`: in Python, then the CLI.

    `devices` is the sweep's or PBT run's `devices` setting (0: all local).
    """
    cli = resume_command(command, path, devices=devices)
    return f"pjd.resume_{command}({str(path)!r}) ({cli})"


def train_batch(
    compiled: Mapping[int, Any],
    schedule: Sequence[int],
    hps: Any,
    states: RunnerState,
    runs: Sequence[int],
    config: TrainConfig,
    result: SweepResult,
    progress: Callable[[str], None] | None = None,
    *,
    done: int = 0,
    checkpoint: BatchCheckpoint | None = None,
    stop: Callable[[], str | None] | None = None,
    seconds_before: float = 0.0,
) -> RunnerState:
    """Runs the chunks of one batch, recording each real run's metrics.

    Chunk k+1 is dispatched before chunk k's metrics are read (`pipelined`,
    as in `train`).
    `result` receives, per run, one record per chunk and the update at which
    it first went non-finite; `progress` a line per chunk. Chunks that end at
    or before `done` updates (a restored state) are skipped; with a
    `checkpoint`, the state after every `checkpoint.every`-th chunk but the
    last is saved with the records up to it.

    With `stop` (what a signal asked for, or None) and a `checkpoint`: once
    it asks, no further chunk is dispatched; those already dispatched are
    recorded, the state after them is saved with its records, and
    `SweepStopped` is raised (after the save completes).

    Records' `time` counts the batch's training time before a restore too
    (`seconds_before`, as a resumed single run's does).
    """
    start = time.perf_counter()
    every = config.checkpoint.every
    stopped: list[tuple[str, int]] = []  # (signal, updates) once asked to stop
    saved = [done]  # updates of the checkpoints this batch holds

    def finish(metrics: Metrics, length: int, ends_at: int, packed: Any) -> None:
        host = jax.device_get(metrics)  # [batch, length] per name
        elapsed = time.perf_counter() - start
        record_chunk(
            result, runs, host, length, ends_at, seconds_before + elapsed, config
        )
        if packed is not None:
            checkpoint.save(ends_at, packed, result, list(runs))
            saved.append(ends_at)
        if progress is not None:
            returns = [result.histories[r][-1].get(RETURN, math.nan) for r in runs]
            sps = (ends_at - done) * config.steps_per_update * len(runs) / elapsed
            bad = [result.diverged[r] is not None for r in runs]
            progress(progress_line(returns, ends_at, config.num_updates, sps, bad))

    def dispatched() -> Iterator[tuple[Metrics, int, int, Any]]:
        nonlocal states
        ends_at = reached = 0
        for k, length in enumerate(schedule):
            ends_at += length
            if ends_at <= done:
                reached = ends_at
                continue
            if stop is not None and checkpoint is not None and (why := stop()):
                stopped.append((why, reached))
                return
            states, metrics = compiled[length](hps, states)  # queued, not awaited
            reached = ends_at
            # every 0: none falls due; a stop signal still saves (below).
            due = checkpoint is not None and every > 0 and (k + 1) % every == 0
            # Copied now, before the next chunk takes `states` (donated).
            last = k + 1 == len(schedule)
            packed = checkpoint.pack(states) if due and not last else None
            yield metrics, length, ends_at, packed

    try:
        pipelined(dispatched(), lambda chunk: finish(*chunk))
    except BaseException:
        if checkpoint is not None:  # what was saved is complete on disk
            checkpoint.close()
        raise
    if stopped:
        why, reached = stopped[0]
        if reached > saved[-1]:  # else the newest checkpoint already holds it
            checkpoint.save(reached, checkpoint.pack(states), result, list(runs))
        checkpoint.close()  # waits for the save
        raise SweepStopped(
            f"stopped by {why} after update {reached:,} of {config.num_updates:,}"
        )
    return states


def seconds_trained(history: list[dict[str, Any]]) -> float:
    """How long a run trained before this process: its records' last `time`.

    0 for a run that starts afresh. A resumed batch's or population's records
    go on from there, so its steps/s divides all its steps by all its time.
    """
    return float(history[-1]["time"]) if history else 0.0


def record_chunk(
    result: Any,
    runs: Sequence[int],
    host: Metrics,
    length: int,
    ends_at: int,
    elapsed: float,
    config: TrainConfig,
) -> None:
    """Appends each run's record of a chunk, and notes where it first diverged.

    Args:
      result: receives the records (`histories`) and divergences
        (`diverged`): a SweepResult, or PBT's PBTResult (runs are members).
      runs: the batch's real runs, in batch order (padding comes after them).
      host: the chunk's metrics on the host, [batch, length] per name.
      length: updates in the chunk.
      ends_at: updates done when the chunk ends.
      elapsed: seconds the batch has trained (before a resume too).
      config: any run of the batch (for its steps per update).

    """
    steps_per_update = config.steps_per_update
    for j, run in enumerate(runs):
        mine = {k: v[j] for k, v in host.items()}
        bad = first_non_finite(mine)
        if bad is not None and result.diverged[run] is None:
            result.diverged[run] = ends_at - length + bad[1] + 1
        result.histories[run].append(
            {
                "env_steps": ends_at * steps_per_update,
                "updates": ends_at,
                "time": elapsed,
                **summarize_chunk(mine),
            }
        )
