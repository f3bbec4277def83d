"""Training steps/s with a whole-state checkpoint after every chunk vs none.

One preset, one process, runs interleaved (none, every chunk, none, ...) so that
machine drift hits both alike; medians are printed. Compile time is excluded
from steps/s (as in every purejaxdrl figure); the time to finish writing the
last checkpoint is included. "every chunk" writes a checkpoint after each of
the run's `--num-logs` chunks (asynchronously, see purejaxdrl/checkpoint.py);
"none" writes no run directory at all.

    python scripts/bench_checkpoint.py --env cartpole --repeats 5
"""

import argparse
import dataclasses
import statistics
import tempfile

import purejaxdrl as pjd
from purejaxdrl.training.checkpoint import CheckpointConfig


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="cartpole", help="preset name")
    parser.add_argument("--algo", default="ppo")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--num-logs", type=int, default=None, help="chunks per run")
    parser.add_argument("--num-envs", type=int, default=None)
    parser.add_argument("--total-steps", type=int, default=None)
    return parser.parse_args()


def main() -> None:
    args = parse()
    config = pjd.load_preset(args.env, args.algo).config
    changes = {
        k: v
        for k, v in {
            "num_logs": args.num_logs,
            "num_envs": args.num_envs,
            "total_steps": args.total_steps,
        }.items()
        if v is not None
    }
    config = dataclasses.replace(config, **changes)
    pjd.enable_compilation_cache(tempfile.mkdtemp())
    every = dataclasses.replace(config, checkpoint=CheckpointConfig(every=1, keep=3))
    results: dict[str, list[float]] = {"none": [], "every chunk": []}
    chunk_seconds = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeats + 1):  # the first round warms up
            for name in results:
                if name == "none":
                    r = pjd.train(config)
                else:
                    c = dataclasses.replace(every, run_dir=tmp)
                    r = pjd.train(c, write_files=True)
                if i:
                    results[name].append(r.steps_per_second)
                    chunk_seconds.append(r.train_seconds / len(r.history))
    none = statistics.median(results["none"])
    ckpt = statistics.median(results["every chunk"])
    print(
        f"{args.algo} on {config.env.id}: {config.num_envs} envs x "
        f"{config.unroll_length} steps, {config.num_updates} updates in "
        f"{config.num_logs} chunks (~{statistics.median(chunk_seconds):.2f} s each), "
        f"median of {args.repeats}"
    )
    print(f"  no checkpoints            {none:>12,.0f} steps/s")
    print(f"  checkpoint every chunk    {ckpt:>12,.0f} steps/s")
    print(f"  slowdown                  {100 * (1 - ckpt / none):>11.1f} %")
    for name, values in results.items():
        print(f"  ({name}: " + ", ".join(f"{v:,.0f}" for v in values) + ")")


if __name__ == "__main__":
    main()
