"""Training steps/s with a whole-state checkpoint after every chunk vs none.

One preset, one process, runs interleaved (none, every chunk, none, ...) so that
machine drift hits both alike, after one untimed round that warms up. "every
chunk" writes a checkpoint after each of the run's `--num-logs` chunks
(asynchronously, see purejaxdrl/training/checkpoint.py); "none" writes no run
directory at all. Steps/s is timed from the call of `train` to its return,
less its compile seconds (`harness.timed_train`): the last checkpoint and the
wait for its write are included, and so is the run directory's other output
(summary.json, params.msgpack) on the "every chunk" side; on both sides,
so is the run's setup (the env and its first state, compile aside), a fixed
cost that dominates at `--tiny` sizes.
`loop_steps_per_s`, TrainResult's own, stops at the last chunk's record and
misses the last save.

    python scripts/bench_checkpoint.py --env cartpole --repeats 5
"""

import tempfile

from harness import (
    TINY,
    Report,
    interleave,
    parser,
    positive_int,
    run_main,
    timed_train,
)

import purejaxdrl as pjd


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__)
    p.add_argument("--env", default="cartpole", help="preset name")
    p.add_argument("--algo", default="ppo")
    p.add_argument("--num-logs", type=positive_int, default=None, help="chunks per run")
    p.add_argument("--num-envs", type=positive_int, default=None)
    p.add_argument("--total-steps", type=positive_int, default=None)
    args = p.parse_args(argv)
    sizes = {"num_logs": args.num_logs, "num_envs": args.num_envs}
    sizes = {"total_steps": args.total_steps, **sizes, "devices": 1}
    sizes = TINY if args.tiny else {k: v for k, v in sizes.items() if v is not None}
    config = pjd.apply_overrides(pjd.load_preset(args.env, args.algo).config, sizes)
    report = Report(f"Checkpoints: {args.algo} on {config.env.id}")
    with tempfile.TemporaryDirectory() as tmp:
        every = pjd.apply_overrides(
            config, {"checkpoint": {"every": 1, "keep": 3}, "run_dir": tmp}
        )

        def none(repeat: int) -> dict[str, float]:
            return timed_train(config, console=False)[1]

        def each(repeat: int) -> dict[str, float]:
            return timed_train(every, write_files=True, console=False)[1]

        contenders = {"none": none, "every chunk": each}
        if not args.tiny:
            interleave(contenders, 1)  # warms up: first writes, file caches
        runs = interleave(contenders, args.repeats)
    row = (
        f"{config.num_envs} envs x {config.unroll_length} steps, "
        f"{config.num_updates} updates in {config.num_logs} chunks"
    )
    a = report.add(row, "no checkpoints", runs["none"])
    b = report.add(row, "checkpoint every chunk", runs["every chunk"])
    slowdown = 100 * (1 - b.medians()["steps_per_s"] / a.medians()["steps_per_s"])
    report.add(row, "slowdown", [{"percent": slowdown}])
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
