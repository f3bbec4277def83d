"""PPO on MuJoCo Playground's CartpoleBalance: it learns, and devices agree."""

import jax
import numpy as np
import pytest

pytest.importorskip("mujoco_playground")

import purejaxdrl as pjd  # noqa: E402
from tests.helpers import flat, trained  # noqa: E402


def _preset(**overrides) -> pjd.TrainConfig:
    preset = pjd.load_preset("cartpole_balance")
    return pjd.apply_overrides(preset.config, overrides)


# Compiling PPO with MJX's physics takes ~1-2.5 min on 2 CPU cores; 1.5M steps
# then train in ~1.5 min (~17k steps/s).
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_ppo_balances_playground_cartpole_within_its_preset_budget():
    preset = pjd.load_preset("cartpole_balance")
    config = pjd.apply_overrides(preset.config, {"devices": 1})
    assert config.total_steps <= preset.target_steps <= 2_000_000
    result = pjd.train(config)
    assert result.mean_return >= preset.target_return, result.history[-3:]


# The preset's run, its first update, on 1 and on 2 devices: the learner
# averages gradients and observation statistics over devices, so both see
# the same data and take the same steps, up to float summation order. Adam
# makes that order show: its 128 steps per update (16 epochs x 8 minibatches)
# normalise near-zero gradients, so rounding grows to 1.1e-3 in one update
# (measured, the environment groups dealt anew each epoch; 1.4e-5 with 1
# epoch, where one update moves them by 8e-3) and 2e-2 in three, while one
# update moves the parameters by 0.19: different data (e.g. environments
# keyed by device, or minibatches dealt per device) would part them by about
# that much.
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_ppo_on_playground_gives_the_same_parameters_on_2_devices():
    config = _preset(devices=1)
    exp, one, metrics_one, _ = trained(config, 1, 1)
    _, two, metrics_two, _ = trained(config, 2, 1)
    init = flat(exp.runner.init(jax.random.key(0)).agent.params)
    one_params, two_params = flat(one.agent.params), flat(two.agent.params)
    moved = np.abs(one_params - init).max()
    apart = np.abs(two_params - one_params).max()
    print(f"moved {moved:.3g}, apart {apart:.3g}")
    assert moved > 5e-2 and apart < 5e-3, (moved, apart)
    np.testing.assert_allclose(
        flat(two.env_params), flat(one.env_params), atol=1e-5, rtol=1e-5
    )
    np.testing.assert_allclose(
        metrics_two["loss/total"], metrics_one["loss/total"], rtol=1e-5
    )


# MJX's `Data` holds zero-size arrays (`act` [B, 0] on CartpoleBalance); jit
# gave them a replicated sharding, which the chunks, compiled for the actors'
# P("data"), refused on 2+ devices before the first update. Two chunks: the
# second takes the first's output, the first init's.
def test_ppo_on_playground_trains_on_2_devices_through_several_chunks():
    config = _preset(
        devices=2,
        num_envs=8,
        unroll_length=8,
        total_steps=512,
        num_logs=2,
        ppo={"num_minibatches": 2, "num_epochs": 1},
        eval={"episodes": 0},
    )
    result = pjd.train(config, console=False)
    assert [r["updates"] for r in result.history] == [4, 8], result.history
