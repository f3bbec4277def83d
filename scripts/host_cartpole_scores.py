"""Scores of the `cartpole_envpool` preset through the actor-learner runner.

Trains each algorithm on EnvPool's and Gymnasium's CartPole-v1 for a few seeds
(one after another, one device) and prints the final mean return over seeds
(mean ± std, min) and steps/s (compile excluded):

    python scripts/host_cartpole_scores.py --seeds 3
"""

import argparse

import numpy as np

import purejaxdrl as pjd


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--algos", default="impala,ppo")
    parser.add_argument("--envs", default="envpool:CartPole-v1,gymnasium:CartPole-v1")
    args = parser.parse_args()
    print("| algorithm | environment | steps | final mean return (seeds) | steps/s |")
    print("|---|---|---|---|---|")
    for algo in args.algos.split(","):
        for env_id in args.envs.split(","):
            returns, speeds = [], []
            for seed in range(args.seeds):
                config = pjd.load_preset("cartpole_envpool", algo).config
                config = pjd.apply_overrides(
                    config, {"env": {"id": env_id}, "devices": 1, "seed": seed}
                )
                result = pjd.train(config)
                returns.append(result.mean_return)
                speeds.append(result.steps_per_second)
            print(
                f"| {algo} | `{env_id}` | {config.total_steps // 1000}k | "
                f"{np.mean(returns):.1f} ± {np.std(returns):.1f} (min "
                f"{np.min(returns):.1f}, {args.seeds} seeds) | "
                f"{np.mean(speeds) / 1e3:.1f}k |",
                flush=True,
            )


if __name__ == "__main__":
    main()
