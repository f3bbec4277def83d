"""Learners that keep a buffer per device draw each shard's own slots."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

from purejaxdrl.replay import device_key, make_uniform_buffer


def _drawn_slots(axis_name: str | None) -> np.ndarray:
    # Each device fills its shard, then samples with the learner's key, which
    # is replicated over the devices (as DQN's, SAC's and IMPALA's are).
    buffer = make_uniform_buffer(1000, 8)
    mesh = jax.make_mesh((2,), ("data",), devices=jax.devices()[:2])

    def draw(key: jax.Array) -> jax.Array:
        state = buffer.init(jnp.zeros((), jnp.int32))
        state = buffer.add(state, jnp.arange(1000))
        return buffer.sample(state, device_key(key, axis_name)).index[None]

    mapped = jax.shard_map(draw, mesh=mesh, in_specs=P(), out_specs=P("data"))
    return np.asarray(jax.jit(mapped)(jax.random.key(0)))


def test_each_device_draws_its_own_slots():
    shared, own = _drawn_slots(None), _drawn_slots("data")
    # The replicated key alone: both shards' batches are the same slots.
    np.testing.assert_array_equal(shared[0], shared[1])
    assert not np.array_equal(own[0], own[1])
    # One device (no axis) keeps the key as it is.
    key = jax.random.key(3)
    assert jax.random.key_data(device_key(key, None)).tolist() == (
        jax.random.key_data(key).tolist()
    )
