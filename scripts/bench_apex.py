"""Ape-X learner throughput: gradient steps/s and env steps/s, beside DQN.

The CartPole presets with a 1M-transition replay and batches of 256: Ape-X
(prioritised replay: sample, importance weights, priority updates, initial
priorities from the actors' TD errors) and DQN (uniform replay) in one run,
alternating, median of `--repeats`. Compile time is excluded and printed.

    python scripts/bench_apex.py --repeats 3
"""

import argparse
import functools
import statistics

from harness import interleave

import purejaxdrl as pjd


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--total-steps", type=int, default=400_000)
    parser.add_argument("--buffer-size", type=int, default=1_000_000)
    parser.add_argument("--batch-size", type=int, default=256)
    return parser.parse_args()


def configs(total_steps: int, buffer_size: int, batch_size: int) -> dict:
    """The CartPole presets' Ape-X and DQN at the benchmark's replay sizes."""
    out = {}
    for algo in ("apex", "dqn"):
        preset = pjd.load_preset("cartpole", algo).config
        out[algo] = pjd.apply_overrides(
            preset,
            {
                "devices": 1,
                "total_steps": total_steps,
                "num_logs": 1,
                algo: {"buffer_size": buffer_size, "batch_size": batch_size},
            },
        )
    return out


def measure(configs: dict, repeats: int) -> dict[str, list[dict[str, float]]]:
    """Each algorithm's gradient steps/s, env steps/s and compile s, alternating."""

    def run(algo: str, repeat: int) -> dict[str, float]:
        del repeat  # every repeat trains the same seed: speed is measured
        result = pjd.train(configs[algo])
        steps = result.history[-1]["learner/grad_steps"]  # at the run's end
        return {
            "grad_steps_per_s": steps / result.train_seconds,
            "env_steps_per_s": result.steps_per_second,
            "compile_s": result.compile_seconds,
        }

    return interleave({algo: functools.partial(run, algo) for algo in configs}, repeats)


def main() -> None:
    args = parse()
    cfgs = configs(args.total_steps, args.buffer_size, args.batch_size)
    runs = measure(cfgs, args.repeats)
    c = cfgs["apex"]
    print(
        f"CartPole, {c.num_envs} envs x {c.unroll_length} steps per update, "
        f"{c.apex.updates_per_step} gradient steps of {args.batch_size} per update, "
        f"replay {args.buffer_size:,}; {args.total_steps:,} env steps, median of "
        f"{args.repeats}"
    )
    medians = {}
    for algo, rows in runs.items():
        medians[algo] = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        m = medians[algo]
        print(
            f"{algo:<5} {m['grad_steps_per_s']:10,.0f} gradient steps/s "
            f"{m['env_steps_per_s']:10,.0f} env steps/s   compile "
            f"{m['compile_s']:.1f} s"
        )
    ratio = medians["apex"]["grad_steps_per_s"] / medians["dqn"]["grad_steps_per_s"]
    print(f"apex / dqn gradient steps/s: {ratio:.2f}")


if __name__ == "__main__":
    main()
