"""What a buffer's `add` is given, against what its `init` stored.

`add` writes with `buf.at[slots].set(x)`, which broadcasts: an item whose batch
axis was forgotten (`{"obs": [3]}` into a buffer of `[3]` observations) was
stored as 3 copies of itself, and other mistakes failed deep inside JAX. The
check reads only static shapes and tree structures, at trace time, so it adds
nothing to a compiled program.
"""

from typing import Any

import jax
import numpy as np

from purejaxdrl.types import PyTree


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
        stored one, a leaf of another shape, or leaves of different batch
        sizes.

    """
    _check_structure(stored, items, what)
    count, first = None, None
    flat = jax.tree_util.tree_flatten_with_path(items)[0]
    for (path, x), buf in zip(flat, jax.tree.leaves(stored), strict=True):
        name = f"{what}{jax.tree_util.keystr(path)}"
        n = _leaf_count(name, np.shape(x), buf.shape[1:], axis, batch)
        if count is not None and n != count:
            raise ValueError(
                f"add takes the same number of items in every leaf; {first} "
                f"holds {count} and {name} {n} (along axis {axis}); give every "
                "leaf the same batch size."
            )
        count, first = n, name
    return 0 if count is None else count


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
    else:  # the same paths in other containers (a tuple for a NamedTuple, say)
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
