"""PBT beside a random sweep from the same space at the same environment steps.

CartPole-v1 PPO (the preset's section, its learning-rate decay off, so that
the schedule is what PBT can give and a sweep cannot), a population of 8:
`pjd.pbt` exploring the learning rate and the entropy cost, and `pjd.sweep`
drawing 8 settings from the same spaces (`--sample`), both over the same
budget per member. Each experiment is repeated with `--repeats` search seeds
(the draws, PBT's choices and the runs' seeds all change). Reported per
experiment: the best member's final return (mean return of the episodes of
its last chunk) and the population's mean, whatever they show. Both run as one
compiled program each, so their steps/s are compared too (issue 44's overhead
figure; on a busy CPU only a rough one).

    python scripts/pbt_vs_sweep.py --repeats 3
"""

from typing import Any

import numpy as np
from harness import Report, parser

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts

SPACE = {
    "learning_rate": ("loguniform", 1e-5, 1e-2),
    "entropy_cost": ("loguniform", 1e-4, 1e-1),
}
SETTINGS = {"num_logs": 20, "ppo": {"anneal_lr": False}}
TINY = {"total_steps": 4 * 128 * 4, "num_logs": 4}


def config_for(tiny: bool, seed: int, steps: int) -> pjd.TrainConfig:
    """The cartpole PPO preset at `steps` per member, runs seeded from `seed`."""
    config = pjd.load_preset("cartpole", "ppo").config
    config = pjd.apply_overrides(config, {**SETTINGS, "total_steps": steps})
    return pjd.apply_overrides(config, {**(TINY if tiny else {}), "seed": seed})


def figures(final: np.ndarray, seconds: float, steps: int) -> dict[str, float]:
    return {
        "best_return": float(np.nanmax(final)),
        "mean_return": float(np.nanmean(final)),
        "sps": steps / seconds,
    }


def experiment(config: pjd.TrainConfig, search_seed: int, members: int) -> dict:
    """One PBT run and one random sweep of `members` each: their figures."""
    common: dict[str, Any] = {"search_seed": search_seed}
    steps = members * config.total_steps
    population = pjd.pbt(config, explore=SPACE, population=members, ready=2, **common)
    swept = pjd.sweep(config, sample=SPACE, num_samples=members, **common)
    return {
        "pbt": figures(population.final_return, population.train_seconds, steps),
        "sweep": figures(swept.final_return, swept.train_seconds, steps),
    }


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__)
    p.add_argument("--population", type=int, default=8)
    p.add_argument("--steps", type=int, default=200_000, help="per member")
    args = p.parse_args(argv)
    report = Report(
        f"PBT vs random sweep: CartPole-v1 PPO, {args.steps:,} steps per member"
    )
    runs: dict[str, list[dict]] = {"pbt": [], "sweep": []}
    for repeat in range(args.repeats):
        config = config_for(args.tiny, 1000 * repeat, args.steps)
        for name, f in experiment(config, repeat, args.population).items():
            runs[name].append(f)
            print(f"experiment {repeat}: {name:<6} {f}", flush=True)
    for name, f in runs.items():
        report.add(f"population of {args.population}", name, f)
    for key in ("best_return", "mean_return", "sps"):
        a, b = (np.mean([f[key] for f in runs[n]]) for n in ("pbt", "sweep"))
        print(f"{key}: pbt {a:,.1f}  sweep {b:,.1f}  (pbt / sweep {a / b:.2f})")
    return report.finish(args)


if __name__ == "__main__":
    main()
