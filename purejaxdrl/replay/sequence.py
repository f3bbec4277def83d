"""A buffer of whole trajectories, stored and sampled time-major."""

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.replay.base import Buffer, Sample
from purejaxdrl.replay.item_shapes import as_items, check_items
from purejaxdrl.replay.ring import (
    RingState,
    check_sizes,
    ring_init,
    ring_sample,
    ring_write,
)
from purejaxdrl.types import PRNGKey, PyTree


def _batch_first(tree: PyTree) -> PyTree:
    return jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), tree)


def make_sequence_buffer(
    capacity: int,
    sequence_length: int,
    batch_size: int,
    *,
    with_starts: bool = False,
) -> Buffer:
    """A FIFO buffer of trajectories [T, ...], sampled uniformly.

    What IMPALA with replay needs: an unroll of T steps from B environments is
    added as B sequences, and a sample is a batch of whole sequences, in the
    same time-major layout as a fresh unroll, so a learner treats replayed and
    fresh trajectories alike.

    Args:
      capacity: sequences held (per device).
      sequence_length: T, the steps in each sequence.
      batch_size: sequences per `sample`.
      with_starts: each sequence also keeps a tree of its own (a recurrent
        actor's start state): `init(example, start_example)`, `add(state,
        trajectories, starts [B, ...])`, and `sample` items are pairs
        (trajectories [T, batch_size, ...], starts [batch_size, ...]).

    Returns:
      The Buffer: `init(example)` takes one step of one environment (unbatched);
      `add(state, trajectories [T, B, ...])`; `sample` gives items
      [T, batch_size, ...].

    Raises:
      ValueError: for sizes out of range; from `add`, at trace time, for
        trajectories that are not `init`'s example [T, ...] with a batch axis
        after the time axis, or starts not `start_example` with one first.

    """
    check_sizes(capacity, batch_size, sequence_length=sequence_length)

    def init(example: PyTree, start_example: PyTree = ()) -> RingState:
        step = jax.tree.map(jnp.asarray, example)
        seq = jax.tree.map(
            lambda x: jnp.zeros((sequence_length, *x.shape), x.dtype), step
        )
        if with_starts:
            return ring_init((seq, jax.tree.map(jnp.asarray, start_example)), capacity)
        return ring_init(seq, capacity)

    def add(state: RingState, trajectories: PyTree, starts: PyTree = ()) -> RingState:
        stored = state.items[0] if with_starts else state.items
        trajectories = as_items(stored, trajectories, "trajectories")
        if with_starts:
            starts = as_items(state.items[1], starts, "starts")
        for length in (np.shape(x)[:1] for x in jax.tree.leaves(trajectories)):
            if length and length[0] != sequence_length:
                raise ValueError(
                    f"trajectories of {length[0]} steps added to a buffer of "
                    f"sequence_length={sequence_length}; make them equal."
                )
        # Checked once, here, time-major as given; the ring only writes.
        n = check_items(stored, trajectories, axis=1, what="trajectories", batch="B")
        if not with_starts:
            return ring_write(state, _batch_first(trajectories), n)
        count = check_items(state.items[1], starts, what="starts", batch="B")
        if jax.tree.leaves(state.items[1]) and count != n:
            raise ValueError(
                f"add takes one start per trajectory: trajectories hold B={n}, "
                f"starts {count}; give starts [B, ...]."
            )
        return ring_write(state, (_batch_first(trajectories), starts), n)

    def sample(state: RingState, key: PRNGKey) -> Sample:
        drawn = ring_sample(state, key, batch_size)
        if with_starts:
            steps, starts = drawn.item
            return drawn._replace(item=(_batch_first(steps), starts))
        return drawn._replace(item=_batch_first(drawn.item))

    return Buffer(
        init=init,
        add=add,
        sample=sample,
        capacity=capacity,
        batch_size=batch_size,
    )
