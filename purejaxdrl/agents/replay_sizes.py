"""How a learner's replay splits over the devices, and what each update stores."""

from typing import Any

import jax
import jax.numpy as jnp

from purejaxdrl.config import ConfigError


def replay_shard_sizes(
    name: str, config: Any, num_devices: int, per_update: int = 0
) -> tuple[int, int, int]:
    """Per-device (capacity, batch, min_size) of a config's global replay sizes.

    `config` has `buffer_size`, `batch_size` and `min_replay`, over all devices;
    `per_update` is what one update adds to all of them together.

    Raises:
      ValueError: when one does not split evenly over the devices, or the
        buffer holds less than one update adds (it would overwrite the items
        it is adding).

    """
    if config.buffer_size < per_update:
        raise ConfigError(
            f"{name}.buffer_size={config.buffer_size} holds fewer items than the "
            f"{per_update} one update adds (num_envs x unroll_length); raise "
            f"--{name}.buffer-size to at least {per_update}."
        )
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
