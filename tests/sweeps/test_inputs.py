"""What a sweep or population is given: the base config and its target."""

import warnings

import pytest

from purejaxdrl.sweeps.inputs import base_and_target


def test_an_evaluation_target_is_not_judged_on_training_returns():
    # cartpole's pqn target (475) is the greedy evaluation's; its ε = 0.2
    # actors' training return sits below it, so a sweep must not judge it.
    with pytest.warns(UserWarning, match=r"cartpole's pqn target \(475\).*--target"):
        base, target = base_and_target("cartpole", "pqn", None)
    assert base.algo == "pqn"
    assert target is None


def test_an_explicit_target_is_kept_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, target = base_and_target("cartpole", "pqn", 400.0)
    assert target == 400.0


def test_a_training_target_is_the_default():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, target = base_and_target("cartpole", "ppo", None)
    assert target == 475.0  # the preset's training target
