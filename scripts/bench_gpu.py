"""The GPU suite: every headline figure, ours beside its peer, in one process.

Rows (`--rows` picks a subset, run in the order given, each once; by default
all of them, in this order, most wanted first):

- ppo_cartpole: PPO on CartPole-v1 at PureJaxRL's settings (128 steps,
  4 epochs x 4 minibatches, lr 2.5e-4 annealed), `--seeds` seeds vmapped at
  each of `--ppo-envs` environment counts: ours as one `purejaxdrl.sweeps`,
  PureJaxRL's `ppo.py` as `jit(vmap(make_train))` (`--purejaxrl DIR`, a
  fetched checkout, never part of this repository). Aggregate env steps/s
  over all seeds, compile excluded, and the final return (each seed's, then
  their mean, on both sides).
- brax_ant: our `ant` preset beside brax's own `ppo.train` on the same
  configuration and budget (`scripts/bench_brax.py`'s mapping); steps/s over
  chunks 2..n and the final policies' return under brax's evaluation protocol;
  ours' own steps/s (`own_steps_per_s`) beside it, and a note where the two
  disagree by over 10%.
- apex_dqn: Ape-X's and DQN's gradient steps/s on CartPole with a 1M replay
  (`scripts/bench_apex.py`).
- breakout_minatar: the `breakout_minatar` PPO preset, seeds vmapped, at its
  64 environments and at 1024.
- cnn_learners: the Nature CNN and the IMPALA ResNet on 84x84x4 frames:
  forward obs/s and training samples/s (`scripts/bench_networks.py`).
- recurrent: masked-CartPole PPO with GRU, LSTM and minGRU cores beside two
  feed-forward baselines (`scripts/bench_recurrent.py`), one run per core
  (seed 0), whatever `--seeds` and `--repeats` say; `steps_per_s / B's` is
  a run's steps/s over baseline B's.
- playground: MuJoCo Playground's CartpoleBalance PPO beside brax's trainer
  on `wrap_for_brax_training` (`scripts/bench_playground.py`), at the
  `cartpole_balance` preset's settings with `--playground-envs` environments;
  then, where MuJoCo Menagerie's models are found (`MUJOCO_MENAGERIE_PATH`),
  Go1JoystickFlatTerrain the same way at its preset's settings (8192 envs,
  Playground's randomiser on both sides) for `--go1-updates` updates. Both
  budgets are rounded down to an even number of updates, as brax's trainer
  runs two epochs of ceil(updates / 2): the two sides train equal steps.

`--budget-seconds` stops before a row that would not fit (`ESTIMATES`; at
`--tiny`, 15 s each), or before an environment count of ppo_cartpole or
breakout_minatar when under 15 s are left, and the table says what did not
run. The clock starts after imports and cache setup, and a row already
started runs to its end: leave a margin. Ctrl-C stops cleanly: the table
of what finished is printed and saved, the cut row and the rows not started
are listed as interrupted, and the exit status is 130. A row that fails is
listed as failed and the others still run; the suite then exits with
status 1. `--purejaxrl DIR` is checked before any row: DIR/purejaxrl/ppo.py
must exist. `--json` and
`--markdown` are rewritten after every line, so a killed run keeps them all.
`--profile DIR` runs each contender of the rows beside a peer (and
breakout_minatar) once more under `jax.profiler`, and adds a line per
contender saying where its device's time went: busy share, operations, and
the idle gaps where it waited on the host (`scripts/device_time.py`; only
the timed region of each run counts, not its compile or cache loads).
`--tiny` runs every row but playground (MJX's step compiles for minutes on a
CPU) at toy sizes on any machine (CI runs it on a CPU). Results: printed as
they come, and written with `--json` / `--markdown`, with the date, the
command line and the total seconds. Compile time is excluded from every rate;
a `--tiny` ratio is a check that the code runs, not a measurement (its note
says so).

    python scripts/bench_gpu.py --purejaxrl /tmp/purejaxrl --json out.json
    python scripts/bench_gpu.py --tiny --rows ppo_cartpole apex_dqn
    bash scripts/gpu_setup.sh   # the wheels a bare GPU machine needs (docs/gpu.md)
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
import traceback
import types
from collections.abc import Callable
from typing import NoReturn

from gpu_rows.common import ESTIMATES
from gpu_rows.own import (
    row_apex_dqn,
    row_breakout_minatar,
    row_cnn_learners,
    row_recurrent,
)
from gpu_rows.peers import row_brax_ant, row_playground, row_ppo_cartpole
from harness import (
    Budget,
    Report,
    add_purejaxrl,
    parser,
    positive_float,
    positive_int,
    run_main,
)

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts a backend

ROWS: dict[str, Callable[[Report, argparse.Namespace, Budget], None]] = {
    "ppo_cartpole": row_ppo_cartpole,
    "brax_ant": row_brax_ant,
    "apex_dqn": row_apex_dqn,
    "breakout_minatar": row_breakout_minatar,
    "cnn_learners": row_cnn_learners,
    "recurrent": row_recurrent,
    "playground": row_playground,
}


def make_parser() -> argparse.ArgumentParser:
    """The suite's options; `--help` prints the module docstring (the rows)."""
    p = parser(__doc__)
    p.set_defaults(repeats=2)
    p.add_argument(
        "--rows",
        nargs="+",
        choices=list(ROWS),
        default=list(ROWS),
        metavar="ROW",
        help=f"rows to run ({', '.join(ROWS)}: each described above), in the "
        "order given (default: all, in that order)",
    )
    pos = positive_int
    p.add_argument(
        "--budget-seconds",
        type=positive_float,
        default=None,
        help="wall-clock seconds for the suite: a row starts only if its "
        "estimate (at --tiny, 15 s) fits what is left, an environment count "
        "of ppo_cartpole or breakout_minatar only if 15 s do; the table lists "
        "what was skipped (default: no limit)",
    )
    add_purejaxrl(p)
    p.add_argument("--seeds", type=pos, default=8, help="vmapped seeds per sweep")
    p.add_argument(
        "--ppo-envs",
        type=pos,
        nargs="+",
        default=[64, 512, 2048, 8192],
        help="ppo_cartpole's environment counts, a row of the table each",
    )
    p.add_argument(
        "--ant-steps",
        type=pos,
        default=10_000_000,
        help="env steps of each brax_ant run",
    )
    p.add_argument(
        "--playground-envs",
        type=pos,
        default=2048,
        help="environments of the playground row's CartpoleBalance runs",
    )
    p.add_argument(
        "--playground-steps",
        type=pos,
        default=2048 * 30 * 24,
        help="env steps of each CartpoleBalance run, rounded down to an even "
        "number of updates (brax's two epochs)",
    )
    p.add_argument(
        "--go1-updates",
        type=pos,
        default=10,
        help="Go1's updates (of its preset's batch)",
    )
    p.add_argument("--brax-repeats", type=pos, default=1, help="ant runs per side")
    p.add_argument(
        "--profile",
        metavar="DIR",
        help="then run each contender once more, traced by jax.profiler into "
        "DIR/<row>/<contender> (not counted in the figures), and add where its "
        "device's time went (device_time.py)",
    )
    p.add_argument(
        "--compile-cache",
        default=None,
        help="persistent compilation cache (default: a fresh temporary folder, so "
        "a repeat reloads its program instead of compiling it again)",
    )
    # At --tiny the rows use toy sizes of their own: these are not read.
    p.tiny_replaces = ("repeats", "ppo_envs", "ant_steps", "playground_envs",
                       "playground_steps", "go1_updates")  # fmt: skip
    return p


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    args = make_parser().parse_args(argv)
    args.rows = list(dict.fromkeys(args.rows))  # a row named twice runs once
    if args.tiny:
        args.seeds = min(args.seeds, 2)
        args.repeats = 1
    return args


def stub_seaborn() -> None:
    """An empty `seaborn` module where seaborn is not installed.

    gymnax 1.0.1 imports seaborn at import time (`environments/misc/pong.py`,
    for rendering, which no row does); seaborn needs pandas, and the two
    would take the wheels of gpu_setup.sh past what a GPU allocation lets us
    bring (docs/gpu.md). As bench_ppo stubs navix for PureJaxRL's wrappers.
    """
    if importlib.util.find_spec("seaborn") is None:
        sys.modules.setdefault("seaborn", types.ModuleType("seaborn"))


def main(argv: list[str] | None = None) -> Report:
    args = parse(argv)
    stub_seaborn()  # before any row imports gymnax
    with tempfile.TemporaryDirectory(prefix="bench-gpu-cache-") as fresh:
        pjd.enable_compilation_cache(args.compile_cache or fresh)
        return run_rows(args)


def run_rows(args: argparse.Namespace) -> Report:
    """Runs the chosen rows within the budget; each row's seconds are printed.

    Ctrl-C (a scheduler's SIGINT) stops the suite cleanly: the row it cut and
    the rows not started are listed as such, the table of what finished is
    printed and saved, and the exit status is 130.
    """
    budget = Budget(args.budget_seconds)
    report = Report("purejaxdrl GPU suite" + (" (tiny)" if args.tiny else ""))
    report.save_as_it_goes(args.json, args.markdown)  # a kill keeps every line
    for i, name in enumerate(args.rows):
        try:
            run_row(report, args, budget, name)
        except KeyboardInterrupt:
            return interrupted(report, args, name, args.rows[i + 1 :])
    report.finish(args)
    print(f"total {report.machine['total_s']:.0f} s", flush=True)
    failed = [f"{r} ({why})" if why else r for r, why in report.failed_rows()]
    if failed:  # a scripted run (CI) must see it, not only the table
        print(f"bench_gpu.py: rows failed: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)
    return report


def run_row(
    report: Report, args: argparse.Namespace, budget: Budget, name: str
) -> None:
    """One row, if the budget has room for it; a row that fails is recorded."""
    # At --tiny, every row fits the env-count margin: toy sizes, toy times.
    if not budget.allows(15 if args.tiny else ESTIMATES[name]):
        report.skip(name, f"out of budget ({max(0, budget.left()):.0f} s left)")
        return
    left = max(0, budget.left())
    left = f", {left:.0f} s of budget left" if args.budget_seconds else ""
    print(f"\n[{name}]{left}", flush=True)
    start = time.perf_counter()
    try:
        ROWS[name](report, args, budget)
    except Exception as e:  # one broken row must not lose the others
        traceback.print_exc()
        why = f"{type(e).__name__}: {str(e).splitlines()[0]}"
        report.skip(name, why, status="failed")
    print(f"[{name}] took {time.perf_counter() - start:.0f} s", flush=True)


def interrupted(
    report: Report, args: argparse.Namespace, name: str, later: list[str]
) -> NoReturn:
    """Ctrl-C during row `name`: the cut row and the rest recorded, table, exit 130."""
    report.skip(name, "Ctrl-C during this row: lines above are what finished",
                status="interrupted")  # fmt: skip
    for row in later:
        report.skip(row, "Ctrl-C before it started", status="interrupted")
    report.machine["interrupted_during"] = name  # not a complete run
    report.finish(args)
    print(
        f"bench_gpu.py: interrupted during {name}; the table above has what finished",
        file=sys.stderr,
        flush=True,
    )
    sys.exit(130)


if __name__ == "__main__":
    run_main(main)
