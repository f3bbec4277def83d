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
import dataclasses
import functools
import json
import math
import os
import pathlib
import platform
import re
import time

import jax
import numpy as np
from harness import source_commit
from scipy import stats  # installed with JAX (one of jax's dependencies)

import purejaxdrl as pjd
from purejaxdrl.observe import numbers
from purejaxdrl.observe.numbers import mean_std_text
from purejaxdrl.observe.plots import load_curves, plot_curves
from purejaxdrl.sweeps.report import plot_sweep

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"
README = DOCS.parent / "README.md"
# The compact table in README.md lies between these two lines.
README_BEGIN = "<!-- scores: written by scripts/reproduce.py from docs/scores.json -->"
README_END = "<!-- /scores -->"
# What a score's steps/s is (`steps_per_s_of`): all seeds' env steps over
# their training seconds; older alone rows recorded "mean of runs".
ALL_SEEDS = "all seeds"


@dataclasses.dataclass(frozen=True)
class Row:
    """One preset x algorithm and the published figure it is compared with.

    Attributes:
      preset: the preset's name (`envs/<preset>.yaml`).
      algo: the algorithm section of the preset.
      anchor: the published figure, as its source states it ("" for none).
      anchor_value: that figure's mean return (None for none).
      gpu: needs an accelerator to finish in reasonable time.
      not_run: why this script cannot run the row on any machine ("" when it
        can); the table says so in its place.
      menagerie: trains on MuJoCo Menagerie's robot models: not run where
        they are absent (`why_not_run`).
      alone: its seeds train one after another with `pjd.train`, not as one
        sweep: host environments (EnvPool, Gymnasium), which `pjd.sweep`
        cannot batch, and targets of the greedy evaluation, which a sweep
        does not run (each run then evaluates at its end).
      seeds: how many seeds the row trains unless `--seeds` says otherwise:
        5, or 10 for the replay learners, R2D2 and masked-CartPole PPO, whose
        seeds dip now and then: `tests/test_scores.py` asks 9 of 10 seeds to
        reach the target, but all of 5.
      aside: a run of the row's settings reported outside the table (one
        seed, say, where the row needs a GPU), named in its "not run" cell.

    """

    preset: str
    algo: str
    anchor: str = ""
    anchor_value: float | None = None
    gpu: bool = False
    not_run: str = ""
    menagerie: bool = False
    alone: bool = False
    seeds: int = 5
    aside: str = ""

    @property
    def key(self) -> str:
        return f"{self.preset}:{self.algo}"

    def why_not_run(self) -> str:
        """Why the row cannot run on this machine ("" when it can)."""
        if self.not_run or not self.menagerie:
            return self.not_run
        return menagerie_note()


# purejaxql publishes no MinAtar score. The rows take 1-3.5 minutes each on
# one H200, about 1-3 hours on the 2-core CPU (5 x 10M steps at 4.4k-13k
# steps/s); set gpu to False to run them there.
PQN_MINATAR = "purejaxql PQN: no MinAtar score published"

# Runs of a row's settings reported outside the table, too few seeds for a row
# (its preset's target stays `measured: false`); named in its "not run" cell.
# Their curves keep the row's file name in docs/curves/.
ASIDES = {
    "pong:ppo": (
        "one CPU seed reached +19.3 at 10M frames "
        "([results](results.md#pong-in-10m-frames))"
    ),
}

# The Atari presets' published figures (each preset's comments cite the file):
# CleanRL's ppo_atari_envpool_xla_jax.py at 10M agent steps, Cleanba's
# cleanba_impala.py at 50M, 3 seeds each, mean ± std.
ATARI_ANCHORS = {
    "breakout": ("430.09 ± 8.12", "482.12 ± 9.36"),
    "battle_zone": ("24283.8 ± 1841.94", "30306.7 ± 3719.78"),
    "double_dunk": ("-6.81 ± 0.24", "-2.94 ± 2.95"),
    "name_this_game": ("5750 ± 181.32", "15197.9 ± 981.65"),
    "phoenix": ("14474.1 ± 1794.83", "43733.7 ± 3990.05"),
    "qbert": ("17246.3 ± 605.4", "22198.6 ± 727.63"),
}


def atari_row(game: str, algo: str) -> Row:
    """An Atari preset's GPU row, with its published figure where it has one."""
    anchor, value = "", None
    if game in ATARI_ANCHORS:
        figure = ATARI_ANCHORS[game][algo == "impala"]
        source = "Cleanba IMPALA, 50M" if algo == "impala" else "CleanRL PPO, 10M"
        anchor, value = f"{source} steps: {figure}", float(figure.split(" ±")[0])
    aside = ASIDES.get(f"{game}:{algo}", "")
    return Row(game, algo, anchor, value, gpu=True, alone=True, aside=aside)


# Episodes of a greedy evaluation at the end of a run that has none of its own.
EVAL_EPISODES = 32
# Playground publishes learning curves (Zakka et al., 2025, arXiv 2502.08844),
# not tables; their numbers could not be read offline, so no anchor value.
PLAYGROUND_PPO = "MuJoCo Playground PPO, 60M steps: curves (arXiv 2502.08844)"
PLAYGROUND_SAC = "MuJoCo Playground SAC, {}M steps: curves (arXiv 2502.08844)"
PLAYGROUND_200M = "MuJoCo Playground PPO, 200M steps: curves (arXiv 2502.08844)"


@functools.cache
def menagerie_note() -> str:
    """Why the rows on Menagerie's robots cannot run here; "" where they can.

    Looked up when asked (importing Playground takes seconds), where the
    adapter looks (`menagerie.find_menagerie`).
    """
    try:
        from purejaxdrl.env.menagerie import find_menagerie

        found = find_menagerie()
    except ImportError:
        return "needs the playground package (pip install 'purejaxdrl[playground]')"
    if found is None:
        return (
            "needs MuJoCo Menagerie's robot models, absent here (set "
            "MUJOCO_MENAGERIE_PATH to a clone)"
        )
    return ""


ROWS = [
    Row("cartpole", "ppo", "CleanRL PPO, 500k steps: 490.0 ± 6.1", 490.0),
    Row("cartpole", "dqn", "CleanRL DQN, 500k steps: 488.7 ± 16.1", 488.7, seeds=10),
    Row("cartpole", "apex", seeds=10),
    Row("cartpole", "impala"),
    Row("cartpole", "a2c"),
    Row(
        "cartpole",
        "pqn",
        "purejaxql PQN, 500k steps: solved (a plot of greedy returns)",
        alone=True,
    ),
    Row("cartpole_masked", "ppo", seeds=10),
    Row("cartpole_masked", "r2d2", seeds=10),
    Row("memory_chain", "ppo"),
    Row("acrobot", "ppo", "CleanRL PPO: -86.4", -86.4),
    Row("breakout_minatar", "ppo", "gymnax-blines PPO, 10M steps: 28", 28.0),
    Row("breakout_minatar", "impala", gpu=True),
    Row("breakout_minatar", "a2c", gpu=True),
    Row("breakout_minatar", "pqn", PQN_MINATAR, gpu=True),
    Row("space_invaders_minatar", "ppo", "gymnax-blines PPO, 10M steps: 131", 131.0),
    Row("space_invaders_minatar", "pqn", PQN_MINATAR, gpu=True),
    Row("asterix_minatar", "ppo", "gymnax-blines PPO, 10M steps: 15", 15.0),
    Row("asterix_minatar", "pqn", PQN_MINATAR, gpu=True),
    Row("freeway_minatar", "ppo", "gymnax-blines PPO, 10M steps: 58", 58.0),
    Row("freeway_minatar", "pqn", PQN_MINATAR, gpu=True),
    Row("inverted_pendulum", "ppo", "brax PPO: 1000", 1000.0),
    Row("inverted_pendulum", "impala"),
    Row("inverted_pendulum", "a2c"),
    Row("inverted_pendulum", "sac", "brax SAC: 1000", 1000.0, seeds=10),
    Row("cartpole_balance", "ppo"),
    Row("cartpole_balance", "sac", PLAYGROUND_SAC.format(5), gpu=True, seeds=10),
    *(
        row
        for preset, sac_millions in (
            ("pendulum_swingup", 5),
            ("cheetah_run", 10),
            ("walker_walk", 5),
            ("hopper_hop", 10),
            ("humanoid_walk", 10),
        )
        for row in (
            Row(preset, "ppo", PLAYGROUND_PPO, gpu=True),
            Row(
                preset,
                "sac",
                PLAYGROUND_SAC.format(sac_millions),
                gpu=True,
                seeds=10,
            ),
        )
    ),
    *(
        Row(preset, "ppo", PLAYGROUND_200M, gpu=True, menagerie=True)
        for preset in ("go1_joystick_flat_terrain", "leap_cube_reorient")
    ),
    Row("ant", "ppo", gpu=True),
    Row("halfcheetah", "ppo", gpu=True),
    Row("craftax_classic", "ppo", gpu=True),
    Row(
        "craftax_classic",
        "pqn",
        "purejaxql PQN-RNN: a plot for the full Craftax only (~16% of max at 1B)",
        gpu=True,
    ),
    Row(
        "cartpole_envpool",
        "ppo",
        "CleanRL PPO, 500k steps: 490.0 ± 6.1",
        490.0,
        alone=True,
    ),
    Row("cartpole_envpool", "impala", alone=True),
    *(
        atari_row(game, algo)
        for game in (
            "pong",
            "breakout",
            "battle_zone",
            "double_dunk",
            "name_this_game",
            "phoenix",
            "qbert",
        )
        for algo in ("ppo", "impala")
    ),
    Row(
        "pong",
        "pqn",
        "purejaxql PQN: Pong solved under 10M steps (README; a plot against time)",
        gpu=True,
        alone=True,
    ),
]


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


# Said only while a row is so marked (rows recorded before 2026-12-02).
MEAN_OF_RUNS_NOTE = (
    "Rows marked ¹ were recorded as the mean of",
    "their runs' own steps/s, which the file's figures cannot convert",
    "exactly: the all-seeds figure, the runs' harmonic mean, is at most it.",
)


def table(rows: list[Row], scores: dict) -> str:
    """docs/scores.md: one line per row, run or not."""
    marked = any(
        s.get("steps_per_s_of", ALL_SEEDS) != ALL_SEEDS for s in scores.values()
    )
    marked_note = MEAN_OF_RUNS_NOTE if marked else ()
    lines = [
        "# Scores",
        "",
        "Final training return (the mean return of the last chunk's training",
        "episodes; rows marked *eval* give the final evaluation of the",
        "deterministic policy, the return their target is of) over seeds, with",
        "the 95% interval of the mean; seeds reaching the preset's target at",
        "the end of the budget; the published figure beside it. Written by",
        "`python scripts/reproduce.py` (one row:",
        "`python scripts/reproduce.py --rows cartpole:ppo`).",
        "",
        "The anchors are published figures, each the mean over its source's",
        "seeds: CleanRL's from its documentation's tables (docs.cleanrl.dev,",
        "rl-algorithms/ppo and /dqn: `ppo.py` on CartPole-v1 490.04 ± 6.12 and",
        "Acrobot-v1 -86.36 ± 1.32, `dqn.py` on CartPole-v1 488.69 ± 16.11, 3 seeds",
        "at their scripts' 500k steps); the others name their source and budget.",
        "",
        "steps/s: all seeds' env steps over the seconds spent training them",
        "(compile and evaluation excluded). A sweep's seeds train at once, so",
        "this is the machine's throughput with all of them vmapped; a row whose",
        "seeds train one after another (those `reproduce.py` runs alone) gives",
        "one run's throughput.",
        *marked_note,
        *predates_note(scores),
        "date is the day the row was trained (before 2026-12-06, its sweep",
        "folder's start; rows of runs alone, their recording commit's day).",
        "steps is the preset's budget per seed; a run trains the whole updates",
        "within it (cartpole:pqn 499,712 of 500,000), as `steps_trained` in",
        "scores.json records for rows run since 2026-12-02; rows run since",
        "2026-12-06 record the `commit` and `date` that trained them too, and",
        "a row whose seeds train alone each run's folder (`run_dirs`; before,",
        "`sweep_dir` named only the `runs` folder they share).",
        "",
        *TABLE_HEAD,
    ]
    for row in rows:
        s = scores.get(row.key)
        if s is None:
            why = not_run_text(row)
            lines.append(
                f"| {row.preset} | {row.algo} | | | {why} | | {row.anchor} | | | | |"
            )
            continue
        lines.append(table_line(row, s))
    return "\n".join(lines) + "\n"


TABLE_HEAD = (
    "| preset | algo | steps | seeds | final return | reached target "
    "| anchor | wall | steps/s | machine | date |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
)
# A sweep's folder ends in the time it started: runs/sweep_<id>_<algo>_20261126-024623.
SWEEP_STAMP = re.compile(r"_(\d{4})(\d{2})(\d{2})-\d{6}$")


def row_date(score: dict) -> str:
    """The day a row was trained: its `date`, else its sweep folder's stamp.

    Rows recorded before `date` was (2026-12-06) read it off `sweep_dir`,
    whose name ends in the sweep's start time; "" where neither says.
    """
    if score.get("date"):
        return score["date"]
    stamp = SWEEP_STAMP.search(str(score.get("sweep_dir", "")))
    return "-".join(stamp.groups()) if stamp else ""


def table_line(row: Row, s: dict) -> str:
    """A trained row's line of docs/scores.md."""
    return (
        f"| {row.preset} | {row.algo} | {s['steps']:,} | {s['seeds']} | "
        f"{return_text(s)} | {reached_text(s)} | {row.anchor} | "
        f"{s['wall_s']:.0f} s | "
        f"{steps_per_s_text(s)} | {s['machine']} | {row_date(s)} |"
    )


def print_looks(looks: list[tuple[Row, dict, pathlib.Path]]) -> None:
    """The lines of rows trained with other seeds than their own; not recorded."""
    print("\n".join(TABLE_HEAD))
    for row, s, _ in looks:
        print(table_line(row, s))
    for row, s, curves in looks:
        print(
            f"{row.key}: a look at {s['seeds']} seeds, not recorded (the row's "
            f"own count is {row.seeds}): docs/ and README.md are unchanged; its "
            f"curves are in {curves}. `python scripts/reproduce.py --rows "
            f"{row.key}` trains its {row.seeds} seeds and records them."
        )


def steps_per_s_text(score: dict) -> str:
    """The steps/s cell: ¹ where it is a mean of runs, not all seeds' figure."""
    mark = "" if score.get("steps_per_s_of", ALL_SEEDS) == ALL_SEEDS else " ¹"
    return f"{score['steps_per_s']:,.0f}{mark}"


def not_run_text(row: Row) -> str:
    """A row's place in the table before it has figures.

    The same on every machine (the file is committed): a row on Menagerie's
    robots says what it needs, not whether this machine has it. A row with an
    aside says that it was not run as a row, and names the run that was.
    """
    if row.not_run:
        why = f"not run: {row.not_run}"
    elif row.menagerie:
        why = "not run: needs a GPU and MuJoCo Menagerie's robot models"
    else:
        why = "not run: needs a GPU" if row.gpu else "not run yet"
    if row.aside:
        return why.replace("not run", "not run as a row", 1) + f"; {row.aside}"
    return why


def return_text(score: dict) -> str:
    """ "500.0 ± 0.0", marked "*eval*" where it is the evaluation's return.

    Below 10 with three significant digits ("0.997 ± 0.007"), as every
    other table prints a return.

    Marked ² where the row predates a change to how its preset trains
    (`predates_note`).
    """
    mean, ci = score["mean"], score["ci95"]
    # The precision every other table prints a return with (0.997 is not 1.0).
    shown = numbers.return_text(mean) if math.isnan(ci) else mean_std_text(mean, ci)
    of = " *eval*" if score.get("target_of") == "evaluation" else ""
    old = " ²" if score.get("predates") else ""
    return f"{shown}{of}{old}"


def predated_changes(scores: dict) -> str:
    """The changes that rows marked ² predate, "; "-joined ("" for none).

    A row's `predates` in scores.json names a later change that trains its
    preset differently (set by hand when the change lands); recording the row
    again writes a fresh entry without it, so the mark and its note go.
    """
    return "; ".join(
        sorted({s["predates"] for s in scores.values() if s.get("predates")})
    )


def predates_note(scores: dict) -> tuple[str, ...]:
    """docs/scores.md's ² note, while a row is so marked."""
    changes = predated_changes(scores)
    if not changes:
        return ()
    return (
        "Rows marked ² were recorded before a change that trains them",
        f"differently, {changes}: their figures are the older",
        "code's until the row runs again ([results](results.md) gives",
        "later runs' figures where there are any).",
    )


def reached_text(score: dict) -> str:
    """Seeds that reached the target, "3/5 (>= 950)"; "no target yet" for none."""
    if score["target"] is None:
        return "no target yet"
    return f"{score['reached']}/{score['seeds']} (>= {score['target']:g})"


def short_target(score: dict) -> str:
    """README's "950: 3/5" (target: seeds reaching it); "no target yet" for none."""
    if score["target"] is None:
        return "no target yet"
    return f"{score['target']:g}: {score['reached']}/{score['seeds']}"


def short_steps(steps: int) -> str:
    """500000 -> 500k, 10000000 -> 10M, 327680 -> 328k."""
    if steps >= 1_000_000 and steps % 100_000 == 0:
        return f"{steps / 1e6:g}M"
    return f"{round(steps / 1000)}k"


def readme_table(rows: list[Row], scores: dict) -> str:
    """README.md's compact table: the rows with figures, linking to the rest."""
    lines = [
        "| preset | algo | steps | final return | target: seeds reaching it |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        s = scores.get(row.key)
        if s is None:
            continue
        lines.append(
            f"| {row.preset} | {row.algo} | {short_steps(s['steps'])} | "
            f"{return_text(s)} | {short_target(s)} |"
        )
    changes = predated_changes(scores)
    if changes:  # after a blank line, or Markdown reads it as a table row
        # Short: test_docs holds README.md to 10,000 characters.
        lines += ["", f"² Predates {changes} ([results](docs/results.md))."]
    return "\n".join(lines) + "\n"


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
