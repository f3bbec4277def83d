"""A list field's grid refusals, where the mutation run found them untested."""

import re

import pytest

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError
from purejaxdrl.sweeps.spec import make_plan, parse_grid_arg

BASE = pjd.load_preset("cartpole").config  # PPO, hidden_sizes (64, 64)


def _refusal(text: str) -> str:
    name, values = parse_grid_arg(text)
    with pytest.raises(ConfigError) as e:
        make_plan(BASE, grid={name: values})
    return str(e.value)


def test_an_item_equal_to_the_base_setting_offers_a_grid_that_plans():
    # "64 64" is the base's own (64, 64): the fix is that one list as a grid
    # of one setting. It offered (64, 64) and (), and hidden_sizes=() is
    # refused ("one or more positive widths"): the fix shown failed.
    said = _refusal("network.hidden_sizes=64 64")
    assert "grid={'network.hidden_sizes': [(64, 64)]} in Python" in said, said
    flag = re.search(r"--grid '([^']*)' on the command line\.$", said)
    assert flag, said
    assert flag.group(1) == "network.hidden_sizes=[[64,64]]"
    name, values = parse_grid_arg(flag.group(1))
    plan = make_plan(BASE, grid={name: values})
    assert [s["network.hidden_sizes"] for s in plan.settings] == [(64, 64)]


def test_an_item_of_several_widths_is_shown_as_written():
    # "64 32" is the one setting (64, 32): shown whole, not as its first width.
    said = _refusal("network.hidden_sizes=64 32")
    assert "grid['network.hidden_sizes']: '64 32' is not a list" in said, said


def test_none_in_a_list_fields_grid_gets_the_configs_refusal():
    # None is no item of a list: the fix is not a setting holding None.
    with pytest.raises(ConfigError) as e:
        make_plan(BASE, grid={"network.hidden_sizes": [None]})
    assert "network.hidden_sizes=None is not a list" in str(e.value)
    assert "(None,)" not in str(e.value)
