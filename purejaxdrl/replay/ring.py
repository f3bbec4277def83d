"""A FIFO ring of items, and the uniform replay buffer built on it."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.replay.base import Buffer, Sample
from purejaxdrl.replay.item_shapes import as_items, check_items
from purejaxdrl.types import PRNGKey, PyTree


class RingState(NamedTuple):
    """Fixed-size storage written in a circle.

    Attributes:
      items: the stored pytree, every leaf [capacity, ...].
      position: int32 [1], the slot the next item goes to.
      size: int32 [1], the number of slots written (at most capacity).

    The counters have shape [1], not [], so that every leaf of the state splits
    along its first axis: on D devices the runner holds D rings side by side
    (items [D * capacity, ...], counters [D]), one per device.

    """

    items: PyTree
    position: jax.Array
    size: jax.Array


def check_sizes(capacity: int, batch_size: int, **more: int) -> None:
    """Raises ValueError (one line) unless each size is an int >= 1.

    A float capacity (100.0) was accepted here and failed in `init`, inside
    JAX ("Shapes must be 1D sequences of concrete values of integer type").

    Args:
      capacity: items held.
      batch_size: items per `sample`.
      **more: other sizes by name (a sequence buffer's `sequence_length`).

    """
    for name, size in {"capacity": capacity, "batch_size": batch_size, **more}.items():
        if isinstance(size, bool) or not isinstance(size, int | np.integer):
            whole = isinstance(size, float) and size.is_integer()
            fix = f"pass {name}={int(size)}" if whole else "pass a whole number"
            raise ValueError(f"{name}={size!r} must be an int (a count); {fix}.")
        if size < 1:
            raise ValueError(f"{name}={size} must be >= 1.")


def ring_init(example: PyTree, capacity: int) -> RingState:
    """An empty ring for items shaped like `example` (one item, unbatched)."""
    items = jax.tree.map(
        lambda x: jnp.zeros((capacity, *jnp.shape(x)), jnp.asarray(x).dtype), example
    )
    # Two arrays, not one twice: a donated state must not alias its leaves.
    return RingState(items, jnp.zeros((1,), jnp.int32), jnp.zeros((1,), jnp.int32))


def ring_slots(state: RingState, n: int) -> jax.Array:
    """The slots (int32 [n]) the next `n` items will be written to."""
    capacity = jax.tree.leaves(state.items)[0].shape[0]
    return (state.position[0] + jnp.arange(n, dtype=jnp.int32)) % capacity


def ring_add(state: RingState, batch: PyTree) -> RingState:
    """The uniform buffer's `add`: checks `batch` (leaves [n, ...]), then writes it.

    Raises:
      ValueError: (at trace time) when `batch` is not the stored items with a
        batch axis, or of a dtype that storing would lose values of
        (`item_shapes.check_items`; list leaves are arrays), or n exceeds the
        capacity (`ring_write`).

    """
    batch = as_items(state.items, batch)
    return ring_write(state, batch, check_items(state.items, batch))


def ring_write(state: RingState, batch: PyTree, n: int) -> RingState:
    """Writes `n` checked items (leaves [n, ...]) over the oldest, after the newest.

    Each public `add` checks its own arguments once (`check_items`, in its own
    words) and writes through here, so the item rule has one call site per
    add path.

    Raises:
      ValueError: (at trace time) when n exceeds the capacity.

    """
    capacity = jax.tree.leaves(state.items)[0].shape[0]
    if n > capacity:
        raise ValueError(
            f"adding {n} items to a buffer of capacity {capacity} per device "
            "would overwrite part of the batch itself; raise the capacity."
        )
    slots = ring_slots(state, n)
    items = jax.tree.map(
        lambda buf, x: buf.at[slots].set(x.astype(buf.dtype)), state.items, batch
    )
    return RingState(
        items,
        (state.position + n) % capacity,
        jnp.minimum(state.size + n, capacity),
    )


def ring_sample(state: RingState, key: PRNGKey, batch_size: int) -> Sample:
    """`batch_size` stored items drawn uniformly with replacement, batch-first."""
    size = state.size[0]
    index = jax.random.randint(key, (batch_size,), 0, jnp.maximum(size, 1))
    item = jax.tree.map(lambda buf: buf[index], state.items)
    probability = jnp.ones((batch_size,), jnp.float32) / size
    return Sample(item, index, probability)


def make_uniform_buffer(capacity: int, batch_size: int) -> Buffer:
    """A FIFO transition buffer sampled uniformly with replacement.

    Args:
      capacity: items held (per device); the oldest are overwritten first.
      batch_size: items per `sample`.

    Returns:
      The Buffer; its state is a `RingState`.

    Raises:
      ValueError: for sizes out of range; from `add`, at trace time, for items
        that are not `init`'s example with a batch axis (`ring_add`).

    """
    check_sizes(capacity, batch_size)
    return Buffer(
        init=lambda example: ring_init(example, capacity),
        add=ring_add,
        sample=lambda state, key: ring_sample(state, key, batch_size),
        capacity=capacity,
        batch_size=batch_size,
    )
