"""An exact 16-ary sum-tree over float32 priorities: O(log N) updates and draws.

The tree is one flat array `nodes` laid out as a heap after 15 unused
slots: node i (at `nodes[15 + i]`) has children 16i + 1 ... 16i + 16, which
fill row i + 1 of `nodes.reshape(-1, 16)`, so reading a node's children is
reading one row (one cache line). Node 0 is the root, level d starts at node
(16^d - 1) / 15, and the leaves (level D, the smallest D with 16^D >=
capacity) come last, rounded up to a whole row; nodes of a level past its
last used row are never read and stay 0.

Sixteen children per node, not two: a batch's update or draw is one gather of
[batch, 16] values per level, and a million leaves are 5 levels, not 20, so
each update or draw is a quarter of the dependent steps (each a kernel of its
own on a CPU). Updates write the leaves, then recompute each ancestor as the
sum of its children, level by level, in a fixed pairwise order. Unlike trees
that add a delta to every ancestor (a float error that accumulates with every
update), every node is always exactly that sum of its children: after any
number of updates the tree is bit for bit the tree built from its leaves.
"""

import jax
import jax.numpy as jnp

BRANCH = 16  # children per node; a power of two (`_sum` adds pairwise)
_SKIP = BRANCH - 1  # unused slots before the root: rows of siblings align


def _offset(level: int) -> int:
    """Where `level` starts in the flat array: (16^level - 1) / 15."""
    return (BRANCH**level - 1) // (BRANCH - 1)


def _round_up(n: int) -> int:
    return -(-n // BRANCH) * BRANCH


def depth(capacity: int) -> int:
    """D, the level of the leaves: the smallest D with 16^D >= capacity."""
    d = 0
    while BRANCH**d < capacity:
        d += 1
    return d


def _depth_of(nodes: jax.Array) -> int:
    # The D whose layout has this length: offset(D) < length <= offset(D + 1).
    length, d = nodes.shape[0] - _SKIP, 0
    while _offset(d + 1) < length:
        d += 1
    return d


def init(capacity: int) -> jax.Array:
    """An all-zero tree with `capacity` leaves, float32 [nodes]."""
    d = depth(capacity)
    leaves = _round_up(capacity) if d else 1
    return jnp.zeros((_SKIP + _offset(d) + leaves,), jnp.float32)


def total(nodes: jax.Array) -> jax.Array:
    """The sum of all leaves (the root), float32 []."""
    return nodes[_SKIP]


def leaves(nodes: jax.Array, index: jax.Array) -> jax.Array:
    """The values of leaves `index` (int32 [B]): float32 [B]."""
    return nodes[_SKIP + _offset(_depth_of(nodes)) + index]


def _sum(children: jax.Array) -> jax.Array:
    """[..., 16] -> [...]: pairwise, in the same order wherever it is used."""
    while children.shape[-1] > 1:
        children = children[..., 0::2] + children[..., 1::2]
    return children[..., 0]


def _children(nodes: jax.Array, node: jax.Array) -> jax.Array:
    """The children of `node` [B]: float32 [B, 16], one row each."""
    return nodes.reshape(-1, BRANCH)[node + 1]


def _descend(
    children: jax.Array, mass: jax.Array
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Which of 16 children [B, 16] holds each mass [B]: (pick, rest, value).

    A binary walk down the pairwise sums `_sum` forms (so every comparison is
    with the exact sum the tree holds), going right when the mass is at least
    the left half's sum and the right half's is positive.
    """
    sums = [children]
    while sums[-1].shape[-1] > 1:
        sums.append(sums[-1][..., 0::2] + sums[-1][..., 1::2])
    pick = jnp.zeros(mass.shape, jnp.int32)
    value = sums[-1][..., 0]
    for level in reversed(sums[:-1]):  # widths 2, 4, 8, 16
        # 2 * pick + 1 < width by construction: promised in bounds, XLA drops
        # the clamp and its gather is a plain load (draws 20% faster on CPU).
        left = jnp.take_along_axis(
            level, 2 * pick[..., None], axis=-1, mode="promise_in_bounds"
        )[..., 0]
        right = jnp.take_along_axis(
            level, 2 * pick[..., None] + 1, axis=-1, mode="promise_in_bounds"
        )[..., 0]
        go = (mass >= left) & (right > 0)
        mass = jnp.where(go, mass - left, mass)
        value = jnp.where(go, right, left)
        pick = 2 * pick + go.astype(jnp.int32)
    return pick, mass, value


def set_leaves(nodes: jax.Array, index: jax.Array, values: jax.Array) -> jax.Array:
    """Sets leaves `index` [B] to `values` [B] and recomputes their ancestors.

    D rounds, one per level: a [B, 16] gather and a B-wide scatter, or, at
    the top levels, where the level has no more children than those B rows,
    the whole level recomputed from its children in one contiguous pass. A
    repeated index keeps one of its values; the ancestors agree with
    whichever it keeps.
    """
    d = _depth_of(nodes)
    node = _offset(d) + index
    nodes = nodes.at[_SKIP + node].set(values.astype(nodes.dtype))
    for level in reversed(range(d)):  # static depth: unrolled at trace time
        node = (node - 1) // BRANCH
        if BRANCH ** (level + 1) <= BRANCH * index.size:
            # A level with no more children than the batch's gathers would
            # read: recomputed whole, one contiguous pass instead of B gathers.
            # (The leaf level may hold fewer rows than its parents have nodes.)
            start, end = _SKIP + _offset(level), _SKIP + _offset(level + 1)
            rows = nodes[end : end + BRANCH ** (level + 1)].reshape(-1, BRANCH)
            nodes = nodes.at[start : start + rows.shape[0]].set(_sum(rows))
        else:
            nodes = nodes.at[_SKIP + node].set(_sum(_children(nodes, node)))
    return nodes


def build(values: jax.Array) -> jax.Array:
    """The tree whose leaves are `values` [capacity], built bottom-up."""
    capacity = values.shape[0]
    nodes = init(capacity)
    d = depth(capacity)
    start = _SKIP + _offset(d)
    level = jnp.zeros((nodes.shape[0] - start,), jnp.float32)
    level = level.at[:capacity].set(values)
    nodes = nodes.at[start:].set(level)
    for up in reversed(range(d)):
        level = _sum(level.reshape(-1, BRANCH))
        start = _SKIP + _offset(up)
        nodes = nodes.at[start : start + level.shape[0]].set(level)
        level = jnp.pad(level, (0, _round_up(level.shape[0]) - level.shape[0]))
    return nodes


def sample(
    nodes: jax.Array, fraction: jax.Array
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The leaves at `fraction` [B] (each in [0, 1)) of the cumulative mass.

    With mass = fraction x total, the leaf whose cumulative-sum interval holds
    the mass. Within a node's 16 children the walk is binary, down the
    pairwise sums the node is made of (`_descend`), so it compares the mass
    with exact subtree sums, as a binary tree's walk would; it never enters a
    subtree whose sum is 0, so a mass that float rounding carries past the
    last positive leaf ends on that leaf and unwritten leaves are never drawn.

    Every read of the tree is inside one rolled loop. A read left after it
    may be scheduled after the caller's next `set_leaves`, which updates the
    tree in place, and XLA then copies the whole tree at every draw (at 1M
    leaves, twice 8 MB per gradient step: most of Ape-X's learner time).

    Returns:
      (leaves int32 [B], their values float32 [B], the total float32 []).

    """

    def down(level: jax.Array, carry: tuple) -> tuple:
        node, mass, value, total = carry
        # Read again inside: a value only passed through, XLA would read from
        # the tree wherever it is used, after the loop.
        total = jnp.where(level == 0, nodes[_SKIP], total)
        pick, mass, value = _descend(_children(nodes, node), mass)
        return BRANCH * node + 1 + pick, mass, value, total

    total = nodes[_SKIP]
    mass = fraction * total
    leaf = jnp.zeros_like(mass) + total  # a one-leaf tree's leaf is its root
    start = (jnp.zeros_like(mass, jnp.int32), mass, leaf, total)
    d = _depth_of(nodes)
    node, _, value, total = jax.lax.fori_loop(0, d, down, start)
    return node - _offset(d), value, total
