"""Random search: ranges checked, draws reproducible and in range."""

import ast
import math

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError
from purejaxdrl.sweeps.fields import Field
from purejaxdrl.sweeps.search import random_draws, sampled_field, written

BASE = pjd.load_preset("cartpole").config  # PPO


@pytest.mark.parametrize(
    ("name", "spec", "message"),
    [
        ("num_epochs", ("uniform", 1, 4), "is static"),
        ("gamma", ("normal", 0.9, 0.99), r"'normal' is not one of"),
        ("gamma", ("uniform", 0.99, 0.9), r"is empty \(LOW must be < HIGH\);"),
        ("entropy_cost", ("uniform", 0.0, float("inf")), "needs finite ends"),
        ("learning_rate", ("loguniform", 1e-5, "1"), "is a str, not a number"),
        ("learning_rate", ("loguniform", 0.0, 1e-3), "LOW > 0 for loguniform"),
        ("gamma", ("uniform", 0.5, 1.5), r"^sample\['gamma'\]: .*in \[0, 1\]"),
    ],
)
def test_sampled_field_refusals(name, spec, message):
    with pytest.raises(ConfigError, match=message):
        sampled_field(BASE, name, spec, [])


# The exact lines: the value, the rule, and a range to pass that is itself
# taken (cartpole's PPO: learning rate 2.5e-4 > 0, gamma 0.99 in [0, 1]).
@pytest.mark.parametrize(
    ("name", "spec", "message"),
    [
        # Reversed: the example is the range the right way round.
        (
            "learning_rate",
            ("uniform", 1e-3, 1e-4),
            "--explore learning_rate: range [0.001, 0.0001] is empty (LOW must "
            "be < HIGH); e.g. --explore learning_rate=uniform:0.0001:0.001 (explore="
            "{'learning_rate': ('uniform', 0.0001, 0.001)} in Python).",
        ),
        # Reversed past the field's rule, or one value: a tenth to ten times
        # the base's value, else half to whole, is the example.
        (
            "learning_rate",
            ("uniform", 1e-3, -1.0),
            "--explore learning_rate: range [0.001, -1.0] is empty (LOW must be "
            "< HIGH); e.g. --explore learning_rate=uniform:2.5e-5:0.0025 (explore="
            "{'learning_rate': ('uniform', 2.5e-5, 0.0025)} in Python).",
        ),
        (
            "gamma",
            ("uniform", 0.99, 0.99),
            "--explore gamma: range [0.99, 0.99] is empty (LOW must be < HIGH); "
            "e.g. --explore gamma=uniform:0.49:0.99 (explore={'gamma': ('uniform', "
            "0.49, 0.99)} in Python).",
        ),
        (
            "learning_rate",
            ("loguniform", 0.0, 1e-3),
            "--explore learning_rate: range [0.0, 0.001] must have LOW > 0 for "
            "loguniform (it draws in log space); e.g. "
            "--explore learning_rate=loguniform:2.5e-5:0.0025 (explore="
            "{'learning_rate': ('loguniform', 2.5e-5, 0.0025)} in Python).",
        ),
        # A string end is named as one (only Python passes it), written back
        # as a number where it reads as one.
        (
            "learning_rate",
            ("loguniform", "1e-4", 1e-2),
            "--explore learning_rate: LOW '1e-4' is a str, not a number; pass "
            "numbers, e.g. {'learning_rate': ('loguniform', 1e-4, 0.01)}.",
        ),
        (
            "learning_rate",
            ("loguniform", 1e-4, "high"),
            "--explore learning_rate: HIGH 'high' is a str, not a number; pass "
            "numbers, e.g. {'learning_rate': ('loguniform', 2.5e-5, 0.0025)}.",
        ),
        (
            "entropy_cost",
            ("uniform", 0.0, float("inf")),
            "--explore entropy_cost: HIGH inf is not finite, and a range needs "
            "finite ends; e.g. --explore entropy_cost=uniform:0.001:0.1 (explore="
            "{'entropy_cost': ('uniform', 0.001, 0.1)} in Python).",
        ),
        # A bool is no number, though Python counts it one (True == 1).
        (
            "learning_rate",
            ("uniform", True, 2.0),
            "--explore learning_rate: LOW True is a bool, not a number; pass "
            "numbers, e.g. {'learning_rate': ('uniform', 2.5e-5, 0.0025)}.",
        ),
        # Reversed, but swapped it starts at 0, which loguniform refuses; the
        # base's value is 0 too, so the example is the fixed 1e-5 to 1e-3.
        (
            "reward_clip",
            ("loguniform", 0.01, 0.0),
            "--explore reward_clip: range [0.01, 0.0] is empty (LOW must be < "
            "HIGH); e.g. --explore reward_clip=loguniform:1e-5:0.001 (explore="
            "{'reward_clip': ('loguniform', 1e-5, 0.001)} in Python).",
        ),
    ],
)
def test_range_refusals_name_the_value_the_rule_and_a_range_taken(name, spec, message):
    from purejaxdrl.sweeps.pbt.inputs import PBT_FLAGS

    with pytest.raises(ConfigError) as e:
        sampled_field(BASE, name, spec, [], PBT_FLAGS)
    assert str(e.value) == message
    # The range suggested is one the search takes, in each of its spellings.
    example = message.rpartition("e.g. ")[2].rstrip(".")
    if example.startswith("{"):  # Python's alone: only Python passes the value
        suggested = [ast.literal_eval(example)[name]]
    else:
        flag, _, python = example.partition(" (explore=")
        kind, low, high = flag.partition("=")[2].split(":")
        python = ast.literal_eval(python.removesuffix(" in Python)"))[name]
        suggested = [(kind, float(low), float(high)), python]
        assert suggested[0] == python
    for each in suggested:
        assert sampled_field(BASE, name, each, [], PBT_FLAGS).dynamic


def test_an_example_range_is_half_to_whole_before_whole_to_double():
    import dataclasses

    # gamma 0.4: a tenth to ten times (0.04 to 4) leaves [0, 1]; half to
    # whole (0.2 to 0.4) comes before whole to double (0.4 to 0.8).
    base = dataclasses.replace(BASE, ppo=dataclasses.replace(BASE.ppo, gamma=0.4))
    with pytest.raises(ConfigError, match=r"e\.g\. --sample gamma=uniform:0\.2:0\.4 "):
        sampled_field(base, "gamma", ("uniform", 0.5, 0.5), [])


def test_numbers_are_written_as_on_the_command_line():
    assert [written(x) for x in (1e-5, 0.001, 3, 2.5e-05, 1e20, -0.5)] == [
        "1e-5", "0.001", "3", "2.5e-5", "1e20", "-0.5"
    ]  # fmt: skip


def test_a_gridded_field_cannot_be_sampled():
    assert sampled_field(BASE, "gamma", ("uniform", 0.9, 0.99), []).dynamic
    with pytest.raises(ConfigError, match="'ppo.gamma' is given twice"):
        sampled_field(BASE, "gamma", ("uniform", 0.9, 0.99), [Field("ppo.gamma", True)])


def test_pbt_says_a_field_twice_is_under_two_names_not_gridded():
    from purejaxdrl.sweeps.pbt.inputs import PBT_FLAGS

    taken = [Field("ppo.learning_rate", True)]
    spec = ("uniform", 1e-4, 1e-2)
    # PBT has no grid: the only way twice is a bare and a dotted name.
    with pytest.raises(
        ConfigError,
        match=r"^--explore field 'ppo\.learning_rate' is given twice \(under two "
        r"names\); pick one\.$",
    ):
        sampled_field(BASE, "ppo.learning_rate", spec, taken, PBT_FLAGS)
    with pytest.raises(ConfigError, match=r"twice \(gridded and sampled, or under"):
        sampled_field(BASE, "ppo.learning_rate", spec, taken)


def test_draws_take_each_fields_column_from_one_generator():
    sample = {
        "learning_rate": ("loguniform", 1e-4, 1e-2),
        "gamma": ("uniform", 0.9, 0.99),
    }
    fields, draws = random_draws(BASE, sample, 3, search_seed=3, taken=[])
    assert [f.path for f in fields] == ["ppo.learning_rate", "ppo.gamma"]
    # The learning rate's three values first (uniform in log space), then
    # gamma's, from the same generator.
    rng = np.random.default_rng(3)
    lrs = np.exp(rng.uniform(math.log(1e-4), math.log(1e-2), 3))
    gammas = rng.uniform(0.9, 0.99, 3)
    assert draws == [
        {"ppo.learning_rate": float(lr), "ppo.gamma": float(g)}
        for lr, g in zip(lrs, gammas, strict=True)
    ]
    assert all(1e-4 <= d["ppo.learning_rate"] <= 1e-2 for d in draws)
    assert all(type(d["ppo.gamma"]) is float for d in draws)


def test_without_ranges_there_is_one_empty_draw():
    assert random_draws(BASE, {}, 0, search_seed=0, taken=[]) == ([], [{}])
    with pytest.raises(ConfigError, match="num_samples=2 without a range"):
        random_draws(BASE, {}, 2, search_seed=0, taken=[])
    # A seed of no draws is refused, not ignored (sw19 #3); 0 is Python's default.
    with pytest.raises(ConfigError, match=r"^--search-seed 3 \(search_seed=3 in"):
        random_draws(BASE, {}, 0, search_seed=3, taken=[])
    for bad in (0, 2.0):
        with pytest.raises(ConfigError, match="needs a whole number of draws, at"):
            random_draws(BASE, {"gamma": ("uniform", 0.9, 1.0)}, bad, 0, taken=[])
    # A typo'd count fails at once, before a billion draws are made.
    with pytest.raises(
        ConfigError, match="num_samples=100000000: a random search draws"
    ):
        random_draws(BASE, {"gamma": ("uniform", 0.9, 1.0)}, 10**8, 0, taken=[])
