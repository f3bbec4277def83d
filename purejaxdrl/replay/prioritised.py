"""Proportional prioritised replay (Schaul et al., 2016), as used by Ape-X.

"Prioritized Experience Replay", https://arxiv.org/abs/1511.05952; Horgan et
al. (2018), "Distributed Prioritized Experience Replay" (Ape-X),
https://arxiv.org/abs/1803.00933. Item i is drawn with probability
P(i) = p_i^α / Σ_k p_k^α, and the learner corrects the bias with importance
weights w_i = (N P(i))^-β / max_j w_j. The buffer takes β from its caller:
DQN and Ape-X anneal it towards 1, R2D2 keeps it fixed (the paper's 0.6).
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.replay import sum_tree
from purejaxdrl.replay.base import Buffer, Sample
from purejaxdrl.replay.item_shapes import as_items, check_items
from purejaxdrl.replay.ring import (
    RingState,
    check_sizes,
    ring_init,
    ring_slots,
    ring_write,
)
from purejaxdrl.types import PRNGKey, PyTree


class PrioritisedState(NamedTuple):
    """A ring of items with a sum-tree over their priorities.

    Attributes:
      ring: the items and FIFO counters.
      nodes: float32 [2P], the sum-tree over p_i^α (`sum_tree`); slots not yet
        written hold 0 and are never drawn.
      max_priority: float32 [1], the largest priority p seen so far (before the
        exponent): what new items get when added without one.

    """

    ring: RingState
    nodes: jax.Array
    max_priority: jax.Array


def make_prioritised_buffer(
    capacity: int,
    batch_size: int,
    *,
    alpha: float = 0.6,
) -> Buffer:
    """A FIFO transition buffer sampled in proportion to priority^α.

    Sampling is stratified, as in the paper: the total mass is cut into
    `batch_size` equal segments and one item drawn from each, which lowers the
    variance of a batch without changing each draw's probability.

    Args:
      capacity: items held (per device).
      batch_size: items per `sample`.
      alpha: the prioritisation exponent α (0: uniform; the paper's 0.6).

    Returns:
      The Buffer. `add(state, items [n, ...], priorities [n] | None)`: new items
      get the given priorities (Ape-X: the actors' TD errors), or the largest
      priority seen so far. `set_priorities(state, index, priority)` after each
      learner step: priorities must be finite; a signed TD error is taken as
      its magnitude |δ| (a priority of 0 is never drawn). A NaN or an infinite
      priority makes every later draw's probability NaN.

    Raises:
      ValueError: for sizes out of range or alpha < 0; from `add`, at trace
        time, for items that are not `init`'s example with a batch axis; from
        `set_priorities`, for priorities of another shape than their index;
        from `add`, for priorities other than one per item ([n]).

    """
    check_sizes(capacity, batch_size)
    if alpha < 0:
        raise ValueError(f"alpha={alpha} must be >= 0 (0 samples uniformly).")

    def init(example: PyTree) -> PrioritisedState:
        return PrioritisedState(
            ring_init(example, capacity),
            sum_tree.init(capacity),
            jnp.ones((1,), jnp.float32),
        )

    def set_priorities(
        state: PrioritisedState, index: jax.Array, priority: jax.Array
    ) -> PrioritisedState:
        index, priority = jnp.asarray(index), jnp.asarray(priority, jnp.float32)
        check_priority_shape(index, priority)
        # |δ|: a signed TD error's p**α is NaN below 0 and poisoned the whole
        # tree. The identity on the built-in learners' |δ| + ε.
        priority = jnp.abs(priority)
        nodes = sum_tree.set_leaves(state.nodes, index, priority**alpha)
        largest = jnp.maximum(state.max_priority, jnp.max(priority))
        return PrioritisedState(state.ring, nodes, largest)

    def add(
        state: PrioritisedState, items: PyTree, priorities: jax.Array | None = None
    ) -> PrioritisedState:
        items = as_items(state.ring.items, items)
        n = check_items(state.ring.items, items)
        slots = ring_slots(state.ring, n)
        if priorities is None:
            priorities = jnp.broadcast_to(state.max_priority, (n,))
        check_add_priorities(n, priorities)
        state = state._replace(ring=ring_write(state.ring, items, n))
        return set_priorities(state, slots, priorities)

    def sample(state: PrioritisedState, key: PRNGKey) -> Sample:
        stratum = jnp.arange(batch_size) + jax.random.uniform(key, (batch_size,))
        index, priority, total = sum_tree.sample(state.nodes, stratum / batch_size)
        item = jax.tree.map(lambda buf: buf[index], state.ring.items)
        return Sample(item, index, priority / total)

    return Buffer(
        init=init,
        add=add,
        sample=sample,
        capacity=capacity,
        batch_size=batch_size,
        set_priorities=set_priorities,
    )


def check_priority_shape(index: jax.Array, priority: jax.Array) -> None:
    """Raises ValueError (one line) unless `priority` has `index`'s shape.

    A priority [3] for 4 slots failed in JAX's broadcasting, naming neither.
    """
    if priority.shape != index.shape:
        raise ValueError(
            f"set_priorities takes one priority per index: index has shape "
            f"{list(index.shape)}, priority {list(priority.shape)}; give "
            "priorities of index's shape (one per sampled item)."
        )


def check_add_priorities(n: int, priorities: jax.Array) -> None:
    """Raises ValueError (one line) unless `priorities` is [n], one per added item.

    Checked in `add`'s words: `set_priorities` named an index the caller of
    `add` never passed.
    """
    listed = type(priorities) in (list, tuple)  # of tracers, under jit
    shape = jnp.shape(jnp.asarray(priorities)) if listed else np.shape(priorities)
    if shape != (n,):
        raise ValueError(
            f"add takes one priority per item: {n} items, priorities "
            f"{list(shape)}; give priorities [{n}], or none for the largest "
            "seen so far."
        )


def importance_weights(
    probability: jax.Array,
    size: jax.Array,
    beta: float | jax.Array,
    axis_name: str | None = None,
) -> jax.Array:
    """PER's importance weights w_i = (N P(i))^-β / max_j w_j, float32 [B].

    Args:
      probability: P(i) of each sampled item, float32 [B].
      size: N, the number of items in the buffer the batch came from (int or
        int32 []).
      beta: the correction's exponent, the caller's (DQN and Ape-X anneal it
        from β0 to 1 over training; R2D2's is fixed).
      axis_name: when each device samples from its own shard, the mesh axis
        over which the maximum is taken, so every device scales alike. With
        equal shard sizes, N P(i) on a shard is the same as over the union of
        shards with each shard drawing an equal share of the batch.

    """
    w = (jnp.asarray(size, jnp.float32) * probability) ** -beta
    largest = jnp.max(w)
    if axis_name is not None:
        largest = jax.lax.pmax(largest, axis_name)
    return w / largest
