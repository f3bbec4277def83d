"""An exact sum-tree over float32 priorities: O(log N) updates and sampling.

The tree is a flat array `nodes` [2P] (P = capacity rounded up to a power of
two): node 1 is the root, node i has children 2i and 2i + 1, leaf j is node
P + j. Updates write the leaves, then recompute each ancestor as the sum of
its two children, level by level. Unlike trees that add a delta to every
ancestor (a float error that accumulates with every update), every node is
always exactly the float32 sum of its children: after any number of updates
the tree is bit for bit the tree built from scratch from its leaves.
"""

import jax
import jax.numpy as jnp


def tree_size(capacity: int) -> int:
    """P: the number of leaves, the smallest power of two >= capacity."""
    return 1 << max(capacity - 1, 0).bit_length()


def init(capacity: int) -> jax.Array:
    """An all-zero tree, nodes float32 [2P]."""
    return jnp.zeros((2 * tree_size(capacity),), jnp.float32)


def total(nodes: jax.Array) -> jax.Array:
    """The sum of all leaves (the root), float32 []."""
    return nodes[1]


def leaves(nodes: jax.Array, index: jax.Array) -> jax.Array:
    """The values of leaves `index` (int32 [B]): float32 [B]."""
    return nodes[nodes.shape[0] // 2 + index]


def set_leaves(nodes: jax.Array, index: jax.Array, values: jax.Array) -> jax.Array:
    """Sets leaves `index` [B] to `values` [B] and recomputes their ancestors.

    log2(P) rounds of B-wide gathers and scatters. A repeated index keeps one of
    its values; the ancestors agree with whichever it keeps.
    """
    size = nodes.shape[0] // 2
    node = size + index
    nodes = nodes.at[node].set(values.astype(nodes.dtype))
    for _ in range(size.bit_length() - 1):  # static depth: unrolled at trace time
        node = node // 2
        # Rows of `pairs` are siblings (2k, 2k + 1): one gather per level.
        pairs = nodes.reshape(-1, 2)
        nodes = nodes.at[node].set(pairs[node, 0] + pairs[node, 1])
    return nodes


def build(values: jax.Array) -> jax.Array:
    """The tree whose leaves are `values` [capacity], built bottom-up."""
    size = tree_size(values.shape[0])
    level = jnp.zeros((size,), jnp.float32).at[: values.shape[0]].set(values)
    levels = [level]
    while level.shape[0] > 1:
        level = level[0::2] + level[1::2]
        levels.append(level)
    # nodes[1] is the root, then each level left to right; nodes[0] unused.
    return jnp.concatenate([jnp.zeros((1,), jnp.float32), *levels[::-1]])


def find(nodes: jax.Array, mass: jax.Array, count: jax.Array) -> jax.Array:
    """The leaves whose cumulative-sum interval holds `mass` [B]: int32 [B].

    `mass` in [0, total): walks from the root, going right when the mass is at
    least the left child's sum (one gather per level). Leaves from `count` on
    must be 0 (not yet written), and the others positive: a mass that float
    rounding carries past the last positive leaf is given that leaf.
    """
    size = nodes.shape[0] // 2

    def down(_: int, node: tuple) -> tuple:
        node, mass = node
        left = nodes[2 * node]
        right = mass >= left
        return 2 * node + right.astype(jnp.int32), jnp.where(right, mass - left, mass)

    # A rolled loop: unrolled, XLA's fusion recomputes the walk (2x slower).
    start = (jnp.ones_like(mass, jnp.int32), mass)  # like mass: varying where it varies
    node, _ = jax.lax.fori_loop(0, size.bit_length() - 1, down, start)
    return jnp.minimum(node - size, count - 1)
