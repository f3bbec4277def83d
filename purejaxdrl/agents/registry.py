"""The algorithms: one record per algorithm module, found by name.

Adding an algorithm is one module under `agents/` that defines its `ALGORITHM`
record (see `agents.base.Algorithm`) and one line in `_ALGORITHMS` below; the
config, command line, sweeps and runners learn of it from here.
"""

from typing import Any

import jax

from purejaxdrl.agents import a2c, apex, dqn, impala, ppo, r2d2, sac
from purejaxdrl.agents.base import DEFAULT_SHAPE, Agent, Algorithm, RunShape
from purejaxdrl.config import ConfigError
from purejaxdrl.networks import Network

_ALGORITHMS: dict[str, Algorithm] = {
    record.name: record
    for record in (
        ppo.ALGORITHM,
        impala.ALGORITHM,
        a2c.ALGORITHM,
        dqn.ALGORITHM,
        apex.ALGORITHM,
        r2d2.ALGORITHM,
        sac.ALGORITHM,
    )
}


def algorithms() -> tuple[Algorithm, ...]:
    """Every registered algorithm's record, in registration order."""
    return tuple(_ALGORITHMS.values())


def names() -> tuple[str, ...]:
    """The registered algorithms' names (`--algo` values)."""
    return tuple(_ALGORITHMS)


def algorithm(name: str) -> Algorithm:
    """The record of the algorithm called `name`.

    Raises:
      ConfigError: for an unknown name, listing the known ones.

    """
    if name not in _ALGORITHMS:
        raise ConfigError(
            f"algo={name!r} is not a known algorithm; use one of {names()}."
        )
    return _ALGORITHMS[name]


def make_agent(
    algo: str,
    algo_config: Any,
    network: Network | Any,
    obs_example: jax.Array,
    *,
    shape: RunShape = DEFAULT_SHAPE,
    num_updates: int,
    axis_name: str | None,
) -> Agent:
    """Builds the agent of the registered algorithm `algo` (`names()`).

    The other arguments are its factory's (`base.AgentFactory`).

    Raises:
      ConfigError: for an unknown algorithm, a config of the wrong type, or a
        value out of range.

    """
    record = algorithm(algo)
    if not isinstance(algo_config, record.config_type):
        raise ConfigError(
            f"algo={algo!r} takes a config of type {record.config_type.__name__}, "
            f"got {type(algo_config).__name__}; pass the TrainConfig's {algo!r} "
            "field."
        )
    return record.make_agent(
        algo_config,
        network,
        obs_example,
        shape=shape,
        num_updates=num_updates,
        axis_name=axis_name,
    )
