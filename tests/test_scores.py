"""Every preset section keeps its promise: a score row that reached its target.

Fast, no training: reads `envs/*.yaml`, the rows of `scripts/reproduce.py` and
the figures it recorded in `docs/scores.json`. A section needs a row; a row
needs a recorded sweep at the section's current target and budget in which at
least 9 of 10 seeds (all of 5) ended at or above the target, unless the row is
marked as awaiting a GPU (`gpu=True`) or as not runnable by the script
(`not_run`, with the reason) and has no figures yet. Only such a section may
lack a target (none could be set without a run), and its preset says why.
"""

import json
import math
import pathlib
import re

import pytest

from purejaxdrl.training.presets.load import (
    load_preset,
    preset_algorithms,
    preset_names,
)
from tests.helpers import reproduce_script

ROOT = pathlib.Path(__file__).resolve().parents[1]
REPRODUCE = reproduce_script()
ROWS = {row.key: row for row in REPRODUCE.ROWS}
SCORES = json.loads((ROOT / "docs" / "scores.json").read_text())
SECTIONS = [
    f"{name}:{algo}" for name in preset_names() for algo in preset_algorithms(name)
]


def test_every_row_is_a_preset_section():
    assert sorted(set(ROWS) - set(SECTIONS)) == []
    assert len(ROWS) == len(REPRODUCE.ROWS), "a row is listed twice"


@pytest.mark.parametrize("key", SECTIONS)
def test_preset_section_reaches_its_target_in_its_score_row(key):
    assert key in ROWS, f"{key} has no row in scripts/reproduce.py ROWS"
    row = ROWS[key]
    score = SCORES.get(key)
    if score is None:
        assert row.gpu or row.not_run, (
            f"{key} has no figures in docs/scores.json and is not marked as "
            f"awaiting a GPU or not runnable: `python scripts/reproduce.py "
            f"--rows {key}`"
        )
        return
    preset = load_preset(*key.split(":"))
    assert preset.target_return is not None, (
        f"{key}: its row has figures but the preset no target; set one from "
        f"them, then `python scripts/reproduce.py --rows {key} --retarget`"
    )
    assert score["target"] == preset.target_return, (
        f"{key}: its row was measured against target {score['target']}, the "
        f"preset now says {preset.target_return}; rerun the row"
    )
    assert score["steps"] == preset.config.total_steps, (
        f"{key}: its row trained {score['steps']:,} steps, the preset now "
        f"{preset.config.total_steps:,}; rerun the row"
    )
    assert score["steps"] <= preset.target_steps
    assert score["target_of"] == preset.target_of
    need = math.ceil(0.9 * score["seeds"])
    assert score["reached"] >= need, (
        f"{key}: {score['reached']}/{score['seeds']} seeds reached "
        f"{score['target']:g}; the preset promises >= {need}"
    )
    assert score["reached"] == sum(x >= preset.target_return for x in score["final"])


@pytest.mark.parametrize("key", SECTIONS)
def test_a_section_without_a_target_awaits_its_row_and_says_why(key):
    name, algo = key.split(":")
    if load_preset(name, algo).target_return is not None:
        return
    row = ROWS[key]
    assert row.gpu or row.not_run, f"{key} has no target and its row can run now"
    text = (ROOT / "envs" / f"{name}.yaml").read_text()
    # The section: its lines up to the next one that is not indented.
    section = re.split(r"\n(?=\S)", text.split(f"\n{algo}:\n", 1)[1])[0]
    assert "  # No target:" in section, (
        f"envs/{name}.yaml says nothing of why {algo} has no target"
    )


@pytest.mark.parametrize("key", SECTIONS)
def test_a_target_without_figures_is_marked_unmeasured(key):
    # `measured: false` exactly where the target has no figures behind it, so
    # `list` and the training summary do not show it as a kept promise.
    preset = load_preset(*key.split(":"))
    if preset.target_return is None:
        return
    assert preset.target_measured == (key in SCORES), (
        f"{key}: its target has {'no ' if key not in SCORES else ''}figures in "
        f"docs/scores.json; its preset should say measured: "
        f"{str(key in SCORES).lower()}"
    )


@pytest.mark.parametrize("key", sorted(SCORES))
def test_each_row_recorded_the_seeds_reproduce_trains_by_default(key):
    # `python scripts/reproduce.py` without --seeds trains each row's own
    # count: rerunning the table reproduces the rows as recorded (10 seeds for
    # the 9-of-10 rows), not every row with one count.
    assert SCORES[key]["seeds"] == ROWS[key].seeds, (
        f"{key}: recorded with {SCORES[key]['seeds']} seeds, but reproduce.py "
        f"trains {ROWS[key].seeds} by default; set Row(..., seeds=) to match"
    )


def test_rows_train_five_seeds_or_ten():
    # The pages say "5 seeds, 10 for ..."; no row has another count.
    assert {row.seeds for row in REPRODUCE.ROWS} == {5, 10}


def test_every_curve_is_a_row_with_figures_or_an_aside():
    # One PNG per score row; a row without figures keeps a curve only where
    # its "not run" cell names the run drawn there (Row.aside: Pong PPO's
    # one CPU seed). A curve of neither is a figure the tables do not explain.
    allowed = {
        f"{row.preset}_{row.algo}.png"
        for row in REPRODUCE.ROWS
        if row.key in SCORES or row.aside
    }
    curves = {p.name for p in (ROOT / "docs" / "curves").glob("*.png")}
    assert sorted(curves - allowed) == []


@pytest.mark.parametrize("key", [r.key for r in REPRODUCE.ROWS if r.aside])
def test_a_row_with_an_aside_has_no_figures_and_an_unmeasured_target(key):
    # The aside stands in for figures the row lacks: once the row runs, it
    # and `measured: false` go. Its curve is drawn where the row's would be.
    name, algo = key.split(":")
    assert key not in SCORES, f"{key} has figures now; drop its Row.aside"
    assert not load_preset(name, algo).target_measured
    assert (ROOT / "docs" / "curves" / f"{name}_{algo}.png").exists()
    assert "not run as a row" in REPRODUCE.not_run_text(ROWS[key])


@pytest.mark.parametrize(
    "key", [k for k in SECTIONS if k in ROWS and ROWS[k].anchor_value is not None]
)
def test_a_published_target_is_its_row_s_anchor(key):
    # A preset whose unmeasured target is a published figure and the row that
    # cites it name the same number (both are typed by hand).
    row, preset = ROWS[key], load_preset(key.split(":")[0], algo=key.split(":")[1])
    if preset.target_measured or preset.target_return is None:
        pytest.skip("the target is this project's own measurement")
    assert preset.target_return == pytest.approx(row.anchor_value)


@pytest.mark.parametrize(
    ("score", "shown"),
    [
        # memory_chain's row printed "1.0 ± 0.0" for 0.9966 ± 0.0069.
        ({"mean": 0.9965909, "ci95": 0.0069452}, "0.997 ± 0.007"),
        ({"mean": 499.96, "ci95": 0.12}, "500.0 ± 0.1"),
        ({"mean": -85.39, "ci95": 1.519}, "-85.4 ± 1.5"),
        ({"mean": 0.5, "ci95": math.nan, "target_of": "evaluation"}, "0.500 *eval*"),
    ],
)
def test_a_score_row_prints_its_return_as_every_other_table_does(score, shown):
    assert REPRODUCE.return_text(score) == shown
