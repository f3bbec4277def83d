"""PPO's minibatches: the same global ones on any device count.

A device holds a contiguous slice of the run's environments whose size is a
multiple of the number of environment groups G (M with a recurrent core, Me
otherwise), so every block of G consecutive global environments lies on one
device. Each block is dealt into the G groups by a permutation drawn from the
update's key folded with the block's global index: a device draws its own
blocks' permutations, and the global minibatches are the same on 1 or 8
devices, yet which environments share a minibatch changes with the key (every
epoch of every update), as a full shuffle's would.
"""

import math
from collections.abc import Callable

import jax
import jax.numpy as jnp

from purejaxdrl.rng import permutation
from purejaxdrl.types import PRNGKey, PyTree


def env_groups(num_minibatches: int, unroll_length: int) -> int:
    """Me = M / gcd(M, T): the groups of environments each time block is split into.

    M is `num_minibatches`, T `unroll_length` (`minibatch_split`).
    """
    return num_minibatches // math.gcd(num_minibatches, unroll_length)


def block_deal(
    key: PRNGKey, num_envs: int, group_size: int, axis_name: str | None
) -> jax.Array:
    """Deals this device's environments, block by block, into `group_size` groups.

    Block b (global environments b*G to b*G + G - 1) is permuted by its own
    permutation, drawn from `fold_in(key, b)`; this device's first block is
    `axis_index(axis_name)` times its block count (0 without an axis).

    Args:
      key: the same key on every device.
      num_envs: this device's environments, a multiple of G = `group_size`.
      group_size: G.
      axis_name: the mesh axis the environments are split over, or None.

    Returns:
      int32 [num_envs / G, G]: row b's column g is the local index of the
      environment of block b that goes to group g.

    """
    num_blocks = num_envs // group_size
    first = 0 if axis_name is None else jax.lax.axis_index(axis_name) * num_blocks
    blocks = first + jnp.arange(num_blocks)

    def deal(block: jax.Array) -> jax.Array:
        return permutation(jax.random.fold_in(key, block), group_size)

    local = jnp.arange(num_blocks)[:, None] * group_size
    return local + jax.vmap(deal)(blocks)


def minibatch_split(
    shape: tuple[int, int],
    num_minibatches: int,
    *,
    shuffle_groups: bool = True,
    axis_name: str | None = None,
) -> Callable[[PyTree, PRNGKey], PyTree]:
    """Splits `[T, B, ...]` data into minibatches whatever the device count.

    Time steps are shuffled with one permutation shared by all environments (the
    key is the same on every device), then cut into `Mt = gcd(M, T)` blocks; when
    M > Mt, each time block is further split into `Me = M / Mt` groups of
    environments: every block of Me consecutive global environments gives one
    to each group, by a permutation drawn anew for each time block
    (`block_deal`). A device holding a contiguous slice of environments whose
    size Me divides therefore takes exactly its own share of every global
    minibatch: the global minibatches are the same on 1 or 8 devices, so the
    same seed trains the same run. When M divides T (Me = 1) no environment
    is dealt: the split is the time permutation alone.

    Args:
      shape: (T, B), the unroll length and this device's number of environments,
        a multiple of Me (`env_multiple`).
      num_minibatches: M.
      shuffle_groups: deal the environments afresh for each key (what every
        learner does); False puts environment j in group j % Me in every
        split, kept only as the tests' fixed-grouping reference.
      axis_name: the mesh axis the environments are split over (the agent's),
        or None on one device.

    Returns:
      `split(batch, key)`, mapping leaves `[T, B, ...]` to `[M, T*B/M, ...]`.

    """
    t, b = shape
    num_env_groups = env_groups(num_minibatches, t)
    num_time_blocks = num_minibatches // num_env_groups
    regroup = shuffle_groups and num_env_groups > 1

    def split_leaf(x: jax.Array, perm: jax.Array, deal: jax.Array | None):
        rest = x.shape[2:]
        x = x[perm].reshape(num_time_blocks, t // num_time_blocks, b, *rest)
        if deal is not None:  # [time block, B]: each block's own deal
            x = jax.vmap(lambda xs, order: xs[:, order])(x, deal)
        x = x.reshape(
            num_time_blocks, t // num_time_blocks, b // num_env_groups,
            num_env_groups, *rest,
        )  # fmt: skip
        # (time block, env group) index the minibatch.
        x = jnp.moveaxis(x, 3, 1)
        return x.reshape(num_minibatches, -1, *rest)

    def split(batch: PyTree, key: PRNGKey) -> PyTree:
        deal = None
        if regroup:  # Me = 1 keeps the key, and so the split, it always had
            key, key_deal = jax.random.split(key)
            keys = jax.random.split(key_deal, num_time_blocks)
            deal = jax.vmap(
                lambda k: block_deal(k, b, num_env_groups, axis_name).reshape(b)
            )(keys)
        perm = permutation(key, t)
        return jax.tree.map(lambda x: split_leaf(x, perm, deal), batch)

    return split


def sequence_split(
    num_minibatches: int,
    *,
    shuffle_groups: bool = True,
    axis_name: str | None = None,
) -> Callable[[PyTree, PRNGKey], PyTree]:
    """Splits `[T, B]` sequences into M minibatches of whole sequences.

    A recurrent learner re-unrolls each sequence from the core state stored at
    its start, so its minibatches take environments, never shuffled time steps
    (which would break the stored states). Every block of M consecutive global
    environments gives one to each minibatch, by a permutation drawn from the
    key and the block's global index (`block_deal`): the same minibatches
    whatever the device count, when each device holds a contiguous slice of a
    multiple of M environments, and other ones for each key.

    Args:
      num_minibatches: M.
      shuffle_groups: deal the environments afresh for each key (what every
        learner does); False keeps environment j with the environments
        j' = j (mod M) in every split (the minibatches' order is still
        shuffled), kept only as the tests' fixed-grouping reference.
      axis_name: the mesh axis the environments are split over (the agent's),
        or None on one device.

    Returns:
      `split(batch, key)` for a `Batch` (or any record with `core_state`):
      leaves `[T, B, ...]` become `[M, T, B/M, ...]` and the start states
      `[B, ...]` become `[M, B/M, ...]`, the minibatches in an order shuffled
      with `key` (the same key, so order, on every device).

    """
    m = num_minibatches

    def split(batch: PyTree, key: PRNGKey) -> PyTree:
        if shuffle_groups:
            key, key_deal = jax.random.split(key)
        order = permutation(key, m)
        take = None
        if shuffle_groups:
            b = jax.tree.leaves(batch.core_state)[0].shape[0]
            # Minibatch k takes, from each block, the environment dealt to k.
            take = block_deal(key_deal, b, m, axis_name)[:, order].reshape(b)

        def group(x: jax.Array, axis: int) -> jax.Array:
            if take is not None:
                x = jnp.take(x, take, axis=axis)
            x = x.reshape(*x.shape[:axis], x.shape[axis] // m, m, *x.shape[axis + 1 :])
            x = jnp.moveaxis(x, axis + 1, 0)
            return x if take is not None else x[order]

        steps = jax.tree.map(lambda x: group(x, 1), batch._replace(core_state=()))
        starts = jax.tree.map(lambda x: group(x, 0), batch.core_state)
        return steps._replace(core_state=starts)

    return split
