"""Policy lag on CartPole: IMPALA with and without the V-trace correction.

Trains the `cartpole` IMPALA preset with the actors acting with parameters K
updates old (policy_lag K), once with V-trace and once with the correction off
(ρ = c = 1: plain actor-critic targets that ignore the importance weights),
for several seeds, and reports per setting the final mean return of each seed
(episodes of the last 5% of training, as `train` reports it), how many seeds
reached the preset's target, and the mean return over the whole run (how fast
it learned).

    python scripts/bench_policy_lag.py --lags 0 4 16 --seeds 3
"""

import math

import numpy as np
from harness import TINY, Report, nonnegative_int, parser, positive_int, run_main

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__, repeats=False)  # whole runs, spread over --seeds
    p.add_argument("--env", default="cartpole", help="a preset with impala")
    p.add_argument(
        "--lags",
        type=nonnegative_int,
        nargs="+",
        default=[0, 4, 16],
        help="policy lags K to train at (updates the actors' parameters trail by)",
    )
    p.add_argument("--seeds", type=positive_int, default=3)
    p.add_argument(
        "--total-steps", type=positive_int, help="override the preset's budget"
    )
    args = p.parse_args(argv)
    preset = pjd.load_preset(args.env, "impala")
    overrides = {"devices": 1}
    if args.total_steps is not None:
        overrides["total_steps"] = args.total_steps
    if args.tiny:
        overrides, args.lags, args.seeds = TINY, [2], 1
    config = pjd.apply_overrides(preset.config, overrides)
    report = Report(
        f"Policy lag: IMPALA on {config.env.id}, {config.total_steps:,} steps, "
        f"target {preset.target_return}"
    )
    for lag in args.lags:
        for correction in (True, False):
            runs = []
            for seed in range(args.seeds):
                impala = {"policy_lag": lag, "vtrace_correction": correction}
                result = pjd.train(
                    pjd.apply_overrides(config, {"seed": seed, "impala": impala})
                )
                curve = [r.get("episode/mean_return", math.nan) for r in result.history]
                runs.append(
                    {
                        "final_return": result.mean_return,
                        "solved": float(result.mean_return >= preset.target_return),
                        "mean_over_training": float(np.nanmean(curve)),
                    }
                )
            name = "V-trace" if correction else "none (rho=c=1)"
            report.add(f"lag {lag}", name, runs)
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
