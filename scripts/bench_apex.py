"""Ape-X learner throughput: gradient steps/s and env steps/s, beside DQN.

The CartPole presets with a 1M-transition replay and batches of 256: Ape-X
(prioritised replay: sample, importance weights, priority updates, initial
priorities from the actors' TD errors) and DQN (uniform replay) in one run,
alternating, median of `--repeats`. Compile time is excluded and printed.

    python scripts/bench_apex.py --repeats 3
"""

import argparse
import statistics

import purejaxdrl as pjd


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--total-steps", type=int, default=400_000)
    parser.add_argument("--buffer-size", type=int, default=1_000_000)
    parser.add_argument("--batch-size", type=int, default=256)
    return parser.parse_args()


def main() -> None:
    args = parse()
    configs = {}
    for algo in ("apex", "dqn"):
        preset = pjd.load_preset("cartpole", algo).config
        configs[algo] = pjd.apply_overrides(
            preset,
            {
                "devices": 1,
                "total_steps": args.total_steps,
                "num_logs": 1,
                algo: {"buffer_size": args.buffer_size, "batch_size": args.batch_size},
            },
        )
    grads = {algo: [] for algo in configs}
    envs = {algo: [] for algo in configs}
    compile_s = {}
    for _ in range(args.repeats):
        for algo, config in configs.items():
            result = pjd.train(config)
            steps = result.history[-1]["learner/grad_steps"]  # at the run's end
            grads[algo].append(steps / result.train_seconds)
            envs[algo].append(result.steps_per_second)
            compile_s[algo] = result.compile_seconds
    c = configs["apex"]
    print(
        f"CartPole, {c.num_envs} envs x {c.unroll_length} steps per update, "
        f"{c.apex.updates_per_step} gradient steps of {args.batch_size} per update, "
        f"replay {args.buffer_size:,}; {args.total_steps:,} env steps, median of "
        f"{args.repeats}"
    )
    for algo in configs:
        print(
            f"{algo:<5} {statistics.median(grads[algo]):10,.0f} gradient steps/s "
            f"{statistics.median(envs[algo]):10,.0f} env steps/s   compile "
            f"{compile_s[algo]:.1f} s"
        )
    ratio = statistics.median(grads["apex"]) / statistics.median(grads["dqn"])
    print(f"apex / dqn gradient steps/s: {ratio:.2f}")


if __name__ == "__main__":
    main()
