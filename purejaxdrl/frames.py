"""Whose code a frame runs: purejaxdrl's, Python's, a library's or the user's own.

Three places tell a user's code from the rest by a frame's file, and must
agree: the CLI shows a ValueError as one line only where purejaxdrl's own
check raised it (`cli.raised_here`), a warning points at the user's line
(`setup_warnings.user_stacklevel`), and an error inside a user's environment names
their file and line (`env/user_frames.py`).
"""

import functools
import os
import sys
import sysconfig
from pathlib import Path
from typing import Literal

Owner = Literal["purejaxdrl", "python", "library", "user"]

_PACKAGE = Path(__file__).resolve().parent


@functools.cache
def _roots(kinds: tuple[str, ...]) -> frozenset[Path]:
    return frozenset(Path(sysconfig.get_paths()[k]).resolve() for k in kinds)


def _libraries() -> frozenset[Path]:
    """Installed packages' folders, and JAX's wherever it is (a source checkout)."""
    roots = _roots(("purelib", "platlib"))
    jax = sys.modules.get("jax")  # never imported: none of its frames can be here
    if jax is not None and getattr(jax, "__file__", None):
        roots |= {Path(jax.__file__).resolve().parent}
    return roots


@functools.lru_cache(maxsize=4096)
def owner(filename: str) -> Owner:
    """Whose code the file `filename` (a frame's `co_filename`) is.

    Args:
      filename: a code object's file name.

    Returns:
      "purejaxdrl" for this package's files; "library" for an installed
      package's (site-packages or dist-packages) and JAX's; "python" for the
      standard library's and for names that are no file (`<frozen ...>`,
      `<string>`, a compiled extension's relative `numpy/random/_generator.pyx`);
      "user" for every other file: the user's own code.

    """
    if not os.path.isabs(filename):
        return "python"
    path = Path(filename).resolve()
    parents = set(path.parents)
    if _PACKAGE in parents:
        return "purejaxdrl"
    # The standard library's folder holds site-packages: test for a library first.
    installed = {"site-packages", "dist-packages"}.intersection(path.parts)
    if installed or _libraries().intersection(parents):
        return "library"
    if _roots(("stdlib", "platstdlib")).intersection(parents):
        return "python"
    return "user"
