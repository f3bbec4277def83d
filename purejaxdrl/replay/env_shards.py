"""One replay shard per environment: draws that do not depend on the devices.

A learner whose batch is drawn from one buffer per device draws different items
on 1 and on 8 devices. Here every environment's items go to a shard of their
own (a buffer of any kind, vmapped), and each shard draws its share of the
batch with a key derived from the environment's global index: a device holds
the shards of its environments, and the union of the draws is the same
whatever the device count. Prioritised shards prioritise within an
environment's own items.
"""

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from purejaxdrl.replay.base import Buffer, Sample
from purejaxdrl.replay.item_shapes import as_items
from purejaxdrl.types import PRNGKey, PyTree


class EnvShards(NamedTuple):
    """A buffer of per-environment shards, as pure functions (all jittable).

    Attributes:
      init: (example item, unbatched) -> state, leaves [E, ...] for the E
        environments of this device.
      add: (state, items [E, ...]) -> state: one item per environment.
      sample: (state, key, env_ids int32 [E]) -> Sample, items [E * b, ...]
        (b = `shard.batch_size`, environment-major), index [E, b],
        probability [E, b] within each shard.
      set_priorities: (state, index [E, b], priority [E, b]) -> state, for
        prioritised shards.
      size: state -> int32 [], items in each shard (all hold the same count).
      shard: the per-environment buffer.

    """

    init: Any
    add: Any
    sample: Any
    set_priorities: Any
    size: Any
    shard: Buffer


def make_env_shards(shard: Buffer, num_envs: int) -> EnvShards:
    """`shard` once per environment of this device.

    Args:
      shard: the buffer each environment's items go to (uniform or
        prioritised), with its per-environment capacity and batch share.
      num_envs: E, the environments on this device.

    Returns:
      The EnvShards functions.

    """

    def init(example: PyTree) -> Any:
        one = shard.init(example)
        return jax.tree.map(lambda x: jnp.broadcast_to(x, (num_envs, *x.shape)), one)

    def add(state: Any, items: PyTree) -> Any:
        # List leaves as arrays here, as a shard's add would: x[:, None] walked
        # a list as a tree of scalars and failed indexing them.
        stored = getattr(getattr(state, "ring", state), "items", None)
        items = items if stored is None else as_items(stored, items)
        one_each = jax.tree.map(lambda x: x[:, None], items)
        return jax.vmap(shard.add)(state, one_each)

    def sample(state: Any, key: PRNGKey, env_ids: jax.Array) -> Sample:
        keys = jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, env_ids)
        drawn = jax.vmap(shard.sample)(state, keys)
        item = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), drawn.item)
        return drawn._replace(item=item)

    def set_priorities(state: Any, index: jax.Array, priority: jax.Array) -> Any:
        return jax.vmap(shard.set_priorities)(state, index, priority)

    def size(state: Any) -> jax.Array:
        ring = getattr(state, "ring", state)
        return ring.size[0, 0]

    return EnvShards(init, add, sample, set_priorities, size, shard)
