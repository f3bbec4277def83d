"""The Buffer record every replay buffer returns, and what `sample` yields."""

from collections.abc import Callable
from typing import Any, NamedTuple

import jax

from purejaxdrl.types import PRNGKey, PyTree


class Sample(NamedTuple):
    """A sampled batch.

    Attributes:
      item: the stored items, batch-first [batch, ...] (time-major [T, batch, ...]
        for sequence buffers).
      index: int32 [batch], their slots, for `set_priorities`.
      probability: float32 [batch], the probability with which each was drawn.

    """

    item: PyTree
    index: jax.Array
    probability: jax.Array


class Buffer(NamedTuple):
    """A replay buffer as pure functions (flashbax's design); all jittable.

    Attributes:
      init: (example item, unbatched) -> state, empty, with room for `capacity`.
      add: (state, items [n, ...]) -> state; the oldest are overwritten first.
        A prioritised buffer takes optional priorities [n] as a third argument.
      sample: (state, key) -> Sample of `batch_size` items, drawn from those
        stored. From an empty buffer it raises nothing and returns slot 0 (the
        zeros `init` stored) every time, with probability inf (uniform and
        sequence buffers) or NaN (prioritised): sample only once items are
        stored (a learner's `min_replay`).
      set_priorities: (state, index [batch], priority [batch]) -> state, for
        prioritised buffers; None otherwise. Priorities must be finite; a
        negative one (a signed TD error) counts as its magnitude.
      capacity: number of items held (on this device).
      batch_size: items per `sample`.

    There is no `can_sample`: a learner starts sampling once its update
    counter says that `min_replay` items are stored
    (`agents/replay_sizes.py`, `stored_items`), not from the count in the
    buffer's state. On several devices that state is split, one shard
    each, and inside `shard_map` a value read from it differs per device:
    parameters updated under a gate on it would too, which the runner's
    check of varying types refuses, unless the gate were all-reduced on
    every update. The counter is replicated, and every shard stores the
    same number of items per update, so it gives every device the same
    answer.

    """

    init: Callable[[PyTree], Any]
    add: Callable[..., Any]
    sample: Callable[[Any, PRNGKey], Sample]
    capacity: int
    batch_size: int
    set_priorities: Callable[[Any, jax.Array, jax.Array], Any] | None = None


def device_key(key: PRNGKey, axis_name: str | None) -> PRNGKey:
    """`key` made this device's own, where a learner keeps a buffer per device.

    The learner's key is replicated over the devices; sampling each shard with
    it would draw the same slots on every device, so a global batch of B would
    hold only B / devices distinct positions. One device (`axis_name` None)
    keeps `key` as it is.
    """
    if axis_name is None:
        return key
    return jax.random.fold_in(key, jax.lax.axis_index(axis_name))
