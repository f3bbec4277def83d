"""Scores of the `cartpole_envpool` preset through the actor-learner runner.

Trains each algorithm on EnvPool's and Gymnasium's CartPole-v1 for a few seeds
(one after another, one device) and reports each seed's final mean return and
steps/s (compile excluded):

    python scripts/host_cartpole_scores.py --seeds 3
"""

from harness import TINY, Report, parser, positive_int, run_main, train_figures

import purejaxdrl as pjd


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__, repeats=False)  # one run, nothing to repeat
    p.add_argument("--seeds", type=positive_int, default=3)
    p.add_argument("--algos", default="impala,ppo")
    p.add_argument("--envs", default="envpool:CartPole-v1,gymnasium:CartPole-v1")
    args = p.parse_args(argv)
    if args.tiny:  # one algorithm on both kinds of host env
        args.seeds, args.algos = 1, args.algos.split(",")[0]
    report = Report("cartpole_envpool preset, actor-learner runner")
    for algo in args.algos.split(","):
        for env_id in args.envs.split(","):
            config = pjd.load_preset("cartpole_envpool", algo).config
            overrides = {"env": {"id": env_id}, "devices": 1}
            overrides.update(TINY if args.tiny else {})
            config = pjd.apply_overrides(config, overrides)
            runs = [
                train_figures(pjd.train(pjd.apply_overrides(config, {"seed": seed})))
                for seed in range(args.seeds)
            ]
            report.add(f"{algo} `{env_id}`", f"{config.total_steps:,} steps", runs)
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
