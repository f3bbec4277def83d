"""The one rule for what a player is asked to play: episodes, step cap, seed.

`purejaxdrl eval`, `evaluate_policy` and a run's `Player` (`exp.player`'s
`evaluate` and `render`) refuse the same values with the same line
(`check_play_args`), naming the value as the caller spelt it.
"""

import numbers
from typing import Any

from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways
from purejaxdrl.rng import check_seed

# The compiled episode loop counts steps in int32.
STEP_LIMIT = 2**31


def check_play_args(episodes: Any, max_steps: Any, seed: Any, *, flags: bool) -> None:
    """Refuses what a player cannot play, in one line.

    Counts are integers (numpy's too; not a bool) >= 1, `max_steps` below
    2**31 (the compiled loop counts steps in int32) or None, and `seed` an
    integer key seed (`rng.check_seed`).

    Args:
      episodes: how many episodes.
      max_steps: the cap on an episode's steps, or None for the default.
      seed: the environments' seed.
      flags: name the values as the command line's flags (`--episodes 0`),
        for `eval`; else as the keyword arguments (`episodes=0`).

    Raises:
      ConfigError: naming the value, the rule and a value that passes.

    """

    def said(name: str, value: Any) -> str:
        return f"{_flag(name)} {value}" if flags else f"{name}={value!r}"

    def example(name: str, value: int) -> str:
        return both_ways(_flag(name), name, value)

    for name, value in (("episodes", episodes), ("max_steps", max_steps)):
        if value is None and name == "max_steps":
            continue
        if not _integer(value) or value < 1:
            raise ConfigError(
                f"{said(name, value)} must be an integer >= 1; e.g. "
                f"{example(name, 10)}."
            )
    if max_steps is not None and max_steps >= STEP_LIMIT:
        raise ConfigError(
            f"{said('max_steps', max_steps)} must be <= 2**31-1 (the compiled "
            f"loop counts steps in int32); e.g. {example('max_steps', 100000)}."
        )
    if not _integer(seed):
        raise ConfigError(
            f"{said('seed', seed)} must be an integer in [0, 2**32); e.g. "
            f"{example('seed', 1)}."
        )
    check_seed(seed)


def _flag(name: str) -> str:
    """The eval flag of the keyword `name` (`--max-steps`)."""
    return f"--{name.replace('_', '-')}"


def _integer(value: Any) -> bool:
    """An integer, numpy's too, but not a bool (True would count one)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
