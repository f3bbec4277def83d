"""PBT beside a random sweep from the same space at the same environment steps.

A preset's PPO section (CartPole-v1 by default, `--preset breakout_minatar`
for the harder task; its learning-rate decay off, so that the schedule is
what PBT can give and a sweep cannot), a population of 8:
`pjd.pbt` exploring the learning rate and the entropy cost, and `pjd.sweep`
drawing 8 settings from the same spaces (`--sample`), both over the same
budget per member. Each experiment is repeated with `--repeats` search seeds
(the draws, PBT's choices and the runs' seeds all change). Reported per
experiment: the best member's final return (mean return of the episodes of
its last chunk) and the population's mean, whatever they show.

The sweep trains the population PBT starts from (member i is the sweep's
setting i), so the two programs differ only by PBT's ready steps: their
steps/s (compile excluded) and the CPU seconds each used are PBT's overhead.
CPU seconds are the figure to read on a shared machine, where other
processes stretch wall time but not the work done.

    python scripts/pbt_vs_sweep.py --repeats 3
    python scripts/pbt_vs_sweep.py --preset breakout_minatar --steps 1000000
    python scripts/pbt_vs_sweep.py ... --first 2 --repeats 1   # experiment 2 alone
"""

import re
import time
from typing import Any

import numpy as np
from harness import Report, parser, positive_int, run_main

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts

SPACE = {
    "learning_rate": ("loguniform", 1e-5, 1e-2),
    "entropy_cost": ("loguniform", 1e-4, 1e-1),
}
SETTINGS = {"num_logs": 20, "ppo": {"anneal_lr": False}}
TINY = {"num_envs": 4, "unroll_length": 128, "total_steps": 4 * 128 * 4, "num_logs": 4}


def config_for(preset: str, tiny: bool, seed: int, steps: int) -> pjd.TrainConfig:
    """The preset's PPO section at `steps` per member, runs seeded from `seed`."""
    config = pjd.load_preset(preset, "ppo").config
    config = pjd.apply_overrides(config, {**SETTINGS, "total_steps": steps})
    return pjd.apply_overrides(config, {**(TINY if tiny else {}), "seed": seed})


class CPUMeter:
    """CPU seconds per update between a run's first and last progress lines.

    The progress lines come after each chunk, so the span excludes compiling
    and the first chunk; CPU time, unlike wall time, is not stretched by the
    other processes of a shared machine.
    """

    def __init__(self) -> None:
        self.marks: list[tuple[int, float]] = []

    def __call__(self, message: str) -> None:
        if match := re.search(r": update ([\d,]+) of", message):
            self.marks.append((int(match[1].replace(",", "")), time.process_time()))

    def per_update(self) -> float:
        (u0, t0), (u1, t1) = self.marks[0], self.marks[-1]
        return (t1 - t0) / max(u1 - u0, 1)


def figures(result: Any, meter: CPUMeter, steps: int) -> dict[str, float]:
    """Best and mean final return, steps/s without compiling, CPU ms/update."""
    return {
        "best_return": float(np.nanmax(result.final_return)),
        "mean_return": float(np.nanmean(result.final_return)),
        "sps": steps / result.train_seconds,
        "cpu_ms_per_update": 1000 * meter.per_update(),
    }


def experiment(config: pjd.TrainConfig, search_seed: int, members: int) -> dict:
    """One PBT run and one random sweep of `members` each: their figures.

    The sweep's settings are the population's starting ones (same search seed).
    """
    common: dict[str, Any] = {"search_seed": search_seed}
    steps = members * config.total_steps
    pbt_meter, sweep_meter = CPUMeter(), CPUMeter()
    runs = {
        "pbt": lambda: pjd.pbt(
            config, explore=SPACE, population=members, ready=2, notify=pbt_meter,
            **common,
        ),
        "sweep": lambda: pjd.sweep(
            config, sample=SPACE, num_samples=members, notify=sweep_meter, **common
        ),
    }  # fmt: skip
    # PBT first at even search seeds, the sweep first at odd ones: a drift in
    # the machine's load hits both alike.
    order = list(runs) if search_seed % 2 == 0 else list(runs)[::-1]
    done = {name: runs[name]() for name in order}
    population, swept = done["pbt"], done["sweep"]
    return {
        "pbt": figures(population, pbt_meter, steps),
        "sweep": figures(swept, sweep_meter, steps),
    }


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__)
    p.add_argument("--preset", default="cartpole")
    p.add_argument("--population", type=positive_int, default=8)
    p.add_argument("--steps", type=positive_int, default=200_000, help="per member")
    p.add_argument(
        "--first", type=int, default=0, help="first experiment (search seed)"
    )
    args = p.parse_args(argv)
    steps = config_for(args.preset, args.tiny, 0, args.steps).total_steps
    report = Report(
        f"PBT vs random sweep: {args.preset} PPO, {steps:,} steps per member"
    )
    runs: dict[str, list[dict]] = {"pbt": [], "sweep": []}
    for repeat in range(args.first, args.first + args.repeats):
        config = config_for(args.preset, args.tiny, 1000 * repeat, args.steps)
        for name, f in experiment(config, repeat, args.population).items():
            runs[name].append(f)
            print(f"experiment {repeat}: {name:<6} {f}", flush=True)
    for name, f in runs.items():
        report.add(f"population of {args.population}", name, f)
    for key in ("best_return", "mean_return", "sps", "cpu_ms_per_update"):
        a, b = (np.mean([f[key] for f in runs[n]]) for n in ("pbt", "sweep"))
        print(f"{key}: pbt {a:,.1f}  sweep {b:,.1f}  (pbt / sweep {a / b:.2f})")
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
