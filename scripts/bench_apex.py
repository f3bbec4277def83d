"""Ape-X learner throughput: gradient steps/s and env steps/s, beside DQN.

The CartPole presets with a 1M-transition replay and batches of 256: Ape-X
(prioritised replay: sample, importance weights, priority updates, initial
priorities from the actors' TD errors) and DQN (uniform replay) in one run,
alternating, median of `--repeats`. Compile time is excluded and reported.

    python scripts/bench_apex.py --repeats 3
"""

import argparse
import functools

from harness import TINY_NOTE, Report, interleave, parser, positive_int, run_main

import purejaxdrl as pjd

# --tiny: past the presets' warm-up of 5,000 steps, so both learners step.
TINY_SIZES = {"total_steps": 8192, "buffer_size": 8192, "batch_size": 32}


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


def make_parser() -> argparse.ArgumentParser:
    """The options; `--tiny` replaces the sizes (and says so if any was given)."""
    p = parser(__doc__)
    p.add_argument(
        "--total-steps", type=positive_int, default=400_000, help="default 400,000"
    )
    p.add_argument(
        "--buffer-size",
        type=positive_int,
        default=1_000_000,
        help="replay transitions (default 1,000,000)",
    )
    p.add_argument("--batch-size", type=positive_int, default=256, help="default 256")
    p.tiny_replaces = ("repeats", *TINY_SIZES)
    return p


def main(argv: list[str] | None = None) -> Report:
    args = make_parser().parse_args(argv)
    if args.tiny:
        vars(args).update(TINY_SIZES)
    cfgs = configs(args.total_steps, args.buffer_size, args.batch_size)
    c = cfgs["apex"]
    report = Report(
        f"Ape-X vs DQN on CartPole: {c.num_envs} envs x {c.unroll_length} steps "
        f"per update, {c.apex.updates_per_step} gradient steps of "
        f"{args.batch_size} per update, replay {args.buffer_size:,}"
    )
    runs = measure(cfgs, args.repeats)
    row = f"{args.total_steps:,} env steps"
    apex = report.add(row, "apex", runs["apex"])
    dqn = report.add(row, "dqn", runs["dqn"])
    ratio = apex.medians()["grad_steps_per_s"] / dqn.medians()["grad_steps_per_s"]
    note = TINY_NOTE if args.tiny else ""
    report.add(row, "ratio apex / dqn", [{"grad_steps_per_s": ratio}], note)
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
