"""Where a device's time went, read from a `jax.profiler` trace.

Steps/s says how fast a program ran, not why it was not faster. A trace does:
this reads the trace events that `jax.profiler.trace` writes
(`<dir>/plugins/profile/<run>/<host>.trace.json.gz`) and reports, for the
device that ran the programs:

- `busy_pct`: the share of the traced span in which at least one of its
  operations ran (on a GPU: a kernel or copy on any stream);
- `ops`: how many operations ran, and `op_us`, their median duration;
- `gaps`: the idle stretches of at least `--gap-us` (100 µs) between them,
  `gap_s` their total and `max_gap_ms` the longest. On a GPU, launch
  latency leaves gaps of a few µs; a stretch of 100 µs or more is the device
  waiting for the host (a host sync, such as a loop whose trip count the host
  must read back, or Python between calls);
- the operations that took the most time.

Only the timed region counts: the device's operations inside the trace's
`timed` annotations (`harness.timed_region()`, which `time_call` and, while
`traced`, the package's training loops enter), so a traced run's compile,
cache loads and setup are not read as the device waiting on the host. The
span and gaps are those within each annotation, summed. A trace without one
is read whole, and its note says so.

GPU traces name each device's streams ("/device:GPU:0", "Stream #...");
XLA:CPU runs operations on host threads, recorded with their HLO name
(`hlo_op`), and those are its device time. Derived lines of a GPU's plane
("XLA Ops", "XLA Modules", "Steps") repeat the streams' time and are skipped.

    python scripts/device_time.py TRACE_DIR [TRACE_DIR ...]
    python scripts/bench_gpu.py --rows ppo_cartpole --profile traces/   # writes them
    python scripts/device_time.py --tiny    # traces a toy program, then reads it
"""

from __future__ import annotations

import collections
import contextlib
import gzip
import json
import pathlib
import statistics
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
from harness import (
    TIMED,
    Figures,
    Report,
    parser,
    positive_float,
    run_main,
    timed_region,
)

# Idle stretches at least this long are counted as the device waiting on the host.
GAP_US = 100.0
# The most events JAX's profiler writes to a trace file; a longer run's file
# holds only part of it.
TRACE_EVENTS_KEPT = 1_000_000


def trace_files(directory: str | pathlib.Path) -> list[pathlib.Path]:
    """The trace-event files `jax.profiler.trace(directory)` wrote, oldest first."""
    return sorted(pathlib.Path(directory).glob("plugins/profile/*/*.trace.json.gz"))


def device_events(events: Iterable[dict[str, Any]]) -> list[tuple[float, float, str]]:
    """The device's operations among trace events: (start µs, end µs, name).

    A GPU's are the complete events on its streams; where the trace has no
    device plane (XLA:CPU), the host's events that carry an HLO op name. An
    event that holds others on its line (XLA:CPU's loop around its body's
    operations) is left out: its time is theirs.
    """
    events = list(events)
    processes, threads = {}, {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            processes[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
    devices = {p for p, name in processes.items() if name.startswith("/device:")}
    lines: dict[tuple, list[tuple[float, float, str]]] = collections.defaultdict(list)
    for e in events:
        if e.get("ph") != "X":
            continue
        line = (e["pid"], e.get("tid"))
        stream = threads.get(line, "").startswith("Stream")
        if devices:
            if e["pid"] not in devices or not stream:
                continue
        elif "hlo_op" not in e.get("args", {}):
            continue
        name = e.get("args", {}).get("hlo_op", e["name"])
        start = float(e["ts"])
        lines[line].append((start, start + float(e["dur"]), name))
    return [op for ops in lines.values() for op in _innermost(ops)]


def _innermost(ops: list[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
    # One line's events but those that enclose another: sorted by start, and
    # by end backwards, an enclosing event comes just before what it holds.
    ops = sorted(ops, key=lambda op: (op[0], -op[1]))
    holds = [False] * len(ops)
    open_: list[int] = []  # indices of events not yet ended, outermost first
    for i, (start, end, _) in enumerate(ops):
        while open_ and ops[open_[-1]][1] <= start:
            open_.pop()
        if open_ and end <= ops[open_[-1]][1]:
            holds[open_[-1]] = True
        open_.append(i)
    return [op for op, held in zip(ops, holds, strict=True) if not held]


Op = tuple[float, float, str]  # (start µs, end µs, name)


def busy_intervals(ops: list[Op]) -> Iterator[tuple[float, float]]:
    """The union of the operations' intervals, as disjoint (start, end), in order."""
    start = end = None
    for s, e, _ in sorted(ops):
        if end is not None and s <= end:
            end = max(end, e)
            continue
        if end is not None:
            yield start, end
        start, end = s, e
    if end is not None:
        yield start, end


def summarize(
    ops: list[Op], gap_us: float = GAP_US, top: int = 3, windows: list | None = None
) -> tuple[dict[str, float], str]:
    """Figures of the device's time, and its `top` operations as a note.

    With `windows` ((start µs, end µs) each), only the operations that start
    inside one count, and the span and gaps are each window's, summed: what
    lies between two windows is not the timed program's.

    Returns:
      ({busy_pct, span_s, ops, op_us, gaps, gap_s, max_gap_ms}, "name 41%, ...":
      each top operation's share of the busy time, summed over its runs).

    """
    groups = [ops] if windows is None else _within(ops, windows)
    ops = [op for group in groups for op in group]
    if not ops:
        raise ValueError("no device operations in the trace's timed region")
    span = busy = 0.0
    idle: list[float] = []
    for group in groups:
        intervals = list(busy_intervals(group))
        span += intervals[-1][1] - intervals[0][0]
        busy += sum(e - s for s, e in intervals)
        pairs = zip(intervals, intervals[1:], strict=False)
        idle += [s - e for (_, e), (s, _) in pairs]
    long = [g for g in idle if g >= gap_us]
    per_op: collections.Counter = collections.Counter()
    for s, e, name in ops:
        per_op[name] += e - s
    total = sum(per_op.values())
    note = ", ".join(f"{n} {100 * t / total:.0f}%" for n, t in per_op.most_common(top))
    figures = {
        "busy_pct": 100.0 * busy / span if span > 0 else 100.0,
        "span_s": span / 1e6,
        "ops": len(ops),
        "op_us": statistics.median(e - s for s, e, _ in ops),
        "gaps": len(long),
        "gap_s": sum(long) / 1e6,
        "max_gap_ms": max(idle, default=0.0) / 1e3,
    }
    return figures, note


def timed_windows(events: Iterable[dict[str, Any]]) -> list[tuple[float, float]]:
    """The (start µs, end µs) of the trace's `timed` annotations, merged, in order."""
    spans = sorted(
        (float(e["ts"]), float(e["ts"]) + float(e["dur"]))
        for e in events
        if e.get("ph") == "X" and e.get("name") == TIMED
    )
    return list(busy_intervals([(s, e, "") for s, e in spans]))


def _within(ops: list[Op], windows: list[tuple[float, float]]) -> list[list[Op]]:
    # Each window's operations (those that start inside it); empty ones dropped.
    groups = [[op for op in ops if s <= op[0] <= e] for s, e in windows]
    return [g for g in groups if g]


def read(directory: str | pathlib.Path, gap_us: float = GAP_US) -> tuple[dict, str]:
    """`summarize` of the newest trace under `directory` (a `jax.profiler` log dir)."""
    files = trace_files(directory)
    if not files:
        raise FileNotFoundError(f"no *.trace.json.gz under {directory}/plugins/profile")
    with gzip.open(files[-1], "rt") as f:
        events = json.load(f)["traceEvents"]
    windows = timed_windows(events) or None
    figures, note = summarize(device_events(events), gap_us, windows=windows)
    if windows is None:
        note += " (whole trace: no timed annotation in it)"
    if len(events) >= TRACE_EVENTS_KEPT:
        note += f" (trace cut at {TRACE_EVENTS_KEPT:,} events: a part of the run)"
    return figures, note


def profile_options() -> jax.profiler.ProfileOptions:
    """What a trace records: XLA's operations, not every Python call.

    The Python tracer's events (one per call, JAX's tracing included) would
    fill the million events a trace file keeps before the programs run; host
    level 1 keeps XLA:CPU's operations (GPU kernels are the device tracer's)
    and the `timed` annotations.
    """
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    options.host_tracer_level = 1
    return options


def traced(run: Callable[[int], Figures], repeat: int, directory: str) -> Figures:
    """`run(repeat)` under `jax.profiler`, writing its trace into `directory`.

    The package's training loops are marked timed meanwhile
    (`training_timed`). Where the profiler cannot start (a GPU machine
    without CUPTI, say), the run goes on untraced and says so: a trace
    explains a figure, it is not one.
    """
    try:
        jax.profiler.start_trace(directory, profiler_options=profile_options())
    except Exception as e:  # the profiler's own errors have no common type
        print(f"  (no trace: {type(e).__name__}: {e})", flush=True)
        return run(repeat)
    try:
        with training_timed():
            return run(repeat)
    finally:
        jax.profiler.stop_trace()


@contextlib.contextmanager
def training_timed() -> Iterator[None]:
    """The package's timed loops inside `timed` annotations, while in the block.

    A sweep's batch of chunks (`train_batch`, blocked on before the annotation
    ends) and a run's chunk schedule (`ChunkLoop.run_schedule`): what their
    steps/s time, without the init, compile and cache loads before them. A
    patch of the package for the block only, as it offers no such hook.
    """
    from purejaxdrl.sweeps import program
    from purejaxdrl.training.loop import ChunkLoop

    train_batch, run_schedule = program.train_batch, ChunkLoop.run_schedule

    def batch(*args: Any, **kwargs: Any) -> Any:
        with timed_region():
            return jax.block_until_ready(train_batch(*args, **kwargs))

    def schedule(self: Any, *args: Any, **kwargs: Any) -> Any:
        with timed_region():
            return run_schedule(self, *args, **kwargs)

    program.train_batch, ChunkLoop.run_schedule = batch, schedule
    try:
        yield
    finally:
        program.train_batch, ChunkLoop.run_schedule = train_batch, run_schedule


class TimedAfter:
    """A `timed` annotation from a trainer's `first`-th progress call to its
    `last`-th (or to `close()`, whichever comes first).

    For a peer's trainer that times its own epochs (brax's): `tick()` from its
    progress function, `close()` once it returns; what it times after its
    first epoch (compile included) is what a trace should count, and what
    follows its last epoch (brax compiles a replication check then) is not.
    """

    def __init__(self, first: int, last: int | None = None) -> None:
        self.first, self.last, self.seen = first, last, 0
        self.region, self.open = timed_region(), False

    def tick(self) -> None:
        self.seen += 1
        if self.seen == self.first:
            self.region.__enter__()
            self.open = True
        if self.seen == self.last:
            self.close()

    def close(self) -> None:
        if self.open:
            self.region.__exit__(None, None, None)
            self.open = False


def _toy_trace(directory: str) -> None:
    # A jitted loop of small steps, run a few times: operations and the
    # host's gaps between calls, on whatever backend JAX has.
    @jax.jit
    def run(x: jax.Array) -> jax.Array:
        return jax.lax.fori_loop(0, 32, lambda _, y: jnp.tanh(y @ y) + 1.0, x)

    x = jnp.ones((64, 64))
    jax.block_until_ready(run(x))
    jax.profiler.start_trace(directory, profiler_options=profile_options())
    try:
        x = jax.block_until_ready(run(x))  # before the timed region: not read
        with timed_region():
            for _ in range(4):
                x = jax.block_until_ready(run(x))
    finally:
        jax.profiler.stop_trace()


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__, repeats=False)  # one run, nothing to repeat
    p.add_argument("dirs", nargs="*", help="jax.profiler log directories")
    p.add_argument(
        "--gap-us",
        type=positive_float,
        default=GAP_US,
        help=f"idle stretches this long or longer count as gaps (default {GAP_US})",
    )
    args = p.parse_args(argv)
    if not args.dirs and not args.tiny:
        p.error("name at least one trace directory, or pass --tiny")
    report = Report("device time, from jax.profiler traces")
    with tempfile.TemporaryDirectory(prefix="device-time-") as toy:
        if args.tiny:
            _toy_trace(toy)
        for directory in args.dirs or [toy]:
            try:
                figures, note = read(directory, args.gap_us)
            except FileNotFoundError as e:  # the --profile DIR itself, say
                p.error(f"{e}: pass DIR/<row>/<contender>, as bench_gpu.py "
                        "--profile DIR writes them")  # fmt: skip
            except ValueError as e:  # a file that is not a trace
                p.error(f"{directory}: not a readable jax.profiler trace: {e}")
            name = "toy program (--tiny)" if directory == toy else str(directory)
            report.add(name, "device", [figures], note)
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
