"""A runner state as a few arrays, on device: what a checkpoint stores.

orbax spends ~1 ms of CPU per array on top of a fixed ~27 ms, and a runner
state has ~50 small leaves, so a checkpoint packs them: one array per
(sharding, dtype, and leading size for leaves split over `data`). Environment
leaves `[B, ...]` are packed to `[B, K]` and stay sharded over `data`, so a
packed state restores onto any number of devices that divides B; a replay
buffer's leaves (`[capacity, ...]`, `[2P]`, `[devices]`) form groups of their
own leading sizes. Typed keys are stored as their raw data, bools as uint8.
"""

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from purejaxdrl.parallel import DATA_AXIS
from purejaxdrl.types import PyTree


def _is_key(x: Any) -> bool:
    return jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)


def _key_data_shape(x: Any) -> tuple[int, ...]:
    return jax.eval_shape(jax.random.key_data, x).shape


def _storage_dtype(x: Any) -> np.dtype:
    if _is_key(x):
        return np.dtype(np.uint32)  # raw key data
    if x.dtype == jnp.bool_:
        return np.dtype(np.uint8)
    return np.dtype(x.dtype)


class _Slot(NamedTuple):
    group: str
    start: int
    size: int


def _group_name(lead: int | None, dtype: np.dtype) -> str:
    return f"shared_{dtype.name}" if lead is None else f"split{lead}_{dtype.name}"


def _is_sharded(sharding: NamedSharding) -> bool:
    return DATA_AXIS in jax.tree.leaves(tuple(sharding.spec))


def make_packer(
    abstract: PyTree, shardings: PyTree, mesh: Mesh
) -> tuple[Callable[[PyTree], dict[str, jax.Array]], Callable[[dict], PyTree], dict]:
    """Functions that pack a state into a few arrays and back, on device.

    Args:
      abstract: the state's structure, shapes and dtypes (`jax.eval_shape`).
      shardings: a NamedSharding per leaf; leaves sharded over `data` have the
        environment axis first.
      mesh: the mesh the state lives on.

    Returns:
      (pack, unpack, abstract_packed): jitted `pack(state) -> {group: array}`,
      `unpack(packed) -> state` (placed with `shardings`), and the packed
      arrays' ShapeDtypeStructs with their shardings (orbax's restore target).

    """
    leaves, treedef = jax.tree.flatten(abstract)
    leaf_shardings = treedef.flatten_up_to(shardings)
    sizes: dict[str, int] = {}
    dtypes: dict[str, np.dtype] = {}
    leads: dict[str, int] = {}
    slots = []
    for x, sharding in zip(leaves, leaf_shardings, strict=True):
        dtype = _storage_dtype(x)
        shape = _key_data_shape(x) if _is_key(x) else x.shape
        lead = None
        if _is_sharded(sharding):
            lead, shape = shape[0], shape[1:]
        size = int(np.prod(shape, dtype=np.int64))
        group = _group_name(lead, dtype)
        if lead is not None:
            leads[group] = lead
        slots.append(_Slot(group, sizes.get(group, 0), size))
        sizes[group] = sizes.get(group, 0) + size
        dtypes[group] = dtype
    abstract_packed = {}
    for g, n in sizes.items():
        split_g = g in leads
        spec = P(DATA_AXIS) if split_g else P()
        abstract_packed[g] = jax.ShapeDtypeStruct(
            (leads[g], n) if split_g else (n,),
            dtypes[g],
            sharding=NamedSharding(mesh, spec),
        )
    group_sharding = {g: a.sharding for g, a in abstract_packed.items()}

    def pack(state: PyTree) -> dict[str, jax.Array]:
        parts: dict[str, list[jax.Array]] = {g: [] for g in sizes}
        for x, slot in zip(treedef.flatten_up_to(state), slots, strict=True):
            data = jax.random.key_data(x) if _is_key(x) else x
            data = data.astype(abstract_packed[slot.group].dtype)
            if slot.group in leads:
                parts[slot.group].append(data.reshape(data.shape[0], -1))
            else:
                parts[slot.group].append(data.reshape(-1))
        return {g: jnp.concatenate(p, axis=-1) for g, p in parts.items()}

    def unpack(packed: dict[str, jax.Array]) -> PyTree:
        out = []
        for x, slot in zip(leaves, slots, strict=True):
            flat = packed[slot.group][..., slot.start : slot.start + slot.size]
            if _is_key(x):
                # An abstract key has no public accessor for its implementation;
                # its dtype carries it.
                impl = x.dtype._impl
                data = flat.reshape(_key_data_shape(x))
                out.append(jax.random.wrap_key_data(data, impl=impl))
            else:
                out.append(flat.reshape(x.shape).astype(x.dtype))
        return treedef.unflatten(out)

    jit_pack = jax.jit(pack, out_shardings=group_sharding)
    jit_unpack = jax.jit(unpack, out_shardings=shardings)
    return jit_pack, jit_unpack, abstract_packed


def describe(abstract: PyTree) -> list[dict[str, Any]]:
    """Path, shape and dtype of every leaf: the index saved with a checkpoint."""
    return [
        {
            "path": jax.tree_util.keystr(path),
            "shape": list(x.shape),
            "dtype": str(x.dtype),
        }
        for path, x in jax.tree_util.tree_leaves_with_path(abstract)
    ]
