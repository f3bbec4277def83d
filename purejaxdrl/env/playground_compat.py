"""Playground's calls of a JAX keyword that JAX has since removed.

MuJoCo Playground's latest release (0.2.0) computes the cube's orientation
error in LeapCubeReorient and PandaRobotiqPushCube with
`jp.clip(x, a_max=1.0)`. JAX renamed `clip`'s `a_min` / `a_max` to `min` /
`max` and then removed the old names, so on current JAX both tasks fail at
their first step with `TypeError: clip() got an unexpected keyword argument
'a_max'`. Playground's main branch already says `max=`; until a release
carries that, `patch_removed_keywords` gives those two modules a `jp` whose
`clip` takes both spellings. `jax.numpy` itself is left as it is.
"""

import importlib
import inspect
from typing import Any

import jax
import jax.numpy as jnp

# Playground's modules that call `jp.clip` with `a_min` / `a_max`
# (tests/env/test_playground_compat.py scans the package for others).
MODULES = (
    "mujoco_playground._src.manipulation.leap_hand.reorient",
    "mujoco_playground._src.manipulation.franka_emika_panda_robotiq.push_cube",
)


def clip_takes_old_keywords() -> bool:
    """Whether this JAX's `jnp.clip` still accepts `a_min` / `a_max`."""
    return "a_max" in inspect.signature(jnp.clip).parameters


def _clip(
    x: Any,
    min: Any = None,  # noqa: A002  (jnp.clip's own names)
    max: Any = None,  # noqa: A002
    *,
    a_min: Any = None,
    a_max: Any = None,
) -> jax.Array:
    """`jnp.clip` that also takes the removed `a_min` / `a_max` keywords."""
    return jnp.clip(
        x, min=a_min if min is None else min, max=a_max if max is None else max
    )


class NumpyWithOldClip:
    """`jax.numpy`, but for a `clip` that takes the old keywords too."""

    clip = staticmethod(_clip)

    def __getattr__(self, name: str) -> Any:
        return getattr(jnp, name)


def patch_removed_keywords() -> list[str]:
    """Gives each of `MODULES` a `jp` whose `clip` takes `a_min` / `a_max`.

    A no-op on a JAX that still takes them, and for a module this Playground
    does not have (a later release may move or fix it).

    Returns:
      The modules patched by this call.

    """
    if clip_takes_old_keywords():
        return []
    patched = []
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if getattr(module, "jp", None) is jnp:
            module.jp = NumpyWithOldClip()
            patched.append(name)
    return patched
