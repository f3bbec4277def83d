"""The pieces of a sweep plan: seeds, grid axes, settings, what a sweep refuses."""

import re

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError
from purejaxdrl.sweeps.fields import Field
from purejaxdrl.sweeps.spec import (
    expand_settings,
    grid_axis,
    make_plan,
    parse_grid_arg,
    seed_list,
)

BASE = pjd.load_preset("cartpole").config  # PPO, seed 0


def test_seed_list_counts_from_the_base_seed_or_takes_a_list():
    assert seed_list(BASE, 3) == [0, 1, 2]
    assert seed_list(pjd.apply_overrides(BASE, {"seed": 5}), 2) == [5, 6]
    seeds = seed_list(BASE, (np.int64(4), 1))
    assert seeds == [4, 1] and all(type(s) is int for s in seeds)
    with pytest.raises(ConfigError, match=r"seeds=0 must be >= 1"):
        seed_list(BASE, 0)
    for bad in ([], [1, 1]):
        with pytest.raises(ConfigError, match="one or more distinct integers"):
            seed_list(BASE, bad)


def test_seed_list_refuses_seeds_outside_a_key_range_before_listing_them():
    # 2**32 is seed 0's key again and -1 is 2**32 - 1's: two runs, one seed.
    late = pjd.apply_overrides(BASE, {"seed": 2**32 - 6})
    assert seed_list(late, 6)[-1] == 2**32 - 1
    with pytest.raises(
        ConfigError, match=re.escape("seed 4294967296 (= seed 4294967290 + 6)")
    ):
        seed_list(late, 10)
    # A huge count (a --seed typo, say) fails at once instead of listing them.
    with pytest.raises(ConfigError, match=r"seeds=4294967296: .* at most 1,048,576"):
        seed_list(BASE, 2**32)
    assert len(seed_list(BASE, 2**20)) == 2**20
    for bad, entry in (([0, -1], 2), ([2**32, 0], 1)):
        with pytest.raises(
            ConfigError, match=rf"seed {bad[entry - 1]} \(entry {entry} "
        ):
            seed_list(BASE, bad)


def test_static_groups_go_by_setting_not_by_run(monkeypatch):
    # Per run, a large --seeds count would stall before the plan is printed.
    plan = make_plan(
        BASE, grid={"learning_rate": [1e-3, 2e-3], "num_envs": [4, 8]}, seeds=2
    )
    monkeypatch.setattr(type(plan), "run_config", None)  # not called per run
    assert plan.static_groups() == [[0, 1, 4, 5], [2, 3, 6, 7]]


def test_grid_axis_resolves_the_field_and_checks_each_value():
    field, values = grid_axis(BASE, "learning_rate", ["1e-3", "2.5e-4"], [])
    assert field == Field("ppo.learning_rate", dynamic=True)
    assert values == [0.001, 0.00025]
    # A lone value (not a list) is refused as a forgotten list (sw21 #9: it
    # was a grid of one, where a string of values was refused).
    with pytest.raises(ConfigError) as e:
        grid_axis(BASE, "learning_rate", 1e-3, [])
    assert str(e.value) == (
        "grid={'learning_rate': 0.001} is one value, not a list of values; pass a "
        "list, e.g. grid={'learning_rate': [0.001]} (or set the field in the base "
        "config to train that value alone)."
    )
    for lone in (2, True, "relu", np.float32(0.5)):
        with pytest.raises(ConfigError, match="is one value, not a list of values"):
            grid_axis(BASE, "num_epochs", lone, [])
    assert grid_axis(BASE, "num_epochs", (2,), []) == (
        Field("ppo.num_epochs", False),
        [2],
    )
    # A numpy array (np.logspace in a notebook) is its values.
    _, values = grid_axis(BASE, "learning_rate", np.array([1e-4, 1e-3]), [])
    assert values == [1e-4, 1e-3] and all(type(v) is float for v in values)


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ({1e-3, 1e-4}, "is a set, not a list of values; pass a list, e.g. "
         "grid={'learning_rate': sorted(...)}."),
        ((v for v in [1e-3]), "is a generator, not a list of values; pass a "
         "list, e.g. grid={'learning_rate': list(...)}."),
        (np.array([[1e-3]]), "is a 2-D array; a grid is a list or a 1-D array "
         "of values, e.g. grid={'learning_rate': [V1, V2]}."),
    ],
)  # fmt: skip
def test_a_collection_that_is_no_list_is_said_as_what_it_is(values, said):
    # rd21 #6: each was called "one value" and wrapped in a list, which the
    # field refused again.
    with pytest.raises(ConfigError) as e:
        grid_axis(BASE, "learning_rate", values, [])
    assert str(e.value) == "grid={'learning_rate': ...} " + said


@pytest.mark.parametrize(
    ("name", "values", "taken", "message"),
    [
        ("ppo.learning_rate", [1e-3], [Field("ppo.learning_rate", True)], "twice"),
        ("learning_rate", [], [], "the grid is empty"),
        ("learning_rate", ["1e-3", "0.001"], [], r"values \[0.001, 0.001\] repeat"),
        ("learning_rate", ["-1"], [], r"^grid\['learning_rate'\]: .*> 0"),
    ],
)
def test_grid_axis_refusals(name, values, taken, message):
    with pytest.raises(ConfigError, match=message):
        grid_axis(BASE, name, values, taken)


def test_settings_are_grid_major_with_draws_innermost():
    settings = expand_settings(["a", "b"], [[1, 2], ["x"]], [{"c": 0.5}, {"c": 0.25}])
    assert settings == [
        {"a": 1, "b": "x", "c": 0.5},
        {"a": 1, "b": "x", "c": 0.25},
        {"a": 2, "b": "x", "c": 0.5},
        {"a": 2, "b": "x", "c": 0.25},
    ]
    # No grid and no random search: one setting, the base itself.
    assert expand_settings([], [], [{}]) == [{}]


def test_a_plan_takes_a_base_that_sets_evaluation_and_trains_without_it():
    # base_and_target warns of it ("drop it", test_inputs.py): a plan that
    # then refused the same field said two things. Nothing sweeps read plays
    # evaluation episodes, so the runs are the same.
    evaluated = pjd.apply_overrides(BASE, {"eval": {"episodes": 2, "every": 1}})
    plan = make_plan(evaluated, grid={"learning_rate": [1e-3, 2e-3]})
    assert [c.eval.episodes for c in plan.configs] == [2, 2]
    plain = make_plan(BASE, grid={"learning_rate": [1e-3, 2e-3]})
    assert [c.ppo for c in plan.configs] == [c.ppo for c in plain.configs]
    # Replay learners sweep too (`test_replay_sweeps.py`).
    impala = pjd.load_preset("cartpole", "impala").config
    make_plan(pjd.apply_overrides(impala, {"impala": {"replay_ratio": 0.5}}))


def test_make_plan_lists_grid_fields_then_sampled_ones():
    plan = make_plan(
        BASE,
        grid={"clip_eps": [0.1, 0.2]},
        sample={"learning_rate": ("uniform", 1e-4, 1e-3)},
        num_samples=2,
        seeds=[3],
    )
    assert plan.fields == (
        Field("ppo.clip_eps", True),
        Field("ppo.learning_rate", True),
    )
    assert [s["ppo.clip_eps"] for s in plan.settings] == [0.1, 0.1, 0.2, 0.2]
    assert plan.seeds == (3,) and plan.num_runs == 4
    assert plan.configs[3].ppo.learning_rate == plan.settings[3]["ppo.learning_rate"]


@pytest.mark.parametrize("grid", [[64, 32], (64, 64), 64])
def test_a_list_fields_grid_of_items_names_the_grids_own_forms(grid):
    # One value per setting: a list-valued field's settings are lists. The
    # refusal names that form in Python and on the command line, not the
    # `train` flag the type check names.
    with pytest.raises(ConfigError) as e:
        make_plan(BASE, grid={"network.hidden_sizes": grid})
    said = str(e.value)
    assert "--network.hidden-sizes" not in said
    python = "grid={'network.hidden_sizes': [(64, 64), (64,)]} in Python"
    assert python in said and "(one list per setting)" in said
    # Both forms it names make the settings they show.
    assert make_plan(BASE, grid={"network.hidden_sizes": [(64, 64), (64,)]}).settings
    flag = re.search(r"--grid '([^']*)' on the command line\.$", said)
    assert flag, said
    name, values = parse_grid_arg(flag.group(1))
    plan = make_plan(BASE, grid={name: values})
    assert [s["network.hidden_sizes"] for s in plan.settings] == [(64, 64), (64,)]


@pytest.mark.parametrize("values", ["64,32", "64", "32"])
def test_a_command_line_grid_of_items_is_refused_as_pythons_is(values):
    # `--grid network.hidden_sizes=64,32` trained the one-layer networks (64,)
    # and (32,) (the strings "64" and "32" read as lists), where Python's
    # grid of the same items is refused: now both are, in the same words.
    name, texts = parse_grid_arg(f"network.hidden_sizes={values}")
    with pytest.raises(ConfigError) as cli:
        make_plan(BASE, grid={name: texts})
    with pytest.raises(ConfigError) as python:
        make_plan(BASE, grid={name: [int(v) for v in texts]})
    assert str(cli.value) == str(python.value)
    assert f"{texts[0]} is not a list, and each value of a list-valued" in str(
        cli.value
    )


def test_a_command_line_item_of_several_widths_shows_them_as_one_setting():
    # "64 32" reads as (64, 32): refused too, its fix spelling that setting.
    name, texts = parse_grid_arg("network.hidden_sizes=64 32")
    with pytest.raises(ConfigError) as e:
        make_plan(BASE, grid={name: texts})
    assert "--grid 'network.hidden_sizes=[[64,64],[64,32]]' on the" in str(e.value)
    # An item the field cannot read gets the config's own refusal.
    with pytest.raises(ConfigError, match="'abc' is not a list of integers"):
        make_plan(BASE, grid={"network.hidden_sizes": ["abc"]})


def _grid_spellings() -> list[str]:
    """The list-field grids `sweep --help` and the sweeps guide show."""
    import io
    import pathlib
    from contextlib import redirect_stdout

    from purejaxdrl import cli

    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit):
        cli.main(["sweep", "--help"])
    guide = pathlib.Path(__file__).parents[2] / "docs" / "guide" / "sweeps.md"
    shown = re.findall(r"network\.hidden_sizes=\[\[[^\s']*\]\]", out.getvalue())
    shown += re.findall(r"--grid '(network\.hidden_sizes=[^']*)'", guide.read_text())
    return shown


def test_the_command_lines_grid_of_lists_makes_one_setting_per_list():
    shown = _grid_spellings()
    assert len(shown) == 2, shown  # --help's and the guide's
    for text in [*shown, "network.hidden_sizes=[[64,32]]"]:
        name, values = parse_grid_arg(text)
        plan = make_plan(BASE, grid={name: values})
        want = [tuple(v) for v in values]  # YAML's lists, one setting each
        assert [s["network.hidden_sizes"] for s in plan.settings] == want, text
    one = make_plan(BASE, grid=dict([parse_grid_arg("network.hidden_sizes=[[64,32]]")]))
    assert one.settings == ({"network.hidden_sizes": (64, 32)},)


def test_a_grid_of_a_list_field_unset_in_the_base_shows_it_unset():
    with pytest.raises(
        ConfigError, match=re.escape("[(), (1,)]} in Python (one list per")
    ):
        make_plan(BASE, grid={"network.head_sizes": [1, 3]})


def test_make_plan_checks_the_grid_before_the_random_search():
    with pytest.raises(ConfigError, match="the grid is empty"):
        make_plan(BASE, grid={"clip_eps": []}, sample={"gamma": ("normal", 0, 1)})
    with pytest.raises(ConfigError, match="without a range to sample"):
        make_plan(BASE, num_samples=3)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: pjd.sweep("cartpole", seeds=2.0), "seeds=2.0 is neither a count"),
        (lambda: pjd.sweep(BASE, seeds=[0.5]), "seeds=[0.5] holds 0.5, which is not"),
        (lambda: pjd.sweep(BASE, seeds=["3"]), "holds '3', which is not an integer"),
        (lambda: pjd.sweep("cartpole", device_memory="2GB"),
         "device_memory='2GB' is not a number of bytes; pass e.g."),
        (lambda: pjd.sweep("cartpole", sample={"learning_rate": "loguniform:1e-4:1e-3"},
                           num_samples=2),
         "sample learning_rate='loguniform:1e-4:1e-3' is not (distribution"),
        (lambda: pjd.pbt("cartpole", explore={"learning_rate": (1e-5, 1e-3)},
                         population=4),
         "explore learning_rate=(1e-05, 0.001) is not ("),
        (lambda: pjd.sweep(pjd.load_preset("cartpole")),
         "a sweep (or PBT run) takes a config, not a Preset; pass its .config"),
        (lambda: pjd.pbt(pjd.load_preset("cartpole"),
                         explore={"learning_rate": ("loguniform", 1e-5, 1e-3)},
                         population=4),
         "a sweep (or PBT run) takes a config, not a Preset; pass its .config"),
    ],
)  # fmt: skip
def test_python_arguments_in_the_wrong_form_name_the_right_one(call, message):
    # The command line's forms (2GB, loguniform:LOW:HIGH) or a float count
    # reach Python too; each is refused before anything compiles.
    with pytest.raises(pjd.ConfigError, match=re.escape(message)):
        call()


def test_seeds_may_be_any_integers():
    base = pjd.load_preset("cartpole").config
    assert make_plan(base, seeds=np.arange(3)).num_runs == 3
    assert make_plan(base, seeds=np.int64(2)).num_runs == 2
