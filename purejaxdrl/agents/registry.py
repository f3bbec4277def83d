"""The algorithms: one record per algorithm module, found by name.

Adding an algorithm is one module under `agents/` that defines its `ALGORITHM`
record (see `agents.base.Algorithm`), one line in `_ALGORITHMS` below and one
field in `AlgorithmConfigs` (its section of a `TrainConfig`); the config,
command line, sweeps and runners learn of it from here.
"""

import dataclasses
from typing import Any

import jax

from purejaxdrl.agents import a2c, apex, dqn, impala, ppo, pqn, r2d2, sac
from purejaxdrl.agents.a2c import A2CConfig
from purejaxdrl.agents.base import Agent, Algorithm, RunShape
from purejaxdrl.agents.dqn_config import DQNConfig
from purejaxdrl.agents.impala import IMPALAConfig
from purejaxdrl.agents.ppo import PPOConfig
from purejaxdrl.agents.pqn import PQNConfig
from purejaxdrl.agents.r2d2 import R2D2Config
from purejaxdrl.agents.sac import SACConfig
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
        pqn.ALGORITHM,
    )
}


def _section(name: str) -> Any:
    """A field whose default is algorithm `name`'s `default_config()`."""
    return dataclasses.field(default_factory=_ALGORITHMS[name].default_config)


@dataclasses.dataclass(frozen=True, kw_only=True)
class AlgorithmConfigs:
    """One hyper-parameter section per registered algorithm, named after it.

    `training.TrainConfig` inherits these fields, so editors and type checkers
    see `config.ppo` as a `PPOConfig`; a run reads the section its `algo`
    names (`TrainConfig.algo_config`) and leaves the others at their defaults.
    Written out, one field per entry of `_ALGORITHMS`, in the same order (a
    test checks they agree), each defaulting to its record's `default_config()`.

    Attributes:
      ppo: PPO's hyper-parameters, read when algo is ppo.
      impala: IMPALA's hyper-parameters, read when algo is impala.
      a2c: A2C's hyper-parameters, read when algo is a2c.
      dqn: DQN's hyper-parameters, read when algo is dqn.
      apex: Ape-X's hyper-parameters (DQN's config with Ape-X's defaults),
        read when algo is apex.
      r2d2: R2D2's hyper-parameters, read when algo is r2d2.
      sac: SAC's hyper-parameters, read when algo is sac.
      pqn: PQN's hyper-parameters, read when algo is pqn.

    """

    ppo: PPOConfig = _section("ppo")
    impala: IMPALAConfig = _section("impala")
    a2c: A2CConfig = _section("a2c")
    dqn: DQNConfig = _section("dqn")
    apex: DQNConfig = _section("apex")
    r2d2: R2D2Config = _section("r2d2")
    sac: SACConfig = _section("sac")
    pqn: PQNConfig = _section("pqn")


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
    run: RunShape,
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
    return record.make_agent(algo_config, network, obs_example, run)
