"""Sweep and PBT refusals name the input as its caller wrote it.

From Python the keyword arguments (`grid['learning_rate']`, `quantile=0.7`),
from the command line the flags (`--grid learning_rate`, `--pbt.quantile
0.7`); a bad grid or range value's fix is a grid or a range, not the base
config's flag, which would sweep nothing.
"""

import ast
import re

import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.config_docs import flag
from purejaxdrl.sweeps.spec import make_plan, parse_grid_arg

BASE = pjd.load_preset("cartpole").config  # PPO
COMMAND = ["--no-files", "--quiet", "--no-compile-cache", "--env", "cartpole"]
LR = ("loguniform", 1e-4, 1e-3)
EXPLORE = ["--explore", "learning_rate=loguniform:1e-4:1e-3"]


def _python(call, *args, **kwargs) -> str:
    with pytest.raises(pjd.ConfigError) as e:
        call(*args, **kwargs)
    assert "\n" not in str(e.value)
    return str(e.value)


def _command_line(argv: list[str], capsys) -> str:
    status = cli.main(argv)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1, err
    return lines[0].removeprefix("purejaxdrl: error: ")


def _grid_fix(said: str, name: str) -> tuple[str, dict]:
    """The grid example a refusal ends with: its flag's value and Python's grid."""
    found = re.search(r"e\.g\. --grid (\S+) \(grid=(.*) in Python\)\.$", said)
    assert found, said
    assert found.group(1).startswith(f"{name}="), said
    return found.group(1), ast.literal_eval(found.group(2))


@pytest.mark.parametrize(
    ("name", "values", "rule"),
    [
        ("learning_rate", ["fast"], "ppo.learning_rate='fast' is not a number; "),
        ("gamma", [1.5, 0.9], "ppo.gamma=1.5 must be in [0, 1]; "),
        ("num_envs", [4, 2.5], "num_envs=2.5 is not an integer; "),
        ("ppo.anneal_lr", ["maybe"], "ppo.anneal_lr='maybe' is not a boolean; "),
    ],
)
def test_a_bad_grid_value_is_named_as_the_grid_and_fixed_as_one(name, values, rule):
    said = _python(pjd.sweep, BASE, grid={name: values}, console=False)
    assert said.startswith(f"grid[{name!r}]: {rule}"), said
    # Not the base config's flag: following that would sweep nothing.
    for path in (name, f"ppo.{name}"):
        assert f"{flag(path)} " not in said, said
    text, grid = _grid_fix(said, name)
    # Both spellings of the fix plan a grid of two settings, the same two.
    by_flag = make_plan(BASE, grid=dict([parse_grid_arg(text)]))
    by_python = make_plan(BASE, grid=grid)
    assert by_flag.settings == by_python.settings
    assert len(by_python.settings) == 2


def test_a_bad_range_end_is_fixed_as_a_range():
    sample = {"gamma": ("uniform", 0.5, 1.5)}
    said = _python(pjd.sweep, BASE, sample=sample, num_samples=2, console=False)
    assert said == (
        "sample['gamma']: ppo.gamma=1.5 must be in [0, 1]; e.g. --sample "
        "gamma=uniform:0.49:0.99 (sample={'gamma': ('uniform', 0.49, 0.99)} in "
        "Python)."
    )
    make_plan(BASE, sample={"gamma": ("uniform", 0.49, 0.99)}, num_samples=2)


def test_python_refusals_name_the_keyword_arguments():
    static = _python(
        pjd.sweep, BASE, sample={"num_envs": ("uniform", 4, 8)}, num_samples=2,
        console=False,
    )  # fmt: skip
    assert static.startswith("sample['num_envs']: num_envs is static"), static
    assert "--grid" not in static
    explore = _python(
        pjd.pbt, BASE, explore={"num_envs": ("uniform", 4, 8)}, population=4,
        console=False,
    )  # fmt: skip
    assert explore.startswith("explore['num_envs']: num_envs is static"), explore
    assert "--FIELD" not in explore
    assert _python(pjd.pbt, BASE, explore={}, population=4, console=False) == (
        "PBT needs at least one explored field; e.g. --explore "
        "learning_rate=loguniform:1e-5:1e-3 (explore={'learning_rate': "
        "('loguniform', 1e-5, 1e-3)} in Python)."
    )
    lr = {"learning_rate": LR}
    keep = _python(
        pjd.pbt, BASE, explore=lr, population=4, keep_buffer=True, console=False
    )
    assert keep.startswith("keep_buffer=True: ppo keeps no replay buffer"), keep
    assert keep.endswith("; drop keep_buffer=True."), keep
    quantile = _python(
        pjd.pbt, BASE, explore=lr, population=4, quantile=0.7, console=False
    )
    assert quantile == (
        "quantile=0.7 must be in (0, 0.5] (the bottom and top quantiles may not "
        "overlap); e.g. --pbt.quantile 0.25 (quantile=0.25 in Python)."
    )
    seed = _python(pjd.pbt, BASE, explore={"seed": LR}, population=4, console=False)
    assert seed == (
        "explore field 'seed' cannot be swept: member i trains with seed base.seed + i."
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["sweep", "--grid", "learning_rate=fast,slow"],
            "--grid learning_rate: ppo.learning_rate='fast' is not a number; "
            "pass e.g. --grid learning_rate=2.5e-5,0.0025 (grid={'learning_rate': "
            "[2.5e-05, 0.0025]} in Python).",
        ),
        (
            ["sweep", "--grid", "gamma=1.5,0.9"],
            "--grid gamma: ppo.gamma=1.5 must be in [0, 1]; e.g. --grid "
            "gamma=0.49,0.99 (grid={'gamma': [0.49, 0.99]} in Python).",
        ),
        (
            ["sweep", "--sample", "num_envs=uniform:4:8", "--samples", "2"],
            "--sample num_envs: num_envs is static (it changes shapes or loop "
            "counts, one program per value); draw only dynamic fields (a sweep "
            "can --grid a static one).",
        ),
        (
            ["sweep", "--sample", "learning_rate=loguniform:1e-4:1e-3"],
            "--sample needs --samples N (how many draws); e.g. --samples 8 "
            "(num_samples=8 in Python).",
        ),
        (
            ["pbt", "--explore", "num_envs=uniform:4:8"],
            "--explore num_envs: num_envs is static (it changes shapes or loop "
            "counts, one program per value); draw only dynamic fields (PBT's "
            "members share one program; set a static field with --FIELD).",
        ),
        (
            ["pbt", *EXPLORE, "--pbt.keep-buffer"],
            "--pbt.keep-buffer: ppo keeps no replay buffer in this config, so there "
            "is none to keep (members copy their parent's whole learner state); "
            "drop --pbt.keep-buffer.",
        ),
        (
            ["pbt", *EXPLORE, "--pbt.quantile", "0.7"],
            "--pbt.quantile 0.7 must be in (0, 0.5] (the bottom and top quantiles "
            "may not overlap); e.g. --pbt.quantile 0.25 (quantile=0.25 in Python).",
        ),
        (
            ["pbt", "--explore", "seed=uniform:1:2"],
            "--explore field 'seed' cannot be swept: member i trains with seed "
            "--seed + i.",
        ),
    ],
)  # fmt: skip
def test_command_line_refusals_name_the_flags(argv, message, capsys):
    assert _command_line([argv[0], *COMMAND, *argv[1:]], capsys) == message


def test_python_is_told_its_own_missing_draw_count_and_memory_fix():
    # sw21 #7: `sample=` without num_samples was told `num_samples=0`, a value
    # never passed; the command line says what is missing. sw21 #8:
    # `device_memory=0` was given no fix.
    sample = {"learning_rate": LR}
    assert _python(pjd.sweep, BASE, sample=sample, console=False) == (
        "sample= needs num_samples=N (how many draws); e.g. num_samples=8 (the "
        "command line's --samples 8)."
    )
    assert _python(make_plan, BASE, sample=sample).startswith("sample= needs num_")
    assert _python(pjd.sweep, BASE, sample=sample, num_samples=0).startswith(
        "num_samples=0: random search needs a whole number of draws"
    )  # a count of none, said as such
    assert _python(pjd.sweep, BASE, device_memory=0) == (
        "device_memory=0 must be a positive number of bytes; e.g. "
        "device_memory=2 * 2**30 (the command line's --device-memory 2GB)."
    )
