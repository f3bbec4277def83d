"""Steps/s with every logger and evaluation on vs everything off, same run.

"on": a run directory with metrics.jsonl, TensorBoard event files, a W&B run
(offline mode: no network), the console progress line, and evaluation (16
episodes of the deterministic policy every 5 chunks and at the end); no
checkpoints but the one a run directory gets at the end (bench_checkpoint.py
measures their cost). "off": no files, no console, no evaluation. Runs
alternate (off, on, off, on, ...) so that drift hits both. Steps/s is timed
from the call of `train` to its return, less its compile seconds
(`harness.timed_train`): it counts the evaluation after the last chunk, the
loggers' writing and closing, and the run directory's files (that one
checkpoint among them); on both sides it also counts the run's setup before
compiling (the env, the config), a fixed cost that dominates at `--tiny`
sizes. `train`'s compile seconds, subtracted, also hold W&B's start, the
checkpointer's setup and the first state: those are not counted.
`loop_steps_per_s`, TrainResult's own, stops at the last chunk's record and
misses all of these.

    python scripts/bench_logging.py --repeats 5
"""

import os
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
    p.add_argument("--env", default="cartpole")
    p.add_argument("--algo", default="ppo")
    p.add_argument("--total-steps", type=positive_int, default=None)
    args = p.parse_args(argv)
    os.environ.setdefault("WANDB_MODE", "offline")
    overrides = {"devices": 1, "checkpoint": {"every": 0}}
    if args.total_steps:
        overrides["total_steps"] = args.total_steps
    if args.tiny:
        overrides.update(TINY)
    base = pjd.apply_overrides(pjd.load_preset(args.env, args.algo).config, overrides)
    report = Report(f"Loggers and evaluation: {base.algo} on {base.env.id}")
    with tempfile.TemporaryDirectory() as root:
        on = pjd.apply_overrides(
            base, {"eval": {"episodes": 16, "every": 5}, "run_dir": root}
        )

        def off_run(repeat: int) -> dict[str, float]:
            return timed_train(base, console=False)[1]

        def on_run(repeat: int) -> dict[str, float]:
            r, figures = timed_train(
                on, write_files=True, console=True, log_to=("tensorboard", "wandb")
            )
            return {**figures, "eval_return": r.eval_return}

        runs = interleave({"off": off_run, "on": on_run}, args.repeats)
    row = f"{base.num_envs} envs x {base.unroll_length} steps, {base.total_steps:,}"
    row += " steps in all"
    off = report.add(row, "everything off", runs["off"])
    on_ = report.add(row, "loggers and evaluation on", runs["on"])
    slowdown = 100 * (1 - on_.medians()["steps_per_s"] / off.medians()["steps_per_s"])
    report.add(row, "slowdown", [{"percent": slowdown}])
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
