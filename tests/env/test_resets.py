"""Resetting only the environments that ended gives what vmap(step) gives."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl.env.resets import (
    reset_ended,
    step_resetting_few,
    step_resetting_if_any,
)
from purejaxdrl.types import TimeStep


class Toy(NamedTuple):
    t: jax.Array  # steps so far
    limit: jax.Array  # the step that truncates the episode
    world: jax.Array  # uint32 [3]: drawn by reset, from its key


def reset(key, params):
    world = jax.random.bits(key, (3,), jnp.uint32)
    state = Toy(jnp.int32(0), (3 + world[0] % 5).astype(jnp.int32), world)
    return state, world.astype(jnp.float32)


def step(key, state, action, params):
    # No reset: action 1 terminates, the limit truncates.
    t = state.t + 1
    terminated = action == 1
    obs = state.world.astype(jnp.float32) + t + jax.random.uniform(key)
    ts = TimeStep(
        observation=obs,
        reward=jnp.float32(1.0),
        discount=1.0 - terminated.astype(jnp.float32),
        truncated=~terminated & (t >= state.limit),
        final_observation=obs,
        info={},
    )
    return state._replace(t=t), ts


def auto_reset_step(key, state, action, params):
    key_step, key_reset = jax.random.split(key)
    state, ts = step(key_step, state, action, params)
    return reset_ended(state, ts, reset(key_reset, params))


@pytest.mark.parametrize("slots", [1, 3, 16])
def test_equals_vmap_of_an_auto_resetting_step(slots):
    n = 16
    states, _ = jax.vmap(reset, in_axes=(0, None))(
        jax.random.split(jax.random.key(0), n), None
    )
    few = jax.jit(
        lambda k, s, a: step_resetting_few(step, reset, k, s, a, None, slots=slots)
    )
    every = jax.jit(
        jax.vmap(auto_reset_step, in_axes=(0, 0, 0, None)), static_argnums=3
    )
    a = b = states
    ended = []
    for i in range(30):
        keys = jax.random.split(jax.random.key(i + 1), n)
        actions = jax.random.bernoulli(jax.random.key(100 + i), 0.1, (n,)).astype(int)
        a, ts_a = few(keys, a, actions)
        b, ts_b = every(keys, b, actions, None)
        for x, y in zip(
            jax.tree.leaves((a, ts_a)), jax.tree.leaves((b, ts_b)), strict=True
        ):
            np.testing.assert_array_equal(x, y)
        ended.append(int(ts_a.last().sum()))
    # Steps where none, a few and more than `slots` environments ended.
    assert 0 in ended and any(0 < e <= slots for e in ended)
    assert slots == n or any(e > slots for e in ended), ended
    # Ended episodes restart: the step after an end counts from 1.
    assert (np.asarray(a.t) < 8).all()


def test_resetting_if_any_equals_vmap_of_an_auto_resetting_step():
    n = 8
    states, _ = jax.vmap(reset, in_axes=(0, None))(
        jax.random.split(jax.random.key(0), n), None
    )

    def reset_from(key, state, params):  # this toy keeps nothing of `state`
        return reset(key, params)

    batch = jax.jit(
        lambda k, s, a: step_resetting_if_any(step, reset_from, k, s, a, None)
    )
    every = jax.jit(
        jax.vmap(auto_reset_step, in_axes=(0, 0, 0, None)), static_argnums=3
    )
    a = b = states
    ended = []
    for i in range(12):
        keys = jax.random.split(jax.random.key(i + 1), n)
        actions = jax.random.bernoulli(jax.random.key(50 + i), 0.05, (n,)).astype(int)
        a, ts_a = batch(keys, a, actions)
        b, ts_b = every(keys, b, actions, None)
        for x, y in zip(
            jax.tree.leaves((a, ts_a)), jax.tree.leaves((b, ts_b)), strict=True
        ):
            np.testing.assert_array_equal(x, y)
        ended.append(int(ts_a.last().sum()))
    assert 0 in ended and any(e > 0 for e in ended), ended


def test_reset_ended_keeps_the_final_observation_and_restarts_the_rest():
    # By hand: where the step ended (terminated or truncated), the state and the
    # observation are the new episode's and the final observation stays the
    # step's; elsewhere nothing changes. The tests above compare against a
    # reference built on reset_ended itself, so they cannot see this.
    state = Toy(jnp.int32(2), jnp.int32(3), jnp.zeros(3, jnp.uint32))
    world = (
        Toy(jnp.int32(0), jnp.int32(5), jnp.ones(3, jnp.uint32)),
        jnp.full(3, 9.0),
    )
    obs = jnp.array([1.0, 2.0, 3.0])

    def ts(discount, truncated):
        return TimeStep(obs, jnp.float32(1), discount, truncated, obs, {})

    for discount, truncated in [(0.0, False), (1.0, True)]:
        new_state, new = reset_ended(state, ts(discount, truncated), world)
        np.testing.assert_array_equal(new.observation, [9.0, 9.0, 9.0])
        np.testing.assert_array_equal(new.final_observation, [1.0, 2.0, 3.0])
        assert float(new.discount) == discount and bool(new.truncated) == truncated
        assert int(new_state.t) == 0 and int(new_state.limit) == 5
    new_state, new = reset_ended(state, ts(1.0, False), world)
    np.testing.assert_array_equal(new.observation, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(new.final_observation, [1.0, 2.0, 3.0])
    assert int(new_state.t) == 2 and int(new_state.limit) == 3


def test_time_limit_truncates_at_the_limit_unless_the_step_terminated():
    from purejaxdrl.env.resets import time_limit

    # (steps this episode, terminated) -> truncated, by the rule, limit 3.
    cases = {(2, False): False, (3, False): True, (4, False): True, (3, True): False}
    for (steps, terminated), truncated in cases.items():
        got = time_limit(jnp.int32(steps), 3, jnp.bool_(terminated))
        assert got.dtype == jnp.bool_ and bool(got) == truncated, (steps, terminated)
