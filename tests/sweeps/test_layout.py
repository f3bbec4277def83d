"""A group's mesh shape and layout from its config, by hand."""

import jax
import jax.numpy as jnp

import purejaxdrl as pjd
from purejaxdrl.runners.anakin import RunnerState
from purejaxdrl.runners.rollout import ActorState
from purejaxdrl.sweeps.layout import Layout, group_layout, group_mesh_shape
from purejaxdrl.types import TimeStep

BASE = pjd.load_preset("cartpole").config  # PPO, 4 minibatches


def test_group_mesh_shape_keeps_the_algorithms_env_multiple():
    config = pjd.apply_overrides(BASE, {"num_envs": 8, "devices": 8})
    # T=128: 4 minibatches are 4 time blocks, any env split will do.
    assert group_mesh_shape(1, config) == (1, 8)
    # T=6: gcd(4, 6) = 2 time blocks, so 2 env groups: an even count per device
    # (8 on 8 devices would be 1 each; 4 devices take 2).
    short = pjd.apply_overrides(config, {"unroll_length": 6})
    assert group_mesh_shape(1, short) == (1, 4)
    assert group_mesh_shape(3, pjd.apply_overrides(config, {"devices": 2})) == (2, 1)
    # devices=0: every local device (conftest's 8).
    assert group_mesh_shape(16, pjd.apply_overrides(config, {"devices": 0})) == (8, 1)


def _shape(*shape, dtype=jnp.float32):
    return jax.ShapeDtypeStruct(shape, dtype)


def test_group_layout_by_hand():
    timestep = TimeStep(
        observation=_shape(8, 4),
        reward=(),
        discount=(),
        truncated=(),
        final_observation=(),
        info={},
    )
    state = RunnerState(
        agent=_shape(10),  # 40 bytes
        actor=ActorState(env_state=(), timestep=timestep, env_ids=_shape(8)),
        env_params=(),
        key=(),
    )
    config = pjd.apply_overrides(BASE, {"num_envs": 8, "unroll_length": 5})
    # State: 40 + (128 + 32) / 2 = 120 bytes. Rollout per device: 4 envs x 5
    # steps x (2 observations x 16 bytes + 32), 3 copies: 3840. 3960 per run.
    # Memory for 2 runs per device; 6 runs on 2 devices: 2 batches of 2 x 2.
    layout, source = group_layout(6, (2, 2), state, config, device_memory=7920)
    assert source == "device_memory"
    assert layout == Layout(2, 2, 4, 2, 3960, 7920)
