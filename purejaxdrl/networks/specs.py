"""The specs a network factory is given: purejaxdrl's, or one line saying so.

Used alone, a network is a natural first try with a plain shape and an action
count (`make_actor_critic(config, (4,), 2)`), which failed as an
AttributeError on `int.shape`. The factories check their specs first.
"""

from typing import Any

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import Box, Discrete


def check_specs(factory: str, obs_spec: Any, action_spec: Any) -> None:
    """Raises ConfigError unless the specs are purejaxdrl.env's.

    Args:
      factory: the network factory's name, for the message.
      obs_spec: must be a `Box`, or a non-empty dict of them.
      action_spec: must be a `Discrete` or a `Box`.

    Raises:
      ConfigError: (a ValueError; one line) naming the value and the spec to
        pass instead.

    """
    boxes = isinstance(obs_spec, dict) and all(
        isinstance(box, Box) for box in obs_spec.values()
    )
    if not (isinstance(obs_spec, Box) or (boxes and obs_spec)):
        raise ConfigError(
            f"{factory}: obs_spec={obs_spec!r} is not a purejaxdrl.env.Box (or a "
            f"dict of them); pass purejaxdrl.env.Box({_shape(obs_spec)}), the "
            "shape of one observation."
        )
    if not isinstance(action_spec, Discrete | Box):
        one = isinstance(action_spec, tuple | list) and len(action_spec) == 1
        count = action_spec[0] if one else action_spec
        count = count if _count(count) else 2
        raise ConfigError(
            f"{factory}: action_spec={action_spec!r} is not a purejaxdrl.env "
            f"spec; pass purejaxdrl.env.Discrete({count}) for {count} actions, or "
            f"purejaxdrl.env.Box(({count},)) for {count} continuous dimensions."
        )


def _shape(value: Any) -> str:
    """`value` written as a Box's shape, where it reads as one; else `(4,)`."""
    if _count(value):
        return f"({value},)"
    if isinstance(value, tuple | list) and value and all(map(_count, value)):
        return repr(tuple(value))
    return "(4,)"


def _count(value: Any) -> bool:
    """Whether `value` is a Python int >= 1 (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
