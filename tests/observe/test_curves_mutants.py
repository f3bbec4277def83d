"""Learning curves read from runs: what mutation testing found unchecked.

Each test fails under a mutant of observe/curves.py that the other tests let
pass (reviews/mutants6_M6A.md).
"""

import json

import numpy as np
import pytest
import yaml

from purejaxdrl.config import ConfigError
from purejaxdrl.observe.plots import RETURN, Curve, load_curves


def _run(root, name, records, **config):
    """A run folder: config.yaml of `config` (and seed 0), metrics.jsonl."""
    folder = root / name
    folder.mkdir()
    (folder / "config.yaml").write_text(yaml.safe_dump({"seed": 0, **config}))
    lines = "".join(json.dumps(r) + "\n" for r in records)
    (folder / "metrics.jsonl").write_text(lines)
    return folder


def _records(*returns):
    return [{"env_steps": 100 * (k + 1), RETURN: r} for k, r in enumerate(returns)]


def test_the_line_is_the_mean_over_seeds_not_the_median():
    curve = Curve("x", (_records(0.0), _records(1.0), _records(8.0)))
    xs, mean, low, high = curve.points("env_steps")
    assert xs.tolist() == [100] and mean.tolist() == [3.0]
    assert (low.tolist(), high.tolist()) == ([0.0], [8.0])


def test_a_record_without_env_steps_adds_no_point():
    history = [*_records(1.0), {"env_steps": None, RETURN: 2.0}]
    history.append({"env_steps": 200, RETURN: 3.0})
    steps, returns = Curve("x", (history,)).series("env_steps")
    assert steps.tolist() == [100, 200]
    assert returns.tolist() == [[1.0, 3.0]]


def test_a_seeds_records_out_of_order_are_timed_in_step_order():
    # Seed a logged at 100 and 300 steps (its records reversed), b at 200: at
    # 200, a's time is 2.0, halfway between its 1.0 and 3.0; b's is 4.0.
    a = [{"env_steps": 300, "time": 3.0}, {"env_steps": 100, "time": 1.0}]
    b = [{"env_steps": 200, "time": 4.0}]
    times, _ = Curve("x", (a, b)).series("time")
    np.testing.assert_allclose(times, [1.0, (2.0 + 4.0) / 2, 3.0])


def test_one_run_given_by_other_paths_is_one_seed(tmp_path, monkeypatch):
    run = _run(tmp_path, "a", _records(1.0, 2.0))
    monkeypatch.chdir(tmp_path)
    (curve,) = load_curves([run, "a", "a/../a"])
    assert len(curve.histories) == 1 and curve.label == "a"


def test_one_setting_s_seeds_are_named_after_the_first_folder(tmp_path):
    # One group (nothing tells groups apart): its first folder names it.
    runs = [
        _run(tmp_path, "first", _records(1.0)),
        _run(tmp_path, "second", _records(2.0), seed=1),
    ]
    (curve,) = load_curves(runs)
    assert curve.label == "first (2 seeds)"


def test_folders_of_one_seed_are_counted_as_runs_and_only_where_they_logged(
    tmp_path,
):
    # pq18 #2: two folders of seed 0 read "(2 seeds)", and so did a metric
    # that only one of them logged (its line one run's).
    evaluated = [{**r, "eval/mean_return": 5.0} for r in _records(1.0)]
    runs = [
        _run(tmp_path, "first", evaluated),
        _run(tmp_path, "again", _records(2.0)),
        _run(tmp_path, "other", _records(3.0), seed=1),
    ]
    (pair,) = load_curves(runs[:2])
    assert pair.label == "first (2 runs, 1 seed)"
    (curve,) = load_curves(runs)
    assert curve.label == "first (3 runs, 2 seeds)"
    assert curve.legend(RETURN) == "first (3 runs, 2 seeds)"
    assert curve.legend("eval/mean_return") == "first"
    (seeds,) = load_curves([runs[0], runs[2]])
    assert seeds.legend(RETURN) == "first (2 seeds)"
    # The drawn legend is the metric's.
    from matplotlib.figure import Figure

    from purejaxdrl.observe import plots

    ax = Figure().subplots()
    plots._draw(ax, curve, "env_steps", "eval/mean_return", "C0", True)
    assert ax.get_legend_handles_labels()[1] == ["first"]


@pytest.mark.parametrize("fields", [3, 4])
def test_groups_are_labelled_by_up_to_three_fields_they_differ_in(tmp_path, fields):
    base = {"lr": 0.001, "gamma": 0.99, "clip": 0.2, "epochs": 4}
    other = {"lr": 0.0003, "gamma": 0.9, "clip": 0.3, "epochs": 2}
    changed = dict(list(other.items())[:fields])
    runs = [
        _run(tmp_path, "a", _records(1.0), ppo=base),
        _run(tmp_path, "b", _records(2.0), ppo={**base, **changed}),
    ]
    labels = [c.label for c in load_curves(runs)]
    if fields == 3:  # sorted by field: clip, gamma, lr
        assert labels == [
            "clip=0.2, gamma=0.99, lr=0.001",
            "clip=0.3, gamma=0.9, lr=0.0003",
        ]
    else:  # more than three: the folders' names
        assert labels == ["a", "b"]


def test_a_folder_of_three_runs_names_them_all_and_no_more(tmp_path):
    parent = tmp_path / "runs"
    parent.mkdir()
    for name in ("r1", "r2", "r3"):
        _run(parent, name, _records(1.0))
    with pytest.raises(ConfigError) as raised:
        load_curves(parent)
    names = ", ".join(repr(str(parent / n)) for n in ("r1", "r2", "r3"))
    assert f"it holds 3 runs, {names}: pass them" in str(raised.value)
