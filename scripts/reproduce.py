"""The score table: every preset x algorithm at its budget, several seeds.

Each row trains a preset's configuration for an algorithm at the preset's
target budget with its own count of seeds (`Row.seeds`: 5, or 10 for the rows
of the replay learners, R2D2 and masked-CartPole PPO) as one vmapped sweep,
and records the final training return (mean and 95% interval over seeds), how
many seeds reached the preset's target, steps, wall time, steps/s and the
machine, beside the published figure it is measured against (the anchor).
Results accumulate in `docs/scores.json` (one entry per row, so rows can be
run one at a time) and `docs/scores.md` is written from all of them, with one
learning-curve PNG per row in `docs/curves/`; so is the compact table in
`README.md` (between its `scores` markers). Rows that need a GPU are run only
on one; elsewhere they say "not run: needs a GPU", never a guess.

`--seeds N` other than a row's own count is a look, not a figure for the
table: the row's line is printed, its curves drawn beside its runs (under the
preset's run_dir, `runs/`), and nothing under docs/ or README.md changes.
Recording a row is the command without `--seeds`.

    python scripts/reproduce.py            # every row this machine can run
    python scripts/reproduce.py --rows cartpole:ppo  # one row, recorded
    python scripts/reproduce.py --rows cartpole:ppo acrobot:ppo --seeds 2  # a look
    python scripts/reproduce.py --list     # the rows, their seeds and anchors
    python scripts/reproduce.py --rows cartpole_masked:r2d2 --retarget

`--retarget` trains nothing: after a preset's target was set from a row's own
sweep, it counts that sweep's recorded final returns against the new target.
"""

import argparse
import json
import math
import os
import pathlib
import platform
import time

import jax
import numpy as np
from harness import source_commit
from scipy import stats  # installed with JAX (one of jax's dependencies)
from score_table.rows import ALL_SEEDS, EVAL_EPISODES, ROWS, Row

# The cells' texts are reproduce's too (tests read `reproduce.row_date`...).
from score_table.tables import (  # noqa: F401
    not_run_text,
    predated_changes,
    predates_note,
    print_looks,
    reached_text,
    readme_table,
    return_text,
    row_date,
    steps_per_s_text,
    table,
)

import purejaxdrl as pjd
from purejaxdrl.observe.plots import load_curves, plot_curves
from purejaxdrl.sweeps.report import plot_sweep

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"
README = DOCS.parent / "README.md"
# The compact table in README.md lies between these two lines.
README_BEGIN = "<!-- scores: written by scripts/reproduce.py from docs/scores.json -->"
README_END = "<!-- /scores -->"


def machine() -> str:
    """The machine a row ran on, in words."""
    device = jax.devices()[0]
    kind = getattr(device, "device_kind", device.platform)
    cpus = os.cpu_count()
    return f"{jax.default_backend()} ({kind}), {cpus} CPU cores, {platform.machine()}"


def interval(values: np.ndarray) -> float:
    """Half-width of the 95% interval of the mean (Student's t)."""
    n = len(values)
    if n < 2:
        return math.nan
    t = stats.t.ppf(0.975, n - 1)
    return float(t * values.std(ddof=1) / math.sqrt(n))


def curves_file(row: Row, seeds: int) -> pathlib.Path:
    """Where a row's learning curves go: docs/curves/ with the row's own seeds.

    A look (other seeds) draws them beside its runs, under the preset's
    run_dir, so that docs/ keeps the recorded row's curves.
    """
    name = f"{row.preset}_{row.algo}.png"
    if seeds == row.seeds:
        return DOCS / "curves" / name
    run_dir = pjd.load_preset(row.preset, row.algo).config.run_dir
    return pathlib.Path(run_dir) / f"{seeds}_seeds_{name}"


def run_row(row: Row, seeds: int, curves: pathlib.Path) -> dict:
    """Trains one row's seeds (a sweep, or runs); its figures as a JSON-able dict.

    The learning curves are drawn to `curves` (`curves_file`).
    """
    preset = pjd.load_preset(row.preset, row.algo)
    curves.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    if row.alone:
        final, steps_per_s, trained, dirs = _runs_alone(preset, seeds, curves)
        # Each run's own folder: runs alone share only the preset's run_dir.
        where = {"run_dirs": [str(d) for d in dirs]}
    else:
        result = pjd.sweep(
            row.preset, algo=row.algo, seeds=seeds, write_files=True, console=False
        )
        final = np.asarray(result.final_return, np.float64)
        steps_per_s = result.env_steps / result.train_seconds  # seeds at once
        trained = result.env_steps // seeds
        where = {"sweep_dir": str(result.run_dir)}
        plot_sweep(result, curves)
    wall = time.perf_counter() - start
    # A preset awaiting its first sweep has no target (set it from this one,
    # then --retarget): no seed counts as reaching it.
    target = preset.target_return
    reached = 0 if target is None else int(np.sum(final >= target))
    return {
        "seeds": seeds,
        "final": [float(x) for x in final],
        "mean": float(np.nanmean(final)),
        "ci95": interval(final[~np.isnan(final)]),
        "target": preset.target_return,
        "target_of": preset.target_of,
        "reached": reached,
        "steps": preset.config.total_steps,  # the budget (--retarget's check)
        "steps_trained": trained,  # whole updates within it, per seed
        "wall_s": wall,
        "steps_per_s": steps_per_s,
        "steps_per_s_of": ALL_SEEDS,
        "machine": machine(),
        "commit": source_commit(),  # the code that trained it (+: uncommitted edits)
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        **where,  # the sweep's folder, or each run's own
    }


def _runs_alone(preset, seeds: int, curves: pathlib.Path) -> tuple:
    """Seeds 0..n-1 of a preset, one run after another.

    Returns:
      (final returns [n]: the training's, or the greedy evaluation's at the
      end where the target is of the evaluation; all runs' env steps over
      their training seconds, as a sweep's steps/s; one run's env steps;
      the runs' own folders, seed 0 first); the runs' curves are drawn to
      `curves`.

    """
    evaluation = preset.target_of == "evaluation"
    results = []
    for seed in range(seeds):
        overrides = {"seed": seed}
        if evaluation and preset.config.eval.episodes == 0:
            overrides["eval"] = {"episodes": EVAL_EPISODES}
        config = pjd.apply_overrides(preset.config, overrides)
        results.append(pjd.train(config, write_files=True, console=False))
    dirs = [r.run_dir for r in results]
    title = f"{preset.config.env.id} {preset.config.algo}: {seeds} seeds"
    plot_curves(load_curves(dirs), curves, title=title, target=preset.target_return)
    final = [r.eval_return if evaluation else r.mean_return for r in results]
    final = np.asarray(final, np.float64)
    seconds = sum(r.train_seconds for r in results)
    steps_per_s = sum(r.env_steps for r in results) / seconds
    return final, steps_per_s, results[0].env_steps, dirs


def retarget(row: Row, score: dict) -> dict:
    """`score` counted against the preset's current target; no training.

    Raises:
      ValueError: the preset's budget is no longer the one the row trained, or
        the preset has no target.

    """
    preset = pjd.load_preset(row.preset, row.algo)
    if score["steps"] != preset.config.total_steps:
        raise ValueError(
            f"{row.key}: its sweep trained {score['steps']:,} steps, the preset "
            f"now {preset.config.total_steps:,}; rerun the row instead."
        )
    if preset.target_return is None:
        raise ValueError(
            f"{row.key}: envs/{row.preset}.yaml has no {row.algo}.target yet; "
            "set one from this sweep's final returns first."
        )
    final = np.asarray(score["final"], np.float64)
    reached = int(np.sum(final >= preset.target_return))
    target = {"target": preset.target_return, "target_of": preset.target_of}
    return {**score, **target, "reached": reached}


def write_tables(scores: dict) -> None:
    """docs/scores.md and README.md's compact table, from `scores`."""
    (DOCS / "scores.md").write_text(table(ROWS, scores))
    text = README.read_text()
    start = text.index(README_BEGIN) + len(README_BEGIN)
    end = text.index(README_END, start)
    README.write_text(text[:start] + "\n" + readme_table(ROWS, scores) + text[end:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="*", help="preset:algo (default: all)")
    parser.add_argument(
        "--seeds",
        type=int,
        default=None,
        help="seeds per row (default: each row's own, 5 or 10; --list shows "
        "them); another count is a look: printed, not recorded in docs/",
    )
    parser.add_argument("--list", action="store_true", help="print the rows")
    parser.add_argument(
        "--retarget",
        action="store_true",
        help="count the recorded final returns against the presets' current "
        "targets (no training)",
    )
    args = parser.parse_args()
    if args.seeds is not None and args.seeds < 1:
        parser.error(
            f"--seeds {args.seeds}: a row needs at least 1 seed; pass 1 or more"
        )
    if args.list:
        for row in ROWS:
            note = f"not run: {row.why_not_run()} " if row.why_not_run() else ""
            gpu = "GPU " if row.gpu else ""
            print(f"{row.key:32s} {row.seeds:2d} seeds {gpu}{note}{row.anchor}")
        return
    keys = {r.key for r in ROWS}
    unknown = [k for k in args.rows or [] if k not in keys]
    if unknown:
        parser.error(
            f"--rows {' '.join(unknown)}: not a row (preset:algo); --list shows them"
        )
    chosen = [r for r in ROWS if not args.rows or r.key in args.rows]
    path = DOCS / "scores.json"
    scores = json.loads(path.read_text()) if path.exists() else {}
    accelerator = jax.default_backend() != "cpu"
    if args.retarget:
        for row in (r for r in chosen if r.key in scores):
            try:
                scores[row.key] = retarget(row, scores[row.key])
            except ValueError as e:  # before anything is written
                parser.error(f"--retarget {e}")
            s = scores[row.key]
            print(f"{row.key}: {s['reached']}/{s['seeds']} reached {s['target']:g}")
        path.write_text(json.dumps(scores, indent=1) + "\n")
        write_tables(scores)
        return
    looks = []  # rows trained with other seeds than their own: not recorded
    for row in chosen:
        if row.why_not_run():
            print(f"{row.key}: not run: {row.why_not_run()}")
            continue
        if row.gpu and not accelerator:
            print(f"{row.key}: not run: needs a GPU")
            continue
        seeds = row.seeds if args.seeds is None else args.seeds
        print(f"{row.key}: training {seeds} seeds ...", flush=True)
        curves = curves_file(row, seeds)
        s = run_row(row, seeds, curves)
        print(f"{row.key}: {s['mean']:.1f} ± {s['ci95']:.1f}, seeds "
              f"reaching the target: {reached_text(s)}")  # fmt: skip
        if seeds != row.seeds:
            looks.append((row, s, curves))
            continue
        scores[row.key] = s
        DOCS.mkdir(exist_ok=True)
        path.write_text(json.dumps(scores, indent=1) + "\n")
        write_tables(scores)
    if looks:
        print_looks(looks)
    else:
        write_tables(scores)


if __name__ == "__main__":
    main()
