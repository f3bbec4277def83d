"""Learning tests: PPO must reach each preset's score within its step budget."""

import math

import pytest

import purejaxdrl as pjd


@pytest.mark.timeout(600)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ppo_solves_cartpole_within_500k_steps(seed):
    preset = pjd.load_preset("cartpole")
    config = pjd.apply_overrides(preset.config, {"seed": seed})
    assert config.total_steps <= 500_000
    result = pjd.train(config)
    assert result.mean_return >= 475, result.history[-3:]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_ppo_balances_brax_inverted_pendulum_within_1m_steps():
    preset = pjd.load_preset("inverted_pendulum")
    assert preset.config.total_steps <= 1_000_000
    result = pjd.train(preset.config)
    assert not math.isnan(result.mean_return)
    assert result.mean_return >= 900, [
        r.get("episode/mean_return") for r in result.history
    ]
