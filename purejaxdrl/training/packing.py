"""A runner state as a few arrays, on device: what a checkpoint stores.

orbax spends ~1 ms of CPU per array on top of a fixed ~27 ms, and a runner
state has ~50 small leaves, so a checkpoint packs them: one array per
(sharding, dtype, and leading sizes of leaves split over mesh axes). Environment
leaves `[B, ...]` are packed to `[B, K]` and stay sharded over `data`, so a
packed state restores onto any number of devices that divides B; a replay
buffer's leaves (`[capacity, ...]`, `[2P]`, `[devices]`) form groups of their
own leading sizes. A sweep's leaves `[R, ...]` (runs over `sweep`) or
`[R, B, ...]` (and environments over `data`) keep those leading axes. Typed
keys are stored as their raw data, bools as uint8. A leaf of size 0 (a
MuJoCo model's absent tendons, `[R, B, 0]`) holds nothing and is in no group:
XLA gives such an output a replicated sharding, so in a sweep split over
`sweep` it alone would make a `shared_*` group of size 0, which orbax refuses
to save; unpacking makes it again.
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


def _split_axes(sharding: NamedSharding) -> tuple[str | None, ...]:
    """The mesh axis each leading dimension is split over, up to the last split.

    None for a dimension before it that is whole: JAX writes a sweep's
    `P('sweep', 'data')` as `P(None, 'data')` where the `sweep` axis has one
    device, and the runs' axis must stay the runs' axis.
    """
    spec = tuple(sharding.spec)
    while spec and spec[-1] is None:
        spec = spec[:-1]
    return spec


def _group_name(
    axes: tuple[str | None, ...], lead: tuple[int, ...], dtype: np.dtype
) -> str:
    if not axes:
        return f"shared_{dtype.name}"
    if axes == (DATA_AXIS,):
        return f"split{lead[0]}_{dtype.name}"
    # A sweep's leaves: runs over `sweep`, and maybe environments over `data`.
    names = "-".join(axis or "whole" for axis in axes)
    return f"{names}{'x'.join(map(str, lead))}_{dtype.name}"


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
    split: dict[str, tuple[tuple[str | None, ...], tuple[int, ...]]] = {}
    slots: list[_Slot | None] = []  # None: a leaf of size 0, in no group
    for x, sharding in zip(leaves, leaf_shardings, strict=True):
        dtype = _storage_dtype(x)
        shape = _key_data_shape(x) if _is_key(x) else x.shape
        if 0 in shape:
            slots.append(None)
            continue
        axes = _split_axes(sharding)
        lead, shape = tuple(shape[: len(axes)]), shape[len(axes) :]
        size = int(np.prod(shape, dtype=np.int64))
        group = _group_name(axes, lead, dtype)
        split[group] = (axes, lead)
        slots.append(_Slot(group, sizes.get(group, 0), size))
        sizes[group] = sizes.get(group, 0) + size
        dtypes[group] = dtype
    abstract_packed = {}
    for g, n in sizes.items():
        axes, lead = split[g]
        abstract_packed[g] = jax.ShapeDtypeStruct(
            (*lead, n), dtypes[g], sharding=NamedSharding(mesh, P(*axes))
        )
    group_sharding = {g: a.sharding for g, a in abstract_packed.items()}

    def pack(state: PyTree) -> dict[str, jax.Array]:
        parts: dict[str, list[jax.Array]] = {g: [] for g in sizes}
        for x, slot in zip(treedef.flatten_up_to(state), slots, strict=True):
            if slot is None:
                continue
            data = jax.random.key_data(x) if _is_key(x) else x
            data = data.astype(abstract_packed[slot.group].dtype)
            lead = split[slot.group][1]
            parts[slot.group].append(data.reshape(*data.shape[: len(lead)], -1))
        return {g: jnp.concatenate(p, axis=-1) for g, p in parts.items()}

    def unpack(packed: dict[str, jax.Array]) -> PyTree:
        out = []
        for x, slot in zip(leaves, slots, strict=True):
            if slot is None:
                flat = jnp.zeros(0, _storage_dtype(x))
            else:
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
