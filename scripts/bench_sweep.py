"""64 PPO runs on CartPole as one sweep vs the same 64 runs one after another.

Both sides train the same runs (8 learning rates x 8 seeds by default, the
CartPole preset's PPO otherwise) in this one process on the same machine:

- sweep: `purejaxdrl.sweep(...)`, all runs vmapped in one compiled program;
- sequential: `purejaxdrl.train(config)` for each run, one after another.

Both use one fresh persistent compilation cache, so the sequential runs compile
once per learning rate (a program bakes its hyper-parameters in) and load it
for the other seeds: the most favourable honest baseline. Reported: total wall
time of each (compile included), compile and training time apart, the ratios,
and how many runs end with the same return on both sides (vmapped and unbatched
kernels round differently, and hundreds of updates amplify that until an action
flips; tests/sweeps/test_sweep.py checks short runs to 1e-5).

    python scripts/bench_sweep.py                # 64 runs, the preset's budget
    python scripts/bench_sweep.py --total-steps 100000
"""

import tempfile
import time

import numpy as np
from harness import (
    TINY,
    TINY_NOTE,
    Report,
    nonnegative_int,
    parser,
    positive_int,
    run_main,
)

import purejaxdrl as pjd


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__, repeats=False)  # whole runs, once each
    p.add_argument("--env", default="cartpole", help="a preset (default cartpole)")
    p.add_argument("--algo", default="ppo", help="the preset's algorithm (default ppo)")
    p.add_argument("--settings", type=positive_int, default=8, help="learning rates")
    p.add_argument("--seeds", type=positive_int, default=8, help="seeds per setting")
    p.add_argument("--total-steps", type=positive_int, default=None, help="per run")
    p.add_argument("--devices", type=nonnegative_int, default=0, help="0: all")
    p.tiny_replaces = ("settings", "seeds", "total_steps", "devices")
    args = p.parse_args(argv)
    cache = tempfile.TemporaryDirectory(prefix="bench-sweep-cache-")  # gone at exit
    pjd.enable_compilation_cache(cache.name)
    overrides = {"devices": args.devices}
    if args.total_steps:
        overrides["total_steps"] = args.total_steps
    if args.tiny:
        overrides, args.settings, args.seeds = TINY, 1, 2
    base = pjd.apply_overrides(pjd.load_preset(args.env, args.algo).config, overrides)
    peak = base.algo_config.learning_rate
    rates = [float(x) for x in np.geomspace(peak / 4, peak * 4, args.settings)]
    runs = args.settings * args.seeds
    report = Report(
        f"Sweep vs sequential: {runs} {base.algo} runs on {base.env.id} "
        f"({args.settings} learning rates x {args.seeds} seeds), "
        f"{base.num_updates * base.steps_per_update:,} env steps each"
    )

    start = time.perf_counter()
    result = pjd.sweep(
        base, grid={"learning_rate": rates}, seeds=args.seeds, console=False
    )
    sweep = {
        "wall_s": time.perf_counter() - start,
        "compile_s": result.compile_seconds,
        "train_s": result.train_seconds,
        "steps_per_s": result.env_steps / result.train_seconds,
    }
    start = time.perf_counter()
    sequential = [pjd.train(result.plan.run_config(i)) for i in range(runs)]
    seq = {
        "wall_s": time.perf_counter() - start,
        "compile_s": sum(r.compile_seconds for r in sequential),
        "train_s": sum(r.train_seconds for r in sequential),
    }
    seq["steps_per_s"] = result.env_steps / seq["train_s"]
    returns = [r.mean_return for r in sequential]
    same = np.isclose(returns, result.final_return, rtol=1e-4, equal_nan=True)
    (layout,) = result.layouts
    row = f"{runs} runs"
    report.add(
        row,
        "sweep",
        [{**sweep, "mean_return": float(np.nanmean(result.final_return))}],
        f"{layout.sweep} x {layout.data} mesh, {layout.runs_per_device} runs/device",
    )
    report.add(row, "sequential", [{**seq, "mean_return": float(np.nanmean(returns))}])
    ratios = {
        "wall": seq["wall_s"] / sweep["wall_s"],
        "train": seq["train_s"] / sweep["train_s"],
        "same_return_runs": float(same.sum()),
    }
    note = TINY_NOTE if args.tiny else ""
    report.add(row, "ratio sequential / sweep", [ratios], note)
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
