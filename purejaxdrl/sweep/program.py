"""`sweep()`: trains a plan's runs, program by program and batch by batch."""

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp

from purejaxdrl.config import ConfigError
from purejaxdrl.observe.plots import RETURN
from purejaxdrl.parallel import make_sweep_mesh
from purejaxdrl.rng import make_key
from purejaxdrl.runners.anakin import RunnerState
from purejaxdrl.sweep import layout as sweep_layout
from purejaxdrl.sweep.compiled import Programs, make_programs, stack_hps
from purejaxdrl.sweep.messages import (
    diverged_line,
    layout_lines,
    plan_lines,
    progress_line,
)
from purejaxdrl.sweep.report import write_sweep
from purejaxdrl.sweep.result import SweepResult
from purejaxdrl.sweep.spec import SweepPlan, make_plan
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.faults import first_non_finite
from purejaxdrl.training.presets import load_preset
from purejaxdrl.training.train import chunk_lengths, summarize_chunk
from purejaxdrl.types import Metrics


def sweep(
    base: TrainConfig | str,
    *,
    algo: str | None = None,
    grid: Mapping[str, Sequence[Any]] | None = None,
    sample: Mapping[str, tuple[str, float, float]] | None = None,
    num_samples: int = 0,
    seeds: int | Sequence[int] = 1,
    search_seed: int = 0,
    target_return: float | None = None,
    write_files: bool = False,
    device_memory: int | None = None,
    notify: Callable[[str], None] | None = None,
) -> SweepResult:
    """Trains every setting of a grid / random search with every seed.

    Runs that differ only in dynamic fields (array leaves of the algorithm's
    config) and in their seed train together in one compiled program
    (`compiled.make_programs`), split over the devices (`layout`); a grid over
    a static field (shapes, loop counts) becomes one program per value, run one
    after another. Every run is the run `train` would make with its setting and
    seed: same keys, same updates, same parameters (to float rounding).

    Args:
      base: a TrainConfig, or a preset name (`cartpole`) whose `algo` section
        is the base (and whose target score is used).
      algo: with a preset name, the algorithm (default ppo).
      grid: field -> values; the Cartesian product is trained. Bare names are
        the algorithm's fields (`learning_rate`); others are dotted paths
        (`network.hidden_sizes`) or top-level (`num_envs`).
      sample: field -> (`loguniform` | `uniform`, low, high): random search
        over dynamic fields, `num_samples` draws.
      num_samples: random draws.
      seeds: a count N (base seed, +1, ...) or a list of seeds.
      search_seed: seeds the random search.
      target_return: the score whose first crossing is reported per run (a
        preset's target by default).
      write_files: write a sweep directory under `base.run_dir`: one metrics
        JSONL per run, runs.csv, summary.csv / summary.md, curves.png and each
        run's final parameters.
      device_memory: bytes per device the sweep may use, instead of the
        estimate from the device (or host) memory; smaller forces batches.
      notify: called with each message (layout, batches, progress).

    Returns:
      A SweepResult: per-run histories, final returns and parameters, and the
      summary per setting.

    Raises:
      ConfigError: bad fields or values (nothing has compiled yet).

    """
    if jax.process_count() > 1:
        raise ConfigError(
            f"sweeps run in one process (this is one of {jax.process_count()}); "
            "start the sweep on a single host."
        )
    base, target_return = _base_and_target(base, algo, target_return)
    plan = make_plan(
        base,
        grid=grid,
        sample=sample,
        num_samples=num_samples,
        seeds=seeds,
        search_seed=search_seed,
    )
    messages: list[str] = []

    def say(line: str) -> None:
        messages.append(line)
        if notify is not None:
            notify(line)

    groups = plan.static_groups()
    for line in plan_lines(plan, len(groups)):
        say(line)
    total = plan.num_runs
    result = SweepResult(
        plan=plan,
        histories=[[] for _ in range(total)],
        diverged=[None] * total,
        final_params=[None] * total,
        target_return=target_return,
        messages=messages,
    )
    for g, runs in enumerate(groups):
        label = f"program {g + 1} of {len(groups)}: " if len(groups) > 1 else ""
        _train_group(result, runs, label, device_memory, say, notify)
    for run, at in enumerate(result.diverged):
        if at is not None:
            say(diverged_line(plan, run, at))
    if write_files:
        result.run_dir = write_sweep(result)
        say(f"sweep: results in {result.run_dir}")
    return result


def _base_and_target(
    base: TrainConfig | str, algo: str | None, target_return: float | None
) -> tuple[TrainConfig, float | None]:
    """The base config (a preset's, given its name) and the target score."""
    if isinstance(base, str):
        preset = load_preset(base, algo or "ppo")
        if target_return is None:
            target_return = preset.target_return
        return preset.config, target_return
    if algo is not None and algo != base.algo:
        raise ConfigError(
            f"algo={algo!r} differs from the config's algo={base.algo!r}; set "
            "the config's algo instead."
        )
    return base, target_return


def _train_group(
    result: SweepResult,
    runs: list[int],
    label: str,
    device_memory: int | None,
    say: Callable[[str], None],
    progress: Callable[[str], None] | None,
) -> None:
    """Trains runs that share their static fields: one program, one mesh.

    The runs are laid out over the devices, split into batches that fit their
    memory, and trained batch after batch; `result` collects their records,
    parameters and timings.
    """
    plan = result.plan
    cfg = plan.run_config(runs[0])
    shape = sweep_layout.group_mesh_shape(len(runs), cfg)
    start = time.perf_counter()
    programs = make_programs(cfg, make_sweep_mesh(*shape))
    layout, source = sweep_layout.group_layout(
        len(runs), shape, programs.state_shapes, cfg, device_memory, programs.specs
    )
    result.layouts.append(layout)
    for line in layout_lines(label, len(runs), layout, source, jax.default_backend()):
        say(line)
    schedule = chunk_lengths(cfg.num_updates, cfg.num_logs)
    compiled: dict[int, Any] = {}
    size = layout.batch_size
    for b in range(layout.num_batches):
        begin = time.perf_counter()
        batch = runs[b * size : (b + 1) * size]
        hps, states = _init_batch(programs, plan, batch, size)
        for n in sorted(set(schedule)):
            if n not in compiled:
                compiled[n] = programs.chunk(n).lower(hps, states).compile()
                result.programs_compiled += 1
        jax.block_until_ready(states)
        if b == 0:  # building and compiling, not training
            begin = time.perf_counter()
            result.compile_seconds += begin - start
        states = _train_batch(
            compiled, schedule, hps, states, batch, cfg, result, progress
        )
        params = jax.device_get(states.agent.params)
        for j, run in enumerate(batch):
            result.final_params[run] = jax.tree.map(lambda x, j=j: x[j], params)
        result.train_seconds += time.perf_counter() - begin
        if layout.num_batches > 1:
            say(f"sweep: batch {b + 1} of {layout.num_batches} done")


def _init_batch(
    programs: Programs, plan: SweepPlan, batch: list[int], size: int
) -> tuple[Any, RunnerState]:
    """The stacked configs and initial states of a batch of `size` runs.

    Padding (copies of the last run) keeps every batch the same shape, so all
    batches share one compiled program.
    """
    padded = batch + [batch[-1]] * (size - len(batch))
    configs = [plan.run_config(i) for i in padded]
    hps = stack_hps(configs)
    keys = jnp.stack([make_key(c.seed, c.rng_impl) for c in configs])
    return hps, programs.init(hps, keys)


def _train_batch(
    compiled: Mapping[int, Any],
    schedule: Sequence[int],
    hps: Any,
    states: RunnerState,
    runs: Sequence[int],
    config: TrainConfig,
    result: SweepResult,
    progress: Callable[[str], None] | None = None,
) -> RunnerState:
    """Runs the chunks of one batch, recording each real run's metrics.

    Chunk k+1 is dispatched before chunk k's metrics are read (as in `train`).
    `result` receives, per run, one record per chunk and the update at which
    it first went non-finite; `progress` a line per chunk.
    """
    start = time.perf_counter()

    def finish(metrics: Metrics, length: int, ends_at: int) -> None:
        host = jax.device_get(metrics)  # [batch, length] per name
        elapsed = time.perf_counter() - start
        _record_chunk(result, runs, host, length, ends_at, elapsed, config)
        if progress is not None:
            returns = [result.histories[r][-1].get(RETURN, math.nan) for r in runs]
            sps = ends_at * config.steps_per_update * len(runs) / elapsed
            progress(progress_line(returns, ends_at, config.num_updates, sps))

    done = 0
    pending = None
    for length in schedule:
        states, metrics = compiled[length](hps, states)  # queued, not awaited
        done += length
        if pending is not None:
            finish(*pending)
        pending = (metrics, length, done)
    if pending is not None:
        finish(*pending)
    return states


def _record_chunk(
    result: SweepResult,
    runs: Sequence[int],
    host: Metrics,
    length: int,
    ends_at: int,
    elapsed: float,
    config: TrainConfig,
) -> None:
    """Appends each run's record of a chunk, and notes where it first diverged.

    Args:
      result: receives the records (`histories`) and divergences (`diverged`).
      runs: the batch's real runs, in batch order (padding comes after them).
      host: the chunk's metrics on the host, [batch, length] per name.
      length: updates in the chunk.
      ends_at: updates done when the chunk ends.
      elapsed: seconds since the batch started training.
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


__all__ = ["SweepResult", "sweep"]
