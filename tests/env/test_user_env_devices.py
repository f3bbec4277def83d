"""A user's env whose loop carry starts from a constant, on one device and on two.

`lax.fori_loop(0, n, body, jnp.float32(0))` whose body adds per-environment
values is correct JAX; inside `shard_map`'s check of varying types it is a
TypeError (the carry goes in replicated and comes out per-device). On one
device that check is off and the env trains; on two it is needed, and the env
is refused in one line, or trains once it sets `vma_checked = False`.
"""

import jax
import jax.numpy as jnp
import pytest

import purejaxdrl as pjd
from purejaxdrl import env as envs
from purejaxdrl.types import TimeStep


class LoopSum(envs.Env):
    """A 2-D walk of 8 steps whose reward is a sum taken by a fori_loop."""

    @property
    def default_params(self):
        return ()

    def observation_spec(self, params):
        return envs.Box((2,))

    def action_spec(self, params):
        return envs.Discrete(2)

    def reset(self, key, params):
        obs = jax.random.uniform(key, (2,))
        return (obs, jnp.int32(0)), envs.restart(obs)

    def step(self, key, state, action, params):
        obs, t = state
        obs = obs + action.astype(jnp.float32) * 0.1
        # The carry starts from a constant (replicated), the body adds the
        # state (per-environment): the idiom this test is about.
        total = jax.lax.fori_loop(
            0, 3, lambda i, acc: acc + jnp.sum(obs), jnp.float32(0.0)
        )
        truncated = t + 1 >= 8
        reset = jax.random.uniform(key, (2,))
        return (jnp.where(truncated, reset, obs), jnp.where(truncated, 0, t + 1)), (
            TimeStep(
                observation=jnp.where(truncated, reset, obs),
                reward=total / 3,
                discount=jnp.float32(1.0),
                truncated=truncated,
                final_observation=obs,
                info={},
            )
        )


class LoopSumUnchecked(LoopSum):
    """The same env, telling the runners to leave shard_map's type check off."""

    @property
    def vma_checked(self):
        return False


def small(env_id: str, devices: int) -> pjd.TrainConfig:
    return pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {
            "env": {"id": env_id},
            "num_envs": 16,
            "unroll_length": 8,
            "total_steps": 16 * 8 * 2,
            "devices": devices,
            "num_logs": 1,
        },
    )


@pytest.mark.timeout(300)
def test_a_loop_from_a_constant_trains_on_one_device():
    # It was a 50-line TypeError from inside the chunk's shard_map.
    envs.register("LoopSum-v0", LoopSum)
    result = pjd.train(small("LoopSum-v0", 1), console=False)
    assert result.updates == 2


@pytest.mark.timeout(300)
def test_on_two_devices_it_is_one_line_or_trains_unchecked():
    envs.register("LoopSum-v0", LoopSum)
    with pytest.raises(pjd.ConfigError) as error:
        pjd.train(small("LoopSum-v0", 2), console=False)
    message = str(error.value)
    assert message.startswith(
        "LoopSum-v0: its step fails shard_map's check of varying types, which "
        "runs on 2+ devices (scan body function carry input and carry output "
        "must have equal types, but they differ): "
    )
    assert message.endswith(
        "start the carry from a value derived from the state or action (e.g. "
        "jnp.zeros_like(state.x)), or set vma_checked = False on LoopSum (docs: "
        "Bring your own environment), or train on one device (--devices 1)."
    )
    assert "\n" not in message
    assert isinstance(error.value.__cause__, TypeError)  # JAX's, with its traceback

    envs.register("LoopSumUnchecked-v0", LoopSumUnchecked)
    result = pjd.train(small("LoopSumUnchecked-v0", 2), console=False)
    assert result.updates == 2


@pytest.mark.timeout(300)
def test_a_sweep_of_runs_on_one_device_each_trains_it():
    # Two runs over two devices: one each (data 1), so no type check, as a
    # run on one device; it was on, over the `sweep` axis.
    envs.register("LoopSum-v0", LoopSum)
    grid = {"ppo.learning_rate": [1e-3, 3e-3]}
    result = pjd.sweep(small("LoopSum-v0", 2), grid=grid, console=False)
    assert [layout.data for layout in result.layouts] == [1]
    assert len(result.final_params) == 2
