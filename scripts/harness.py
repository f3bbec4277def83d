"""The measuring harness the benchmark scripts share.

What every side-by-side figure in this repository needs, written once:

- `describe_machine()`: what ran it (JAX, backend, device, cores), printed
  above every table and stored with every result.
- `time_program(fn, *args)`: ahead-of-time compile, then one timed call that
  blocks until the result is ready, so compile time never reaches steps/s
  (`compile_ahead` and `time_call` are its two halves, for repeated calls).
- `ceiling(config, repeats)`: the machine's own ceiling for a config (env
  step and policy act alone, no learning; a warm-up, then `repeats` timed
  runs), `add_ceiling` its rows beside training's.
- `interleave(contenders, repeats)`: ours and the peer's runs alternated
  repeat by repeat, so a drift in the machine's load hits both alike; with
  `trace_dir`, each runs once more, traced by `jax.profiler`
  (`device_time.traced`); `timed_region()` marks what a trace should count.
- `spread(values)`: median, min and max of repeats (what the tables print).
- `ablation(config, seeds, patch)`: one sweep of seeds as built and one with
  a scratch patch applied (then undone): each seed's training return.
- `Report`: rows of figures, written as JSON and as a Markdown table.
- `Budget`: a wall-clock allowance that a suite checks between rows, so it
  stops cleanly and still prints what finished.
- `parser(doc)`: the options every script takes (`--repeats`, `--json`,
  `--markdown`, `--tiny`); `Report.finish(args)` writes and prints the table;
  `run_main(main)` runs the script, a configuration the library refuses as
  one line and exit status 2; an option it refuses is one line too (no usage
  block). `add_purejaxrl(p)`: `--purejaxrl DIR`, checked at parse time.
- `TINY`: the toy sizes `--tiny` trains at (one config for every script, so
  the tests' compilation cache serves them all); `train_figures(result)`: a
  `TrainResult`'s steps/s, compile seconds and final return as figures;
  `timed_train(config)`: the same with steps/s timed up to train's return;
  `TINY_NOTE`, the note of a figure at those sizes (not a measurement).

Scripts import it as a sibling module (`from harness import ...`): they run
as `python scripts/NAME.py`, which puts `scripts/` first on `sys.path`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import jax

Figures = dict[str, float]


# `--tiny`'s training sizes: CartPole-sized, compiled in seconds on a CPU.
TINY = {
    "num_envs": 4,
    "unroll_length": 8,
    "total_steps": 4 * 8 * 4,
    "num_logs": 2,
    "devices": 1,
}


def train_figures(result: Any) -> Figures:
    """A `TrainResult`'s (or `SweepResult` run's) steps/s, compile s and return."""
    return {
        "steps_per_s": result.steps_per_second,
        "compile_s": result.compile_seconds,
        "return": result.mean_return,
    }


def timed_train(config: Any, **kwargs: Any) -> tuple[Any, Figures]:
    """`pjd.train(config, **kwargs)` and its figures, timed to its return.

    `steps_per_s` is env steps over train's wall-clock time less its compile
    seconds, up to the return: the setup before compiling, training, the
    evaluation and checkpoint after the last chunk, the wait for that
    checkpoint's write, the run's summary files. Train's compile seconds also
    hold W&B's start, the checkpointer's setup and the first state, so those
    are not counted.
    `loop_steps_per_s` is TrainResult's own (up to the last chunk's record).
    """
    import purejaxdrl as pjd

    start = time.perf_counter()
    result = pjd.train(config, **kwargs)
    seconds = time.perf_counter() - start - result.compile_seconds
    return result, {
        "steps_per_s": result.env_steps / seconds,
        "loop_steps_per_s": result.steps_per_second,
        "compile_s": result.compile_seconds,
        "return": result.mean_return,
    }


def train_seeded(config: Any, seed: int) -> Figures:
    """Trains `config` (a TrainConfig) with `seed`: its `train_figures`, and the
    return of its final evaluation as `eval_return` (NaN without one).

    Steps/s is TrainResult's: the last chunk's record, taken when its training
    ended and before the final evaluation is dispatched (training alone, as
    brax's `training/sps`).
    """
    import purejaxdrl as pjd

    result = pjd.train(pjd.apply_overrides(config, {"seed": seed}))
    figures = {**train_figures(result), "eval_return": result.eval_return}
    return figures


def ceiling(config: Any, repeats: int = 1) -> list[Figures]:
    """The machine's ceiling for `config`: env step + policy act, no learning.

    The same unrolls as training (`config.num_updates` of them, one compiled
    scan) without the learner: the steps/s no training of this config can
    beat on this machine. Runs on device environments. Compiled ahead, run
    once untimed (a warm-up), then timed `repeats` times: one figures dict
    each. Every leaf of every trajectory (observations, actions, the policy's
    outputs, info) is summed into the output, so XLA cannot drop what the
    reward alone does not need.
    """
    import purejaxdrl as pjd

    exp = pjd.training.make_experiment(config)
    state = exp.runner.init(pjd.rng.make_key(config.seed, config.rng_impl))

    def run(state: Any) -> jax.Array:
        def body(actor: Any, key: jax.Array) -> tuple[Any, jax.Array]:
            actor, traj = pjd.runners.unroll(
                exp.env,
                state.env_params,
                exp.agent,
                exp.agent.acting_params(state.agent),
                actor,
                key,
                config.unroll_length,
                config.scan_unroll,
            )
            leaves = jax.tree.leaves(traj)
            return actor, sum(x.sum().astype("float32") for x in leaves)

        keys = jax.random.split(state.key, config.num_updates)
        return jax.lax.scan(body, state.actor, keys)[1].sum()

    compile_s, program = compile_ahead(run, state)
    jax.block_until_ready(program(state))  # warm-up: first-call costs
    steps = config.num_updates * config.steps_per_update
    runs = []
    for _ in range(repeats):
        seconds, _ = time_call(program, state)
        runs.append({"steps_per_s": steps / seconds, "compile_s": compile_s})
    return runs


def ablation(
    config: Any, seeds: int, patch: Callable[[], Callable[[], None]]
) -> tuple[list[Figures], list[Figures]]:
    """`config` as built and with `patch()` applied: a sweep of `seeds` each.

    `patch` changes the package in place and returns the function that undoes
    it (undone even when the sweep fails). Returns each seed's final training
    return, `train_return`, without and with the patch.
    """
    import purejaxdrl as pjd

    def returns() -> list[Figures]:
        result = pjd.sweep(config, seeds=seeds, console=False)
        return [{"train_return": float(r)} for r in result.final_return]

    built = returns()
    undo = patch()
    try:
        patched = returns()
    finally:
        undo()
    return built, patched


def add_ceiling(
    report: Report, row: str, name: str, config: Any, sps: float, repeats: int = 1
) -> None:
    """Adds `config`'s act+env ceiling (`repeats` timed runs after a warm-up)
    and `name`'s training steps/s against the ceiling's median."""
    ceil = report.add(row, f"ceiling for {name} (act+env)", ceiling(config, repeats))
    ratio = sps / ceil.medians()["steps_per_s"]
    report.add(row, f"{name} training / ceiling", [{"ratio": ratio}])


def describe_machine() -> dict[str, Any]:
    """What ties a figure to a machine and a revision.

    JAX's and jaxlib's versions, backend and devices; the CPU's model, the
    cores this process may use (its affinity: a container's share, not the
    host's count) and the load before the suite (`Report.write` adds the load
    after); `XLA_FLAGS`; and the repository's commit (with `+` where the
    work tree differs from it).
    """
    device = jax.devices()[0]
    return {
        "jax": jax.__version__,
        "jaxlib": getattr(getattr(jax, "lib", None), "__version__", "?"),
        "backend": jax.default_backend(),
        "device": device.device_kind,
        "devices": jax.device_count(),
        "cpu": _cpu_model(),
        "cpu_cores": len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "commit": source_commit(),
        "python": platform.python_version(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "argv": " ".join(sys.argv),
    }


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def source_commit() -> str:
    """This checkout's short commit, `+` if tracked files differ, `?` outside git."""
    import subprocess

    here = os.path.dirname(os.path.abspath(__file__))
    try:
        commit = subprocess.run(
            ["git", "-C", here, "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        dirty = subprocess.run(
            ["git", "-C", here, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return commit + ("+" if dirty else "")


def machine_line(machine: Mapping[str, Any] | None = None) -> str:
    """`describe_machine()` as one line for the top of a table."""
    m = machine or describe_machine()
    after = m.get("load_average_after")
    load = f"{m['load_average']}" + (f" -> {after}" if after is not None else "")
    line = (
        f"jax {m['jax']} on {m['devices']} x {m['device']} ({m['backend']}); "
        f"{m['cpu_cores']} CPU cores"
        + (f" ({m['cpu']})" if m.get("cpu") else "")
        + f", load average {load}"
    )
    if m.get("commit"):
        line += f"; purejaxdrl {m['commit']}"
    if m.get("xla_flags"):
        line += f"; XLA_FLAGS={m['xla_flags']}"
    if m.get("started"):  # when, with which command, for how long
        line += f"; started {m['started']}: `{m.get('argv', '')}`"
    if m.get("total_s") is not None:
        line += f", {m['total_s']:.0f} s in all"
    return line


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


@dataclass
class Row:
    """One line of a table: what ran, its figures over repeats, and a note."""

    row: str
    name: str
    runs: list[Figures]
    note: str = ""

    def medians(self) -> Figures:
        keys = self.runs[0] if self.runs else {}
        return {k: statistics.median(r[k] for r in self.runs) for k in keys}


class Report:
    """Rows gathered by a suite; printed as they come, written as JSON and Markdown."""

    def __init__(self, title: str, machine: Mapping[str, Any] | None = None):
        self.title = title
        self.machine = dict(machine or describe_machine())
        self.rows: list[Row] = []
        self.skipped: list[tuple[str, str]] = []
        self._save_to: tuple[str | None, str | None] = (None, None)
        self._start = time.perf_counter()
        print(f"{title}\n{machine_line(self.machine)}", flush=True)

    def save_as_it_goes(self, json_path: str | None, markdown_path: str | None) -> None:
        """From now on, every line added or skipped rewrites the files.

        A suite killed mid-row (an allocation's end) then keeps every line
        printed before the kill, not only the rows it finished.
        """
        self._save_to = (json_path, markdown_path)

    def add(self, row: str, name: str, runs: list[Figures], note: str = "") -> Row:
        """Adds a line and prints it (and saves it: `save_as_it_goes`)."""
        line = Row(row, name, runs, note)
        self.rows.append(line)
        print(f"  {name:<40} {_cells(line)}{'  ' + note if note else ''}", flush=True)
        self._autosave()
        return line

    def skip(self, row: str, why: str) -> None:
        """Records a row that did not run, and why (printed, kept, saved)."""
        self.skipped.append((row, why))
        print(f"  [{row}] not run: {why}", flush=True)
        self._autosave()

    def _autosave(self) -> None:
        if any(self._save_to):
            self.write(*self._save_to)

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "machine": self.machine,
            "rows": [
                {
                    "row": r.row,
                    "name": r.name,
                    "note": r.note,
                    "runs": r.runs,
                    "median": r.medians(),
                }
                for r in self.rows
            ],
            "skipped": [{"row": row, "why": why} for row, why in self.skipped],
        }

    def to_markdown(self) -> str:
        lines = [f"### {self.title}", "", machine_line(self.machine), ""]
        lines += ["| row | run | figures (median [min-max] over repeats) | note |"]
        lines += ["|---|---|---|---|"]
        for r in self.rows:
            lines.append(f"| {r.row} | {r.name} | {_cells(r)} | {r.note} |")
        for row, why in self.skipped:
            lines.append(f"| {row} | not run | | {why} |")
        return "\n".join(lines) + "\n"

    def finish(self, args: argparse.Namespace) -> Report:
        """Writes the report where `args.json` / `args.markdown` say, and prints it.

        The machine's record gains `total_s`: the seconds since the report began.
        """
        self.machine["total_s"] = round(time.perf_counter() - self._start, 1)
        self.write(args.json, args.markdown)
        print("\n" + self.to_markdown(), flush=True)
        return self

    def write(self, json_path: str | None, markdown_path: str | None) -> None:
        """Writes the report where asked (either path may be None).

        The load average is sampled again: a figure measured under load the
        suite did not cause shows as a load before it.
        """
        self.machine["load_average_after"] = round(os.getloadavg()[0], 2)
        if json_path:
            _replace(json_path, json.dumps(self.to_json(), indent=1))
        if markdown_path:
            _replace(markdown_path, self.to_markdown())


def _replace(path: str, text: str) -> None:
    # Written beside, then renamed over: a kill mid-write (the suite saves
    # while it runs) leaves the previous file whole, never half of one.
    partial = f"{path}.partial"
    with open(partial, "w") as f:
        f.write(text)
    os.replace(partial, path)


def _cells(row: Row) -> str:
    if not row.runs:
        return ""
    parts = []
    for key in row.runs[0]:
        values = [r[key] for r in row.runs]
        s = spread(values)
        cell = f"{key} {_fmt(s['median'])}"
        if len(values) > 1:
            cell += f" [{_fmt(s['min'])}-{_fmt(s['max'])}]"
        parts.append(cell)
    return ", ".join(parts)


def _fmt(x: float) -> str:
    if isinstance(x, int):  # a count: no decimals
        return f"{x:,}"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, not the whole usage block above it: the option's name is
        # in `message`, the rest is --help's.
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")

    def parse_args(self, *args: Any, **kwargs: Any) -> argparse.Namespace:  # type: ignore[override]
        out = super().parse_args(*args, **kwargs)
        if out.tiny and hasattr(out, "repeats"):  # a code path: one run of each
            out.repeats = 1
        return out


def positive_int(text: str) -> int:
    """argparse's type for a count: an integer of at least 1 (else one line, exit 2)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return value


def nonnegative_int(text: str) -> int:
    """argparse's type for a count that may be 0 (a lag, an offset)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer of 0 or more")
    return value


def positive_float(text: str) -> float:
    """argparse's type for an amount (seconds): a finite number above 0.

    Else one line, exit 2: a NaN or negative budget would skip every step.
    """
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive finite number")
    return value


# What a `--tiny` ratio or clock check says in its note: toy sizes measure
# first-call costs, not throughput.
TINY_NOTE = "tiny: a code-path check, not a measurement"

PUREJAXRL_CLONE = "git clone https://github.com/luchris429/purejaxrl"


def purejaxrl_checkout(module: str = "ppo") -> Callable[[str], str]:
    """argparse's type for `--purejaxrl DIR`: DIR/purejaxrl/`module`.py must exist.

    Checked at parse time, before any training: a wrong path is one line
    naming the file it looked for and how to get it, exit status 2.
    """

    def check(text: str) -> str:
        if os.path.isfile(os.path.join(text, "purejaxrl", f"{module}.py")):
            return text
        hint = (
            f"; did you mean its parent, {os.path.dirname(os.path.abspath(text))}?"
            if os.path.isfile(os.path.join(text, f"{module}.py"))
            else f" ({PUREJAXRL_CLONE} DIR)"
        )
        raise argparse.ArgumentTypeError(
            f"{os.path.join(text, 'purejaxrl', module + '.py')} not found: pass the "
            f"root of a luchris429/purejaxrl checkout, the folder holding "
            f"purejaxrl/{module}.py{hint}"
        )

    check.__name__ = "PureJaxRL checkout"  # argparse's name for it in errors
    return check


def add_purejaxrl(p: argparse.ArgumentParser, module: str = "ppo") -> None:
    """`--purejaxrl DIR`: a PureJaxRL checkout, checked at parse time."""
    p.add_argument(
        "--purejaxrl",
        metavar="DIR",
        type=purejaxrl_checkout(module),
        help="a luchris429/purejaxrl checkout, the folder holding "
        f"purejaxrl/{module}.py (checked before any work)",
    )


def run_main(main: Callable[[], Any]) -> None:
    """Runs a script's `main()` as its command.

    A configuration the library refuses (`purejaxdrl.ConfigError`, such as a
    `--total-steps` below one update) is one line naming the value and the
    fix, exit status 2, as argparse does for an option it refuses: the
    values come from the command line, so a traceback would point at the
    library instead of at them.
    """
    from purejaxdrl.config import ConfigError

    try:
        main()
    except ConfigError as e:
        print(f"{os.path.basename(sys.argv[0])}: error: {e}", file=sys.stderr)
        sys.exit(2)


def parser(doc: str | None, repeats: bool = True) -> argparse.ArgumentParser:
    """An argument parser with the options every benchmark script takes.

    `--help` prints `doc` (the script's docstring) whole, as written.

    With `--tiny`, `--repeats` is 1. `repeats=False`: a script that trains
    whole runs once each, its spread over seeds (`--seeds`), takes no
    `--repeats` (rather than one it would ignore).
    """
    # The whole docstring: `--help` is where the docs send readers for what
    # a script measures (its first line alone said only what it is).
    p = _Parser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    if repeats:
        p.add_argument(
            "--repeats", type=positive_int, default=3, help="runs per contender"
        )
    p.add_argument("--json", help="write the results as JSON to this path")
    p.add_argument("--markdown", help="write the results as a Markdown table")
    p.add_argument(
        "--tiny",
        action="store_true",
        help="smallest sizes, to check that the script still runs (CI)",
    )
    return p
