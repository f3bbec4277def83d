"""Steps/s with every logger and evaluation on vs everything off, same run.

"on": a run directory with metrics.jsonl, TensorBoard event files, a W&B run
(offline mode: no network), the console progress line, and evaluation (16
episodes of the deterministic policy every 5 chunks and at the end);
checkpoints only at the end, so that their cost (see bench_checkpoint.py) is
not counted here. "off": no files, no console, no
evaluation. Runs alternate (off, on, off, on, ...) so that drift hits both;
medians are printed. Compile time is excluded from steps/s.

    python scripts/bench_logging.py --repeats 5
"""

import argparse
import os
import statistics
import tempfile

import purejaxdrl as pjd
from purejaxdrl.training.train import chunk_lengths


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="cartpole")
    parser.add_argument("--algo", default="ppo")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--total-steps", type=int, default=None)
    return parser.parse_args()


def main() -> None:
    args = parse()
    os.environ.setdefault("WANDB_MODE", "offline")
    preset = pjd.load_preset(args.env, args.algo)
    overrides = {"devices": 1, "checkpoint": {"every": 0}}
    if args.total_steps:
        overrides["total_steps"] = args.total_steps
    base = pjd.apply_overrides(preset.config, overrides)
    on = pjd.apply_overrides(base, {"eval": {"episodes": 16, "every": 5}})
    speeds: dict[str, list[float]] = {"off": [], "on": []}
    evals = []
    with tempfile.TemporaryDirectory() as root:
        on = pjd.apply_overrides(on, {"run_dir": root})
        for _ in range(args.repeats):
            speeds["off"].append(pjd.train(base).steps_per_second)
            r = pjd.train(
                on, write_files=True, console=True, log_to=("tensorboard", "wandb")
            )
            speeds["on"].append(r.steps_per_second)
            evals.append(r.eval_return)
    off, on_ = (statistics.median(speeds[k]) for k in ("off", "on"))
    print(
        f"{base.algo} on {base.env.id}, {base.num_envs} envs x "
        f"{base.unroll_length} steps, {base.num_updates} updates in "
        f"{len(chunk_lengths(base.num_updates, base.num_logs))} chunks; median of "
        f"{args.repeats}"
    )
    print(f"off: {off:12,.0f} steps/s   {[round(x) for x in speeds['off']]}")
    print(f"on:  {on_:12,.0f} steps/s   {[round(x) for x in speeds['on']]}")
    print(f"slowdown with loggers and evaluation on: {100 * (1 - on_ / off):.1f}%")
    print(f"evaluation returns (deterministic policy): {evals}")


if __name__ == "__main__":
    main()
