"""Algorithms: one file each, each a factory returning an Agent."""

from typing import Any

import jax

from purejaxdrl.agents.a2c import A2CConfig, make_a2c
from purejaxdrl.agents.base import Agent, AgentState
from purejaxdrl.agents.impala import IMPALAConfig, IMPALAState, make_impala
from purejaxdrl.agents.ppo import PPOConfig, make_ppo
from purejaxdrl.networks import Network

# Algorithm name -> (config type, factory). Every factory has the signature of
# `make_agent` after its first argument.
AGENTS = {
    "ppo": (PPOConfig, make_ppo),
    "impala": (IMPALAConfig, make_impala),
    "a2c": (A2CConfig, make_a2c),
}


def make_agent(
    algo: str,
    algo_config: Any,
    network: Network,
    obs_example: jax.Array,
    *,
    num_updates: int,
    axis_name: str | None,
) -> Agent:
    """Builds the agent of algorithm `algo` (a key of AGENTS).

    Args:
      algo: ppo, impala or a2c.
      algo_config: that algorithm's config (PPOConfig, IMPALAConfig, A2CConfig).
      network: actor-critic network.
      obs_example: one observation (unbatched), to initialise parameters.
      num_updates: total number of `update` calls (learning-rate annealing).
      axis_name: mesh axis the agent's update all-reduces over, or None.

    Returns:
      The Agent.

    Raises:
      ValueError: for an unknown algorithm or a config of the wrong type.

    """
    if algo not in AGENTS:
        raise ValueError(
            f"algo={algo!r} is not a known algorithm; use one of {tuple(AGENTS)}."
        )
    config_type, factory = AGENTS[algo]
    if not isinstance(algo_config, config_type):
        raise ValueError(
            f"algo={algo!r} takes a config of type {config_type.__name__}, got "
            f"{type(algo_config).__name__}; pass the TrainConfig's {algo!r} field."
        )
    return factory(
        algo_config, network, obs_example, num_updates=num_updates, axis_name=axis_name
    )


__all__ = [
    "AGENTS",
    "A2CConfig",
    "Agent",
    "AgentState",
    "IMPALAConfig",
    "IMPALAState",
    "PPOConfig",
    "make_a2c",
    "make_agent",
    "make_impala",
    "make_ppo",
]
