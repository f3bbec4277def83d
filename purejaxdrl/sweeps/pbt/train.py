"""Training a population: programs, the chunk loop with its ready steps, checkpoints."""

import contextlib
import dataclasses
import math
import time
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from purejaxdrl.config import ConfigError
from purejaxdrl.observe.plots import RETURN
from purejaxdrl.parallel import SWEEP_AXIS
from purejaxdrl.rng import make_key
from purejaxdrl.runners.anakin import RunnerState
from purejaxdrl.sweeps.batch import SweepStopped, record_chunk, seconds_trained
from purejaxdrl.sweeps.compiled import Programs, stack_hps
from purejaxdrl.sweeps.messages import progress_line
from purejaxdrl.sweeps.pbt.layout import Fitted
from purejaxdrl.sweeps.pbt.lineage import PBTResult, ReadyStep
from purejaxdrl.sweeps.pbt.operators import (
    ExploredField,
    PBTConfig,
    non_finite_members,
    ready_step,
    recent_return,
)
from purejaxdrl.sweeps.pbt.store import PBTCheckpoint
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.faults import StopSignals
from purejaxdrl.training.loop import pipelined
from purejaxdrl.training.schedule import chunk_lengths
from purejaxdrl.training.setup_stop import end_setup_hold

_RETURN_SUM, _COUNT = "episode/return_sum", "episode/count"


def _ready_program(
    programs: Programs,
    fields: tuple[ExploredField, ...],
    num_members: int,
    config: PBTConfig,
    shardings: tuple[Any, Any, Any],
) -> Callable:
    """The jitted ready step, configs and states keeping their shardings.

    (key, hps, states, return sums, counts, diverged) -> (hps, states,
    parents, scores, diverged after the copies: a member that copied another
    is as healthy as its parent). Donates the states (as a chunk does); the
    configs are kept, because the host reads a ready step's values after the
    next one ran.
    """

    def step(key, hps, states, return_sum, count, diverged):
        scores = recent_return(return_sum, count)
        hps, states, parents = ready_step(
            key,
            hps,
            states,
            scores,
            agent_spec=programs.specs.agent,
            fields=fields,
            num_members=num_members,
            config=config,
            diverged=diverged,
        )
        return hps, states, parents, scores, diverged[parents]

    hps, states, members = shardings
    out_shardings = (hps, states, None, None, members)
    return jax.jit(step, out_shardings=out_shardings, donate_argnums=2)


class _Compiled(NamedTuple):
    """A population's compiled programs, by chunk length where they vary."""

    chunks: dict[int, Any]
    ready: Any
    accumulate: dict[int, Any]


def _compile(
    programs: Programs,
    result: PBTResult,
    hps: Any,
    states: RunnerState,
    zeros: jax.Array,
    key: jax.Array,
    schedule: list[int],
) -> _Compiled:
    """Compiles every program up front, so training time counts none of it."""
    members = zeros.sharding
    chunks = {
        length: programs.chunk(length).lower(hps, states).compile()
        for length in sorted(set(schedule))
    }
    shardings = (*jax.tree.map(lambda x: x.sharding, (hps, states)), members)
    ready = _ready_program(
        programs, result.fields, result.population, result.config, shardings
    )
    healthy = zeros.astype(bool)
    accumulate = {}
    for length, chunk in chunks.items():
        jitted = jax.jit(_accumulate, out_shardings=((members, members), members))
        if _RETURN_SUM not in (metrics := chunk.out_info[1]):
            raise ConfigError(
                "PBT ranks members by their episodes' returns, and this "
                "environment reports none (no EpisodeStatistics)."
            )
        accumulate[length] = jitted.lower((zeros, zeros), healthy, metrics).compile()
    ready = ready.lower(key, hps, states, zeros, zeros, healthy).compile()
    return _Compiled(chunks, ready, accumulate)


def train_population(
    result: PBTResult,
    configs: list[TrainConfig],
    fitted: Fitted,
    say: Callable[[str], None],
    progress: Callable[[str], None] | None,
) -> None:
    """Compiles and trains the population (`fit_population`'s); fills `result`.

    With `result.run_dir` the population is saved after every
    `checkpoint.every`-th ready step (0: none) and restored from there, and
    SIGINT / SIGTERM stop it once the chunks under way finish (the current one
    and, where it was already queued, the next: `_train_chunks`), saved
    (`SweepStopped`), as a sweep and a single run are.
    """
    cfg = configs[0]
    n = result.population
    programs, mesh, size = fitted.programs, fitted.mesh, fitted.size
    for line in fitted.lines:
        say(line)
    schedule = chunk_lengths(cfg.num_updates, cfg.num_logs)
    if (readies := (len(schedule) - 1) // result.config.ready) >= 1:
        # Chunks divide the updates, so they need not be num_logs many.
        say(
            f"pbt: {cfg.num_updates:,} updates in {len(schedule)} chunks; a ready "
            f"step after every {result.config.ready} of them but the last: "
            f"{readies} ready steps"
        )
    members = NamedSharding(mesh, P(SWEEP_AXIS))
    padded = configs + [configs[-1]] * (size - n)
    hps = jax.device_put(stack_hps(padded), members)
    keys = jnp.stack([make_key(c.seed, c.rng_impl) for c in padded])
    states = programs.init(hps, keys)
    zeros = jax.device_put(np.zeros(size, np.float32), members)
    pbt_key = make_key(result.search_seed, cfg.rng_impl)
    compiled = _compile(programs, result, hps, states, zeros, pbt_key, schedule)
    live = _Live(hps, states, (zeros, zeros), 0, zeros.astype(bool))
    checkpoint = None
    if result.run_dir is not None:
        checkpoint = PBTCheckpoint(result.run_dir, hps, states, mesh, cfg.devices)
    if checkpoint is not None and (restored := checkpoint.restore(result, say)):
        live.reached, live.hps, live.states, window = restored
        live.window = tuple(jax.device_put(w, members) for w in window)
        # The saved records' divergences are the state's (the ready program's).
        flags = [at is not None for at in result.diverged] + [False] * (size - n)
        live.diverged = jax.device_put(np.array(flags), members)
        say(f"pbt: resumed at update {live.reached}")
    else:
        result.lineage.append(_start_step(result, hps))
    jax.block_until_ready(live.states)
    result.compile_seconds = time.perf_counter() - fitted.started
    if checkpoint is None:  # no folder to stop to: Python's handler (once checked)
        end_setup_hold()
    signals = StopSignals(host_envs=False) if checkpoint is not None else None
    with signals or contextlib.nullcontext():
        stop = None if signals is None else lambda: signals.requested
        loop = _Loop(compiled, schedule, pbt_key, zeros, checkpoint, stop)
        train_seconds = _train_chunks(result, cfg, live, loop, say, progress)
    params = jax.device_get(live.states.agent.params)
    result.final_params = [jax.tree.map(lambda x, i=i: x[i], params) for i in range(n)]
    # Observation statistics, where the environment normalises: what a
    # member's exported policy needs beside its parameters.
    stats = jax.device_get(getattr(live.states.env_params, "obs_stats", None))
    result.final_stats = [
        None if stats is None else jax.tree.map(lambda x, i=i: x[i], stats)
        for i in range(n)
    ]
    result.train_seconds = train_seconds


@dataclasses.dataclass
class _Live:
    """The population on the device as the chunk loop advances it.

    `window` holds the members' episode return sums and counts since the last
    ready step (what the next one ranks by); `reached`, the updates of the
    chunks dispatched so far; `diverged`, bool [R], the members whose learner
    went non-finite (ranked last, never parents).
    """

    hps: Any
    states: RunnerState
    window: tuple[jax.Array, jax.Array]
    reached: int
    diverged: jax.Array


@dataclasses.dataclass
class _Marks:
    """What the chunk loop leaves for the code after it.

    `saved`: the updates the newest checkpoint holds (a stopped population
    saves again only past them); `stopped`: the signal that stopped the
    loop, None while none did.
    """

    saved: int
    stopped: str | None = None


class _Loop(NamedTuple):
    """What the chunk loop runs: its programs, chunks, keys and checkpoints.

    `zeros` is the members' empty window; `stop` says what signal asked the
    population to stop, if any (None: nothing can).
    """

    compiled: _Compiled
    schedule: list[int]
    pbt_key: jax.Array
    zeros: jax.Array
    checkpoint: PBTCheckpoint | None
    stop: Callable[[], str | None] | None


def _train_chunks(
    result: PBTResult,
    cfg: TrainConfig,
    live: _Live,
    loop: _Loop,
    say: Callable[[str], None],
    progress: Callable[[str], None] | None,
) -> float:
    """Runs the chunks after `live.reached` and their ready steps.

    Returns the population's training time, before a resume included.

    Chunk k+1 is dispatched before chunk k's metrics are read (`pipelined`).
    Once `loop.stop` asks, no further chunk is dispatched: those dispatched are
    recorded, the population after them is saved with its records and
    window, and `SweepStopped` is raised.
    """
    begin = time.perf_counter()
    done = live.reached
    n = result.population
    # Records' time counts training before a resume too, as a single run's.
    before = seconds_trained(result.histories[0])
    compiled, checkpoint, stop = loop.compiled, loop.checkpoint, loop.stop
    marks = _Marks(saved=done)

    # The generator dispatches each chunk and its ready step as `pipelined`
    # asks for the next item, so the device runs chunk k+1 while `finish`
    # reads chunk k's metrics. It therefore advances `live` (the population
    # on the device) and sets `marks.stopped` as a side effect: what the code
    # after the loop reads to save and stop. Each item carries what `finish`
    # needs of its chunk, because `live` has moved on by then.
    def dispatched() -> Iterator[tuple[Any, int, int, Any, Any]]:
        ends_at = 0
        for k, length in enumerate(loop.schedule):
            ends_at += length
            if ends_at <= done:  # restored: trained (and ready-stepped) before
                continue
            if stop is not None and (why := stop()):
                marks.stopped = why
                return
            live.states, metrics = compiled.chunks[length](live.hps, live.states)
            live.window, live.diverged = compiled.accumulate[length](
                live.window, live.diverged, metrics
            )
            live.reached = ends_at
            step = packed = None
            if (k + 1) % result.config.ready == 0 and k + 1 < len(loop.schedule):
                key = jax.random.fold_in(loop.pbt_key, k)
                live.hps, live.states, parents, scores, live.diverged = compiled.ready(
                    key, live.hps, live.states, *live.window, live.diverged
                )
                live.window = (loop.zeros, loop.zeros)
                step = (ends_at, parents, scores, _explored(result, live.hps))
                readies = (k + 1) // result.config.ready
                every = cfg.checkpoint.every
                if checkpoint is not None and every and readies % every == 0:
                    # Copied now, before the next chunk takes the states (donated).
                    packed = checkpoint.pack(live.hps, live.states)
            yield metrics, length, ends_at, step, packed

    def finish(item: tuple[Any, int, int, Any, Any]) -> None:
        metrics, length, ends_at, step, packed = item
        host = jax.device_get(metrics)
        elapsed = time.perf_counter() - begin
        record_chunk(result, range(n), host, length, ends_at, before + elapsed, cfg)
        if step is not None:
            _record_ready(result, jax.device_get(step), say)
        if packed is not None:
            checkpoint.save(ends_at, packed, result)
            marks.saved = ends_at
        if progress is not None:
            returns = [result.histories[i][-1].get(RETURN, math.nan) for i in range(n)]
            sps = (ends_at - done) * cfg.steps_per_update * n / elapsed
            bad = [at is not None for at in result.diverged]
            line = progress_line(returns, ends_at, cfg.num_updates, sps, bad)
            progress(line.replace("sweep:", "pbt:", 1).replace(" runs", " members"))

    try:
        pipelined(dispatched(), finish)
        if marks.stopped and live.reached > marks.saved:  # else the newest has it
            packed = checkpoint.pack(live.hps, live.states)
            window = jax.device_get(live.window)
            checkpoint.save(live.reached, packed, result, window=window)
        # The clock stops before close() waits on the saves, as train's does:
        # the summary's steps/s then agrees with the last progress line.
        ended = time.perf_counter()
    finally:  # stopped or not, what was saved is complete on disk
        if checkpoint is not None:
            checkpoint.close()
    if marks.stopped:
        raise SweepStopped(
            f"stopped by {marks.stopped} after update {live.reached:,} of "
            f"{cfg.num_updates:,}"
        )
    return before + ended - begin


def _accumulate(
    window: tuple[jax.Array, jax.Array], diverged: jax.Array, metrics: Any
) -> tuple[tuple[jax.Array, jax.Array], jax.Array]:
    """Adds a chunk's episode sums [R, length] to the window's, and `diverged`'s."""
    sums = metrics[_RETURN_SUM].sum(axis=1), metrics[_COUNT].sum(axis=1)
    window = window[0] + sums[0], window[1] + sums[1]
    return window, diverged | non_finite_members(metrics)


def _explored(result: PBTResult, hps: Any) -> dict[str, jax.Array]:
    return {f.name: getattr(hps, f.name) for f in result.fields}


def _member_values(
    result: PBTResult, values: dict[str, np.ndarray]
) -> dict[str, tuple[float, ...]]:
    """The members' explored values, in `--explore`'s order, as the lineage says.

    Each is the float32 the member trained with, written shortest: 1e-3, not
    float32(1e-3)'s 0.0010000000474974513, which reads as past a bound of 1e-3.
    """
    n = result.population
    return {
        f.name: tuple(float(str(np.float32(x))) for x in values[f.name][:n])
        for f in result.fields
    }


def _start_step(result: PBTResult, hps: Any) -> ReadyStep:
    n = result.population
    values = jax.device_get(_explored(result, hps))
    return ReadyStep(
        updates=0,
        parents=tuple(range(n)),
        scores=(math.nan,) * n,
        values=_member_values(result, values),
    )


def _record_ready(
    result: PBTResult, step: tuple[int, Any, Any, Any], say: Callable[[str], None]
) -> None:
    """Appends a ready step (read on the host) to the lineage and says it."""
    ends_at, parents, scores, values = step
    n = result.population
    ready = ReadyStep(
        updates=int(ends_at),
        parents=tuple(int(p) for p in parents[:n]),
        # math.nan itself (no episode ended), as `read_lineage` gives it back,
        # so that a lineage read from disk compares equal to this one.
        scores=tuple(math.nan if np.isnan(s) else float(s) for s in scores[:n]),
        values=_member_values(result, values),
    )
    result.lineage.append(ready)
    # A member that copied another's learner carries on from that state: it
    # has diverged only if its parent had.
    before = list(result.diverged)
    for i, parent in enumerate(ready.parents):
        result.diverged[i] = before[parent]
    copied = [f"{i}<-{p}" for i, p in enumerate(ready.parents) if p != i]
    say(
        f"pbt: update {ready.updates}: "
        + (
            f"members copied (member<-parent) {', '.join(copied)}"
            if copied
            else "no member copied"
        )
    )
