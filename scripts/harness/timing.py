"""How a figure is timed: compile ahead, block until ready, repeat, interleave.

`compile_ahead` and `time_call` (inside `timed_region()`, what a trace
counts), `time_program` (the two at once), `best_time`; `interleave` runs
contenders repeat by repeat in alternating order; `spread` and `mean_std`
summarise repeats; `Budget` is a suite's wall-clock allowance.
"""

from __future__ import annotations

import os
import re
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax

Figures = dict[str, float]


def compile_ahead(fn: Callable[..., Any], *args: Any) -> tuple[float, Callable]:
    """`jax.jit(fn)` compiled for `args` ahead of time: (seconds it took, program)."""
    start = time.perf_counter()
    program = jax.jit(fn).lower(*args).compile()
    return time.perf_counter() - start, program


# The name of the trace annotation around a timed region: `device_time.read`
# keeps only the device's operations inside it, so a traced run's compile,
# cache loads and setup are not counted as the device waiting on the host.
TIMED = "timed"


def timed_region() -> jax.profiler.TraceAnnotation:
    """A `with` block that a trace marks as timed (costs nothing untraced)."""
    return jax.profiler.TraceAnnotation(TIMED)


def time_call(fn: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    """(seconds, output) of one call of `fn(*args)`, until every output is ready."""
    with timed_region():
        start = time.perf_counter()
        out = jax.block_until_ready(fn(*args))
        return time.perf_counter() - start, out


def time_program(fn: Callable[..., Any], *args: Any) -> tuple[float, float, Any]:
    """Compiles `jax.jit(fn)` for `args` ahead of time, then runs it once.

    The one call is a whole training run (a peer's `train`), so it is not
    repeated warm: its first-call costs (buffers, transfers) are about 1% of
    a full-size run, but dominate at `--tiny` sizes, whose ratios are checks
    that the scripts run, not figures.

    Returns:
      (compile seconds, run seconds, output): the run is timed until every
      output array is ready, and excludes compilation.

    """
    compile_s, program = compile_ahead(fn, *args)
    return (compile_s, *time_call(program, *args))


def best_time(fn: Callable[[], Any], repeats: int) -> float:
    """The fastest of `repeats` timed calls of `fn`, after one untimed warm-up."""
    jax.block_until_ready(fn())
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return min(times)


def interleave(
    contenders: Mapping[str, Callable[[int], Figures]],
    repeats: int,
    trace_dir: str | None = None,
) -> dict[str, list[Figures]]:
    """Runs every contender `repeats` times, interleaved, repeat index as seed.

    The order reverses every repeat (A B, B A, A B...).

    Args:
      contenders: name -> a function of the repeat index (used as the seed)
        returning that run's figures.
      repeats: runs per contender.
      trace_dir: if given, each contender then runs once more, traced by
        `jax.profiler` into `trace_dir/<name>` (`device_time.traced`; its
        `read` keeps the timed region). That run's figures are dropped:
        tracing slows what it traces.

    Returns:
      name -> one figures dict per repeat, in order.

    """
    runs: dict[str, list[Figures]] = {name: [] for name in contenders}
    order = list(contenders.items())
    for repeat in range(repeats):
        # A-B, then B-A: no contender always pays the first run's cold start.
        for name, run in order if repeat % 2 == 0 else order[::-1]:
            runs[name].append(dict(run(repeat)))
    if trace_dir is not None:
        from device_time import traced  # a sibling script: only when tracing

        for name, run in contenders.items():
            traced(run, repeats, os.path.join(trace_dir, slug(name)))
    return runs


def slug(name: str) -> str:
    """`name` as a folder name: runs of other characters become one '_'."""
    return re.sub(r"[^A-Za-z0-9.]+", "_", name).strip("_")


def spread(values: Sequence[float]) -> dict[str, float]:
    """Median, min and max of `values` (the repeats of one figure)."""
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
    }


def mean_std(values: Sequence[float]) -> str:
    """'mean ± sample std' of `values`, as results tables print seeds."""
    spread_ = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):,.1f} ± {spread_:,.1f}"


@dataclass
class Budget:
    """A wall-clock allowance in seconds (None: unlimited), counted from now."""

    seconds: float | None
    start: float = field(default_factory=time.perf_counter)

    def left(self) -> float:
        """Seconds left (infinite without a limit)."""
        if self.seconds is None:
            return float("inf")
        return self.seconds - (time.perf_counter() - self.start)

    def allows(self, estimate: float) -> bool:
        """Whether a step expected to take `estimate` seconds fits what is left."""
        return self.left() >= estimate
