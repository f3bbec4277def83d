"""The spec rule, written once: what observation and action specs purejaxdrl takes.

An observation spec is a `Box` or a non-empty dict of them; an action spec a
`Discrete` or a 1-D `Box` (the heads read `(num_dims,) = spec.shape`). The
environment contract (`contract.check_user_env`) and the network factories
(`networks.heads`) both ask `specs_error`, each adding its own prefix, so they
cannot drift apart. The fix names sizes only where the value shows them: an
int, a tuple of ints, or a foreign space's `.n` or `.shape` (gymnax's and
Gymnasium's `Discrete(n)` and `Box(shape=...)`).
"""

import math
import numbers
from typing import Any

from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.env.describe import named

_ACTIONS_IN = "of actions in [-1, 1]"


def action_bounds(
    env: Any, params: Any
) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """(low, high) per dimension, that a device env maps Box actions in [-1, 1] to.

    gymnax's adapter scales them to its space's bounds (its private
    `_scaled_action_bounds`, found through wrappers); any other environment
    takes actions in [-1, 1] as they are (brax's and Playground's own range,
    and the `Env` contract's): a user environment's own attribute, whatever
    its name, is not read. None for Discrete actions. An exported policy
    records them (`env_low`, `env_high`).

    Raises:
      ValueError: an adapter's bounds that are not a (low, high) pair of
        `n` finite floats each, for an action spec `Box((n,))`.

    """
    spec = env.action_spec(params)
    if not isinstance(spec, Box):
        return None
    (n,) = spec.shape
    bounds = getattr(env, "_scaled_action_bounds", None)
    if bounds is None:
        return (-1.0,) * n, (1.0,) * n
    checked = _bounds_pair(bounds, n)
    if checked is None:
        raise ValueError(
            f"{type(env).__name__}._scaled_action_bounds={bounds!r} is not a "
            f"(low, high) pair of {n} finite floats each, for its action spec "
            f"Box(({n},)): the adapter that sets it must give one."
        )
    return checked


def _bounds_pair(
    bounds: Any, n: int
) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """`bounds` as ((low...), (high...)) of `n` finite floats each, or None."""
    if not isinstance(bounds, tuple | list) or len(bounds) != 2:
        return None
    pair: list[tuple[float, ...]] = []
    for side in bounds:
        if not isinstance(side, tuple | list) or len(side) != n:
            return None
        if not all(isinstance(x, numbers.Real) and math.isfinite(x) for x in side):
            return None
        pair.append(tuple(float(x) for x in side))
    return pair[0], pair[1]


def specs_error(
    observation: Any,
    action: Any,
    *,
    names: tuple[str, str] = ("obs_spec", "action_spec"),
) -> str | None:
    """The first way `observation` and `action` break the spec rule, or None.

    Args:
      observation: the observation spec to check.
      action: the action spec to check.
      names: how the caller calls each, written before `=` and the value
        (a factory's argument names; the contract's `observation_spec(params)`).

    Returns:
      None where both keep the rule; else one sentence naming the value, the
      rule and the spec to use instead, for the caller to prefix with its own
      name (the environment's id, the factory's).

    """
    boxes = isinstance(observation, dict) and all(
        isinstance(box, Box) for box in observation.values()
    )
    if not (isinstance(observation, Box) or (boxes and observation)):
        return (
            f"{names[0]}={named(observation)} is not a purejaxdrl.env.Box or a "
            f"non-empty dict of them; use {_box_fix(observation)}."
        )
    if isinstance(action, Discrete) or (
        isinstance(action, Box) and len(action.shape) == 1
    ):
        return None
    return (
        f"{names[1]}={named(action)} is not a purejaxdrl.env.Discrete or a 1-D "
        f"purejaxdrl.env.Box; use {_action_fix(action)}."
    )


def _box_fix(value: Any) -> str:
    """The Box (or dict of them) that `value` reads as, sized where it shows."""
    if isinstance(value, dict) and value:
        # Named, so that a large dict's odd entry need not be searched for.
        odd = next(key for key, box in value.items() if not isinstance(box, Box))
        return f"a dict of purejaxdrl.env.Box, one per entry ({odd!r} is not one)"
    shape = _shape(value)
    if shape is None:
        return "purejaxdrl.env.Box(shape), the shape of one observation"
    return f"purejaxdrl.env.Box({shape!r}), the shape of one observation"


def _action_fix(value: Any) -> str:
    """The action spec `value` reads as, sized where it shows."""
    if isinstance(value, Box | Discrete):  # ours, with a shape not 1-D
        value = None
    n = getattr(value, "n", None)
    if _count(n) is not None:  # gymnax's or Gymnasium's Discrete(n)
        return f"purejaxdrl.env.Discrete({_count(n)})"
    shape = _shape(getattr(value, "shape", None))
    if shape is not None and len(shape) == 1:  # a foreign Box
        return f"purejaxdrl.env.Box({shape!r}) {_ACTIONS_IN}"
    one = isinstance(value, tuple | list) and len(value) == 1
    count = _count(value[0] if one else value)
    if count is None:
        return (
            "purejaxdrl.env.Discrete(num_actions), or a 1-D purejaxdrl.env.Box("
            f"(num_dims,)) {_ACTIONS_IN}"
        )
    return (
        f"purejaxdrl.env.Discrete({count}) for {count} actions, or "
        f"purejaxdrl.env.Box(({count},)) for {count} dimensions {_ACTIONS_IN}"
    )


def _shape(value: Any) -> tuple[int, ...] | None:
    """`value` as a Box's shape: an int, ints, or a foreign space's `.shape`."""
    if _count(value) is not None:  # before `.shape`: a numpy int has one, ()
        return (_count(value),)
    if not isinstance(value, tuple | list) and hasattr(value, "shape"):
        value = value.shape
    if isinstance(value, tuple | list) and value:
        sizes = tuple(map(_count, value))
        return None if None in sizes else sizes
    return None


def _count(value: Any) -> int | None:
    """`value` as a Python int where it is an integer >= 1 (not a bool)."""
    whole = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    return int(value) if whole and value >= 1 else None
