"""How a learner's replay splits over the devices, and what each update stores."""

from typing import Any

import jax
import jax.numpy as jnp


def replay_shard_sizes(
    name: str, config: Any, num_devices: int
) -> tuple[int, int, int]:
    """Per-device (capacity, batch, min_size) of a config's global replay sizes.

    `config` has `buffer_size`, `batch_size` and `min_replay`, over all devices.

    Raises:
      ValueError: when one does not split evenly over the devices.

    """
    sizes = (config.buffer_size, config.batch_size, config.min_replay)
    names = ("buffer_size", "batch_size", "min_replay")
    for field, value in zip(names, sizes, strict=True):
        if value < num_devices or value % num_devices:
            raise ValueError(
                f"{name}.{field}={value} must be a positive multiple of the "
                f"{num_devices} devices it is split over."
            )
    capacity, batch, min_size = (value // num_devices for value in sizes)
    return capacity, batch, min_size


def merge_steps(x: jax.Array) -> jax.Array:
    """[T, B, ...] -> [T * B, ...]: an unroll's steps as items for a replay buffer."""
    return x.reshape((-1, *x.shape[2:]))


def stored_items(step: jax.Array, per_update: int, capacity: int) -> jax.Array:
    """Items in a replay shard after the add of update `step` (counted from 0).

    Every device adds the same count each update, so this is the same on all of
    them, and learning starts on all of them at once.
    """
    return jnp.minimum((step + 1) * per_update, capacity)
