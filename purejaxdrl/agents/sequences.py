"""Minibatches of whole environment sequences, for learners with a recurrent core.

A recurrent learner re-unrolls each sequence from the core state stored at its
start, so its minibatches take environments, never shuffled time steps (which
would break the stored states).
"""

from collections.abc import Callable

import jax
import jax.numpy as jnp

from purejaxdrl.rng import permutation
from purejaxdrl.types import PRNGKey, PyTree

# The key of a batch dict whose leaves are [B, ...], not time-major [T, B, ...].
START_STATE = "core_state"


def group_envs(x: jax.Array, axis: int, num_groups: int) -> jax.Array:
    """Splits the environment axis `axis` (size B) of `x` into `num_groups` groups.

    Environment j goes to group j % num_groups, which makes the groups the same
    whatever the device count: a device holding a contiguous slice of the
    environments, of a size that `num_groups` divides, holds exactly its share
    of every group.

    Returns:
      `x` with a new leading axis of groups and B / num_groups at `axis` + 1.

    """
    b = x.shape[axis]
    x = x.reshape(*x.shape[:axis], b // num_groups, num_groups, *x.shape[axis + 1 :])
    return jnp.moveaxis(x, axis + 1, 0)


def sequence_split(
    num_envs: int, num_minibatches: int
) -> Callable[[dict[str, PyTree], PRNGKey], dict[str, PyTree]]:
    """Splits a batch of `[T, B]` sequences into minibatches of whole sequences.

    Args:
      num_envs: B, this device's environments.
      num_minibatches: M; environment j is in minibatch j % M.

    Returns:
      `split(batch, key)`: time-major leaves `[T, B, ...]` become `[M, T, B/M,
      ...]` and the start states under `batch["core_state"]`, `[B, ...]`,
      become `[M, B/M, ...]`; the minibatches' order is shuffled with `key` (the
      same key, so the same order, on every device).

    Raises:
      ValueError: when B is not a multiple of M.

    """
    if num_envs % num_minibatches:
        raise ValueError(
            f"num_minibatches={num_minibatches} must divide each device's "
            f"{num_envs} environments for a recurrent learner (its minibatches "
            "are whole sequences); make num_envs per device a multiple of it."
        )

    def split(batch: dict[str, PyTree], key: PRNGKey) -> dict[str, PyTree]:
        order = permutation(key, num_minibatches)

        def leaf(axis: int) -> Callable[[jax.Array], jax.Array]:
            return lambda x: group_envs(x, axis, num_minibatches)[order]

        return {
            name: jax.tree.map(leaf(0 if name == START_STATE else 1), value)
            for name, value in batch.items()
        }

    return split
