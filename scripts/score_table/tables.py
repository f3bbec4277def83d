"""The score tables as text: docs/scores.md and README.md's compact table.

`table` and `readme_table` from the rows and `docs/scores.json`'s figures,
one cell at a time (`return_text`, `reached_text`, `row_date`...);
`print_looks` prints the lines of rows trained with other seeds.
"""

from __future__ import annotations

import math
import pathlib
import re

from purejaxdrl.observe import numbers
from purejaxdrl.observe.numbers import mean_std_text

from .rows import ALL_SEEDS, Row

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
