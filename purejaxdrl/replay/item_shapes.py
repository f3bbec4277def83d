"""What a buffer's `add` is given, against what its `init` stored.

`add` writes with `buf.at[slots].set(x)`, which broadcasts: an item whose batch
axis was forgotten (`{"obs": [3]}` into a buffer of `[3]` observations) was
stored as 3 copies of itself, and other mistakes failed deep inside JAX. The
check reads only static shapes and tree structures, at trace time, so it adds
nothing to a compiled program.

`ring.py` wrote with `x.astype(buf.dtype)`, so a float action added to a
buffer made from an int example was truncated (0.7 stored as 0) in silence:
a leaf whose cast loses its kind (float or complex to int or bool, int to
bool) or wraps an int (int32 to uint8) is refused here as a shape is. Lists
are arrays here, as in `rl`'s estimators: a list leaf was walked as a tree of
scalars and refused as another structure.
"""

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.types import PyTree


def as_items(stored: PyTree, items: PyTree, what: str = "items") -> PyTree:
    """`items` with each list (or tuple) where `stored` has a leaf made an array.

    A container the stored items have (an example given to `init` as a list
    of arrays) stays a container; where the trees differ above the leaves,
    `items` is returned as given, for `check_items` to name the difference.

    Raises:
      ValueError: (one line) for a list leaf that is not an array's rows: a
        ragged list is named with its rows' lengths (it was reported as
        another structure, with one leaf path per number).

    """
    tree = jax.tree.structure(stored)
    try:
        parts = tree.flatten_up_to(items)
    except (ValueError, TypeError):
        return items
    paths = [p for p, _ in jax.tree_util.tree_flatten_with_path(stored)[0]]
    parts = [
        _list_array(f"{what}{jax.tree_util.keystr(path)}", x)
        if type(x) in (list, tuple)
        else x
        for path, x in zip(paths, parts, strict=True)
    ]
    return jax.tree.unflatten(tree, parts)


def _list_array(name: str, rows: list | tuple) -> jax.Array:
    """`rows` as an array, or one line naming the leaf and what is wrong."""
    try:
        return jnp.asarray(rows)
    except (ValueError, TypeError) as error:
        lengths = _ragged_lengths(list(rows))
        if lengths is None:
            reason = str(error).splitlines()[0][:120] if str(error) else ""
            raise ValueError(
                f"{name} is a list JAX makes no array of ({reason}); give a list "
                "of numbers of one shape, or an array."
            ) from None
        shown = list(dict.fromkeys(lengths))
        text = ", ".join(shown[:4]) + (", ..." if len(shown) > 4 else "")
        raise ValueError(
            f"{name} is a ragged list (rows of lengths {text}); give rows of one "
            "length."
        ) from None


def _ragged_lengths(rows: list) -> list[str] | None:
    """The rows' lengths at the first depth where they differ (None if none do).

    Stops after 100,000 rows at one depth: this runs only to word a refusal.
    """
    while rows and len(rows) <= 100_000:
        lengths = [_length(row) for row in rows]
        if len(set(lengths)) > 1:
            return lengths
        if lengths[0] == "scalar":
            return None
        rows = [x for row in rows for x in row]
    return None


def _length(row: Any) -> str:
    if type(row) in (list, tuple):
        return str(len(row))
    return str(np.shape(row)[0]) if np.ndim(row) else "scalar"


def check_items(
    stored: PyTree,
    items: PyTree,
    *,
    axis: int = 0,
    what: str = "items",
    batch: str = "n",
) -> int:
    """The batch size of `items`, once its leaves are stored items with a batch axis.

    Each leaf of `items` must be its stored leaf's item shape (the stored
    leaf's shape after its capacity axis) with the batch axis inserted at
    `axis`, and every leaf must hold the same number of items.

    Args:
      stored: the ring's items, every leaf [capacity, *item_shape].
      items: what `add` was given.
      axis: where the batch axis stands in each leaf (1 for time-major
        trajectories [T, B, ...]).
      what: the argument's name, for the message (`items`, `trajectories`).
      batch: the batch axis's name in the documented layout (`n`, `B`).

    Returns:
      The number of items (the leaves' size along `axis`).

    Raises:
      ValueError: (one line, at trace time) naming the leaf, the shape given,
        the shape wanted and the fix, for another tree structure than the
        stored one, a leaf of another shape (`init` given a batch, where
        every leaf looks like it), leaves of different batch sizes, or a
        leaf whose dtype would lose values when stored (`check_dtype`).

    """
    _check_structure(stored, items, what)
    _check_batched_init(stored, items, axis, what, batch)
    count, first = None, None
    flat = jax.tree_util.tree_flatten_with_path(items)[0]
    for (path, x), buf in zip(flat, jax.tree.leaves(stored), strict=True):
        name = f"{what}{jax.tree_util.keystr(path)}"
        n = _leaf_count(name, np.shape(x), buf.shape[1:], axis, batch)
        check_dtype(name, _dtype(x), buf.dtype)
        if count is not None and n != count:
            raise ValueError(
                f"add takes the same number of items in every leaf; {first} "
                f"holds {count} and {name} {n} (along axis {axis}); give every "
                "leaf the same batch size."
            )
        count, first = n, name
    return 0 if count is None else count


# Kinds in the order a cast keeps: bool -> int -> float -> complex. Within the
# int kind a cast must keep every value (`_check_int_range`): an int wraps
# (300 stored as 44 in a uint8 slot), which is worse than a float's rounding.
# Other dtypes (PRNG keys) are not checked.
_KINDS = (jnp.bool_, jnp.integer, jnp.floating, jnp.complexfloating)
_INT = _KINDS.index(jnp.integer)


def _kind(dtype: Any) -> int | None:
    return next((i for i, k in enumerate(_KINDS) if jnp.issubdtype(dtype, k)), None)


def _dtype(x: Any) -> Any:
    return x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype


def check_dtype(name: str, given: Any, stored: Any) -> None:
    """Raises ValueError (one line) where storing `given` as `stored` loses values.

    The rule is explicit, not numpy's casting table: a float (or complex)
    given for an int or bool slot, an int for a bool slot, a complex for a
    float slot are refused, and so is an int for an int slot that cannot
    hold all its values (int32 into uint8 or int16, int8 into uint8), which
    would wrap. Widenings (bool -> int, int -> float, uint8 -> int32) and
    float casts (float16 -> float32, float64 -> float32) are allowed. An int64
    array counts as int32 where JAX does (64-bit types off), as it stores it.
    """
    got, want = _kind(given), _kind(stored)
    if got is None or want is None or got < want:
        return
    if got == want:
        if got == _INT:
            _check_int_range(name, given, stored)
        return
    given, stored = np.dtype(given).name, np.dtype(stored).name
    raise ValueError(
        f"add takes {name} of dtype {stored}, as init's example; got {given}, "
        f"which storing as {stored} would lose information; give init an "
        f"example of dtype {given} to keep it, or convert the items first: "
        f"x.astype({stored})."
    )


def _check_int_range(name: str, given: Any, stored: Any) -> None:
    """Raises ValueError (one line) where `stored` cannot hold every `given` int."""
    given = np.dtype(jax.dtypes.canonicalize_dtype(given))
    stored = np.dtype(stored)
    if np.can_cast(given, stored, "safe"):
        return
    low, high = np.iinfo(stored).min, np.iinfo(stored).max
    raise ValueError(
        f"add takes {name} of dtype {stored.name}, as init's example; got "
        f"{given.name}, whose values outside [{low}, {high}] would wrap when "
        f"stored as {stored.name} (not clip); give init an example of dtype "
        f"{given.name} to keep them, or convert the items first, clipped if "
        f"need be: jnp.clip(x, {low}, {high}).astype({stored.name})."
    )


def _check_batched_init(
    stored: PyTree, items: PyTree, axis: int, what: str, batch: str
) -> None:
    """One line where `init`, not `add`, may have been given a batch.

    Such a buffer stores items [capacity, B, ...], so correct items [n, ...]
    lack an axis in every leaf, and every stored item has the same size B
    where the batch axis goes (`axis`). A leaf of another layout, or a stored
    scalar item, rules it out. So does a single leaf: one observation [3]
    added without its batch axis is the likelier slip there, and its message
    stays `_leaf_count`'s. Where every leaf is exactly its stored item (the
    usual {obs, next_obs} of one shape, added without the batch axis), that
    slip is again the likelier one: the message leads with the batch axis and
    names `init` only as the other possibility.
    """
    if len(jax.tree.leaves(stored)) < 2:
        return
    sizes, unbatched = set(), True
    for x, buf in zip(jax.tree.leaves(items), jax.tree.leaves(stored), strict=True):
        shape, item = np.shape(x), buf.shape[1:]
        if len(shape) != len(item) or len(item) <= axis:
            return
        if shape[:axis] + shape[axis + 1 :] != item[:axis] + item[axis + 1 :]:
            return
        sizes.add(item[axis])
        unbatched = unbatched and shape == item
    if len(sizes) != 1:
        return
    (size,) = sizes
    path, x = jax.tree_util.tree_leaves_with_path(items)[0]
    name, given = f"{what}{jax.tree_util.keystr(path)}", _shape_text(np.shape(x))
    if unbatched:
        item = np.shape(x)
        want = _shape_text([*item[:axis], batch, *item[axis:]])
        index = ":, " * axis + "None"
        raise ValueError(
            f"add takes {name} of shape {want}; got {given} (add a batch axis: "
            f"x[{index}]; or, if init was given a batch of {size}, give init "
            "one item: x[0] of each leaf)."
        )
    raise ValueError(
        f"add takes {name} with one axis more; got {given}: init was likely "
        f"given a batch of {size} (every leaf it stores has an extra axis of "
        f"{size}); give init one item (x[0] of each leaf)."
    )


def _check_structure(stored: PyTree, items: PyTree, what: str) -> None:
    """One line where `items` is not a tree of the stored items' structure."""
    want, got = jax.tree.structure(stored), jax.tree.structure(items)
    if want == got:
        return
    paths = [_paths(tree) for tree in (stored, items)]
    missing = [p for p in paths[0] if p not in paths[1]]
    extra = [p for p in paths[1] if p not in paths[0]]
    if missing or extra:
        detail = "; ".join(
            part
            for part in (
                f"missing {', '.join(what + p for p in missing)}" if missing else "",
                f"not stored {', '.join(what + p for p in extra)}" if extra else "",
            )
            if part
        )
    else:  # the same paths in other containers (a list for a tuple, say)
        detail = f"{got} against {want}"
    raise ValueError(
        f"add takes {what} of the structure init's example had; got another "
        f"({detail}); pass the same keys and containers as init's example."
    )


def _paths(tree: PyTree) -> list[str]:
    return [
        jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_leaves_with_path(tree)
    ]


def _leaf_count(
    name: str, shape: tuple[int, ...], item: tuple[int, ...], axis: int, batch: str
) -> int:
    """The leaf's batch size, where `shape` is `item` with a batch axis at `axis`."""
    if len(shape) == len(item) + 1 and shape[:axis] + shape[axis + 1 :] == item:
        return shape[axis]
    want = _shape_text([*item[:axis], batch, *item[axis:]])
    if shape == item:
        index = ":, " * axis + "None"
        fix = f"add a batch axis: x[{index}]"
    else:
        fix = f"each item is {_shape_text(item)}, as init's example"
    raise ValueError(
        f"add takes {name} of shape {want}; got {_shape_text(shape)} ({fix})."
    )


def _shape_text(shape: Any) -> str:
    return f"[{', '.join(str(d) for d in shape)}]"
