"""A group's mesh shape and layout from its config, by hand."""

import jax
import jax.numpy as jnp
import pytest

import purejaxdrl as pjd
from purejaxdrl.runners.anakin import RunnerState
from purejaxdrl.runners.rollout import ActorState
from purejaxdrl.sweeps.layout import Layout, group_layout, group_mesh_shape
from purejaxdrl.sweeps.program import sweep
from purejaxdrl.types import TimeStep

BASE = pjd.load_preset("cartpole").config  # PPO, 4 minibatches


def test_group_mesh_shape_keeps_the_algorithms_env_multiple():
    config = pjd.apply_overrides(BASE, {"num_envs": 8, "devices": 8})
    # T=128: 4 minibatches are 4 time blocks, any env split will do.
    assert group_mesh_shape(1, config) == (1, 8)
    # T=6: gcd(4, 6) = 2 time blocks, so 2 env groups: an even count per device
    # (8 on 8 devices would be 1 each; 4 devices take 2). Left to choose: an
    # explicit count that leaves devices idle is refused (below).
    short = pjd.apply_overrides(config, {"unroll_length": 6, "devices": 0})
    assert group_mesh_shape(1, short) == (1, 4)
    assert group_mesh_shape(3, pjd.apply_overrides(config, {"devices": 2})) == (2, 1)
    # devices=0: every local device (conftest's 8).
    assert group_mesh_shape(16, pjd.apply_overrides(config, {"devices": 0})) == (8, 1)


def test_an_explicit_device_count_is_held_to_trains_rules():
    # More than the 8 local devices: train's one line, for any number of runs
    # (16 runs reached make_sweep_mesh's ValueError about "sizes").
    for runs in (1, 16):
        with pytest.raises(pjd.ConfigError) as e:
            group_mesh_shape(runs, pjd.apply_overrides(BASE, {"devices": 16}))
        assert str(e.value).startswith(
            "devices=16 must be between 1 and the 8 local cpu devices of this "
            "process; pass at most --devices 8 (devices=8 or make_mesh(8) in Python)"
        )
    # One run of 4 environments on 3 devices trains on 2: train refuses
    # --devices 3 for it, and so does a sweep, naming the count that fits.
    three = pjd.apply_overrides(BASE, {"devices": 3})
    with pytest.raises(pjd.ConfigError) as e:
        group_mesh_shape(1, three)
    assert str(e.value) == (
        "devices=3 leaves 1 of them idle: 1 run trains on 1 x 2 (sweep x data) "
        "devices, as each one's num_envs=4 does not split over 3 devices; pass "
        "--devices 2 (devices=2 in Python), or leave --devices out (devices=0 in "
        "Python) to take all that fit."
    )
    assert group_mesh_shape(3, three) == (3, 1)  # one device each: all used
    # PPO's 2 environment groups (T=6): 8 on 8 devices would be 1 each.
    short = pjd.apply_overrides(BASE, {"num_envs": 8, "unroll_length": 6})
    with pytest.raises(pjd.ConfigError) as e:
        group_mesh_shape(1, pjd.apply_overrides(short, {"devices": 8}), "members")
    assert str(e.value).startswith(
        "devices=8 leaves 4 of them idle: 1 member trains on 1 x 4 (sweep x "
        "data) devices, as each one's num_envs=8 does not split over 8 devices "
        "in multiples of 2; pass --devices 4 (devices=4 in Python)"
    )
    # Left to choose (devices=0), it takes what fits, as before.
    assert group_mesh_shape(1, pjd.apply_overrides(BASE, {"devices": 0})) == (1, 4)


def test_pjd_sweep_refuses_more_devices_than_there_are_as_a_config_error():
    config = pjd.apply_overrides(BASE, {"devices": 16})
    with pytest.raises(pjd.ConfigError, match=r"^devices=16 must be between 1 and"):
        pjd.sweep(config, seeds=16, console=False)


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


def test_the_count_that_fits_may_be_one_device():
    # 3 environments split over no 2 devices: one device is the count that fits.
    config = pjd.apply_overrides(BASE, {"num_envs": 3, "devices": 2})
    with pytest.raises(pjd.ConfigError) as e:
        group_mesh_shape(1, config)
    assert "pass --devices 1 (devices=1 in Python)" in str(e.value)


def test_two_runs_are_named_in_the_plural():
    config = pjd.apply_overrides(BASE, {"devices": 3})  # num_envs 4
    with pytest.raises(pjd.ConfigError) as e:
        group_mesh_shape(2, config)
    assert str(e.value).startswith("devices=3 leaves 1 of them idle: 2 runs train on")


def test_an_idle_device_count_is_refused_before_anything_is_written(tmp_path):
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"devices": 3, "total_steps": 1024, "run_dir": str(tmp_path / "runs")},
    )  # 1 run of 4 envs on 3 devices: 1 idle
    with pytest.raises(pjd.ConfigError, match=r"^devices=3 leaves 1 of them idle"):
        sweep(config, seeds=1, write_files=True, console=False)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
