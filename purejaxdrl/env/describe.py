"""How the contract check names what a user's environment made or returned.

`float32[2]` for an array, `(float32[2], (int32[],))` for a pytree of them,
`key<fry>[]` for a typed key, and a foreign spec with its library's name: the
words of `contract`'s one-line messages.
"""

from typing import Any

import jax
import jax.numpy as jnp

from purejaxdrl.types import TimeStep


def structure(tree: Any, limit: int = 120) -> str:
    """`tree`'s types and shapes, as in `(float32[2], (int32[2], int32[]))`."""

    def text(x: Any) -> str:
        if isinstance(x, TimeStep):
            return "TimeStep"
        if isinstance(x, list | tuple):
            inner = ", ".join(text(y) for y in x)
            return f"({inner}{',' if len(x) == 1 else ''})"
        if isinstance(x, dict):
            return "{" + ", ".join(f"{k!r}: {text(v)}" for k, v in x.items()) + "}"
        return typed(x)

    out = text(tree)
    return f"{out[:limit]}..." if len(out) > limit else out


def named(spec: Any) -> str:
    """`spec` and, where a library's not purejaxdrl's, whose (gymnax's Discrete).

    A builtin (a tuple, an int, None) is its repr alone: `(4,)`.
    """
    kind = type(spec)
    if kind.__module__.startswith(("purejaxdrl", "builtins")):
        return repr(spec)
    return f"{spec!r} (a {kind.__module__}.{kind.__qualname__})"


def dtype_name(dtype: Any) -> str:
    """`float32`, or a typed key's `key<fry>` (which `jnp.dtype` refuses)."""
    if jax.dtypes.issubdtype(dtype, jax.dtypes.extended):
        return str(dtype)
    return jnp.dtype(dtype).name


def typed(x: Any) -> str:
    """`x`'s dtype and shape (`float32[1, 1]`), or else its type's name."""
    if hasattr(x, "dtype") and hasattr(x, "shape"):
        return f"{dtype_name(x.dtype)}{list(x.shape)}"
    return type(x).__name__
