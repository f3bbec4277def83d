"""Random search: ranges checked, draws reproducible and in range."""

import math

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError
from purejaxdrl.sweeps.fields import Field
from purejaxdrl.sweeps.search import random_draws, sampled_field

BASE = pjd.load_preset("cartpole").config  # PPO


@pytest.mark.parametrize(
    ("name", "spec", "message"),
    [
        ("num_epochs", ("uniform", 1, 4), "is static"),
        ("gamma", ("normal", 0.9, 0.99), r"'normal' is not one of"),
        ("gamma", ("uniform", 0.99, 0.9), r"must have finite ends and LOW < HIGH;"),
        ("entropy_cost", ("uniform", 0.0, float("inf")), "must have finite ends"),
        ("learning_rate", ("loguniform", 1e-5, "1"), "must have finite ends"),
        ("learning_rate", ("loguniform", 0.0, 1e-3), "and LOW > 0 for loguniform"),
        ("gamma", ("uniform", 0.5, 1.5), r"^--sample ppo\.gamma: .*in \[0, 1\]"),
    ],
)
def test_sampled_field_refusals(name, spec, message):
    with pytest.raises(ConfigError, match=message):
        sampled_field(BASE, name, spec, [])


def test_a_gridded_field_cannot_be_sampled():
    assert sampled_field(BASE, "gamma", ("uniform", 0.9, 0.99), []).dynamic
    with pytest.raises(ConfigError, match="'ppo.gamma' is given twice"):
        sampled_field(BASE, "gamma", ("uniform", 0.9, 0.99), [Field("ppo.gamma", True)])


def test_pbt_says_a_field_twice_is_under_two_names_not_gridded():
    from purejaxdrl.sweeps.pbt_inputs import _PBT_WORDING

    taken = [Field("ppo.learning_rate", True)]
    spec = ("uniform", 1e-4, 1e-2)
    # PBT has no grid: the only way twice is a bare and a dotted name.
    with pytest.raises(
        ConfigError,
        match=r"^--explore field 'ppo\.learning_rate' is given twice \(under two "
        r"names\); pick one\.$",
    ):
        sampled_field(BASE, "ppo.learning_rate", spec, taken, _PBT_WORDING)
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
    for bad in (0, 2.0):
        with pytest.raises(ConfigError, match="needs a whole number of draws, at"):
            random_draws(BASE, {"gamma": ("uniform", 0.9, 1.0)}, bad, 0, taken=[])
    # A typo'd count fails at once, before a billion draws are made.
    with pytest.raises(ConfigError, match="--samples 100000000: a random search draws"):
        random_draws(BASE, {"gamma": ("uniform", 0.9, 1.0)}, 10**8, 0, taken=[])
