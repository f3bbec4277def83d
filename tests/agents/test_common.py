"""Helpers every actor-critic agent shares."""

import jax
import numpy as np
import pytest

from purejaxdrl.agents.actor_critic import learning_rewards
from purejaxdrl.agents.impala import IMPALAConfig
from purejaxdrl.agents.ppo import PPOConfig


def test_learning_rewards_scale_then_clip():
    reward = np.array([-7.0, -0.5, 0.0, 0.25, 3.0], np.float32)
    # By hand: x 2 -> [-14, -1, 0, 0.5, 6], then clipped to [-1, 1].
    np.testing.assert_array_equal(
        learning_rewards(reward, 2.0, 1.0), [-1.0, -1.0, 0.0, 0.5, 1.0]
    )
    # 0: unclipped, also when traced (a swept value).
    np.testing.assert_array_equal(learning_rewards(reward, 1.0, 0.0), reward)
    traced = jax.jit(learning_rewards)(reward, 1.0, 0.0)
    np.testing.assert_array_equal(traced, reward)


@pytest.mark.parametrize("config", [PPOConfig, IMPALAConfig])
def test_reward_clip_must_not_be_negative(config):
    from purejaxdrl.agents.registry import algorithms

    (record,) = [a for a in algorithms() if a.config_type is config]
    with pytest.raises(ValueError, match="reward_clip=-1"):
        record.validate(config(reward_clip=-1.0), None)
