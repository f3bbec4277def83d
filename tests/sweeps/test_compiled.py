"""The configs a group's programs take: algorithm sections stacked per run."""

import numpy as np

import purejaxdrl as pjd
from purejaxdrl.sweeps.compiled import stack_hps

BASE = pjd.load_preset("cartpole").config  # PPO


def test_stack_hps_makes_float32_leaves_one_value_per_run():
    other = pjd.apply_overrides(BASE, {"ppo": {"learning_rate": 0.5, "gamma": 0.25}})
    # Not symmetric: run i's values must be at index i (reversed runs, each
    # with another's hyper-parameters, would pass a palindrome).
    hps = stack_hps([BASE, BASE, other])
    lr, gamma = BASE.ppo.learning_rate, BASE.ppo.gamma
    assert hps.learning_rate.dtype == np.float32
    np.testing.assert_array_equal(hps.learning_rate, np.float32([lr, lr, 0.5]))
    np.testing.assert_array_equal(hps.gamma, np.float32([gamma, gamma, 0.25]))
    # Static fields are no leaves: one value, shared by every run.
    assert hps.num_epochs == BASE.ppo.num_epochs
