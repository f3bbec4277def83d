"""Policy lag on CartPole: IMPALA with and without the V-trace correction.

Trains the `cartpole` IMPALA preset with the actors acting with parameters K
updates old (policy_lag K), once with V-trace and once with the correction off
(ρ = c = 1: plain actor-critic targets that ignore the importance weights),
for several seeds, and prints per setting the final mean return of each seed
(episodes of the last 5% of training, as `train` reports it), their mean, and
the mean return over the whole run (how fast it learned).

    python scripts/bench_policy_lag.py --lags 0 4 16 --seeds 3
"""

import argparse
import dataclasses
import math
import statistics
import time

import numpy as np

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts


def run(preset: pjd.Preset, lag: int, correction: bool, seed: int) -> dict:
    config = pjd.apply_overrides(
        preset.config,
        {
            "seed": seed,
            "devices": 1,
            "impala": {"policy_lag": lag, "vtrace_correction": correction},
        },
    )
    result = pjd.train(config)
    curve = [r.get("episode/mean_return", math.nan) for r in result.history]
    return {"final": result.mean_return, "curve_mean": float(np.nanmean(curve))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="cartpole", help="a preset with impala")
    parser.add_argument("--lags", type=int, nargs="+", default=[0, 4, 16])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--total-steps", type=int, default=None, help="override the preset's budget"
    )
    args = parser.parse_args()

    preset = pjd.load_preset(args.env, "impala")
    if args.total_steps is not None:
        config = pjd.apply_overrides(preset.config, {"total_steps": args.total_steps})
        preset = dataclasses.replace(preset, config=config)
    config = preset.config
    print(
        f"IMPALA on {config.env.id}: {config.num_envs} envs x "
        f"{config.unroll_length} steps per update, {config.total_steps:,} steps, "
        f"seeds 0..{args.seeds - 1}; target {preset.target_return}"
    )
    rows = []
    start = time.perf_counter()
    for lag in args.lags:
        for correction in (True, False):
            results = [run(preset, lag, correction, s) for s in range(args.seeds)]
            finals = [r["final"] for r in results]
            rows.append(
                (
                    lag,
                    "V-trace" if correction else "none (rho=c=1)",
                    finals,
                    statistics.mean(finals),
                    sum(f >= preset.target_return for f in finals),
                    statistics.mean(r["curve_mean"] for r in results),
                )
            )
            print(f"  lag {lag:>2}, {rows[-1][1]}: {[round(f, 1) for f in finals]}")

    print(f"\n({time.perf_counter() - start:.0f} s)\n")
    table = [("lag K", "correction", "final return per seed", "mean", "solved",
              "mean over training")]  # fmt: skip
    for lag, name, finals, mean, solved, curve in rows:
        table.append(
            (
                str(lag),
                name,
                ", ".join(f"{f:.1f}" for f in finals),
                f"{mean:.1f}",
                f"{solved}/{len(finals)}",
                f"{curve:.1f}",
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for i, row in enumerate(table):
        cells = (c.ljust(w) for c, w in zip(row, widths, strict=True))
        print("| " + " | ".join(cells) + " |")
        if i == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    print(f"solved: final mean return >= {preset.target_return:g}")


if __name__ == "__main__":
    main()
