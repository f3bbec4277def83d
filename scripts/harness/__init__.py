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

Scripts import it as a sibling package (`from harness import ...`): they run
as `python scripts/NAME.py`, which puts `scripts/` first on `sys.path`. One
module per concept, all re-exported here:

- `machine`: what ran a figure (`describe_machine`, `machine_line`,
  `source_commit`).
- `timing`: compiling ahead, timed calls, repeats, `interleave`, `spread`,
  `Budget`.
- `report`: `Row` and `Report`, the table as JSON and Markdown.
- `options`: the shared command line, its argparse types, `run_main`.
- `training`: `TINY`, training figures, the act+env `ceiling`, `ablation`.
"""

from .machine import describe_machine, machine_line, source_commit
from .options import (
    PUREJAXRL_CLONE,
    add_purejaxrl,
    nonnegative_int,
    parser,
    positive_float,
    positive_int,
    purejaxrl_checkout,
    run_main,
)
from .report import Report, Row
from .timing import (
    TIMED,
    Budget,
    Figures,
    best_time,
    compile_ahead,
    interleave,
    mean_std,
    slug,
    spread,
    time_call,
    time_program,
    timed_region,
)
from .training import (
    TINY,
    TINY_NOTE,
    ablation,
    add_ceiling,
    ceiling,
    timed_train,
    train_figures,
    train_seeded,
)

__all__ = [
    "PUREJAXRL_CLONE",
    "TIMED",
    "TINY",
    "TINY_NOTE",
    "Budget",
    "Figures",
    "Report",
    "Row",
    "ablation",
    "add_ceiling",
    "add_purejaxrl",
    "best_time",
    "ceiling",
    "compile_ahead",
    "describe_machine",
    "interleave",
    "machine_line",
    "mean_std",
    "nonnegative_int",
    "parser",
    "positive_float",
    "positive_int",
    "purejaxrl_checkout",
    "run_main",
    "slug",
    "source_commit",
    "spread",
    "time_call",
    "time_program",
    "timed_region",
    "timed_train",
    "train_figures",
    "train_seeded",
]
