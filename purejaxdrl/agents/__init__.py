"""Algorithms: one file each, each a factory returning an Agent."""

from typing import Any

import jax

from purejaxdrl.agents.a2c import A2CConfig, make_a2c
from purejaxdrl.agents.base import Agent, AgentState
from purejaxdrl.agents.dqn import DQNConfig, DQNState, make_dqn
from purejaxdrl.agents.impala import IMPALAConfig, IMPALAState, make_impala
from purejaxdrl.agents.ppo import PPOConfig, make_ppo
from purejaxdrl.networks import Network

# Algorithm name -> (config type, factory). Every factory has the signature of
# `make_agent` after its first argument.
AGENTS = {
    "ppo": (PPOConfig, make_ppo),
    "impala": (IMPALAConfig, make_impala),
    "a2c": (A2CConfig, make_a2c),
    "dqn": (DQNConfig, make_dqn),
    "apex": (DQNConfig, make_dqn),
}
# Learners with a replay buffer: their factories also take the global number
# of environments and the devices the buffer is split over.
OFF_POLICY = ("dqn", "apex")


def make_agent(
    algo: str,
    algo_config: Any,
    network: Network,
    obs_example: jax.Array,
    *,
    num_updates: int,
    axis_name: str | None,
    num_envs: int = 1,
    num_devices: int = 1,
) -> Agent:
    """Builds the agent of algorithm `algo` (a key of AGENTS).

    Args:
      algo: ppo, impala, a2c, dqn or apex.
      algo_config: that algorithm's config (PPOConfig, IMPALAConfig, A2CConfig,
        DQNConfig).
      network: actor-critic network.
      obs_example: one observation (unbatched), to initialise parameters.
      num_updates: total number of `update` calls (learning-rate annealing).
      axis_name: mesh axis the agent's update all-reduces over, or None.
      num_envs: the global number of environments (off-policy agents).
      num_devices: devices a replay buffer is split over (off-policy agents).

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
    extra = {}
    if algo in OFF_POLICY:
        extra = {"num_envs": num_envs, "num_devices": num_devices}
    return factory(
        algo_config,
        network,
        obs_example,
        num_updates=num_updates,
        axis_name=axis_name,
        **extra,
    )


__all__ = [
    "AGENTS",
    "A2CConfig",
    "OFF_POLICY",
    "Agent",
    "AgentState",
    "DQNConfig",
    "DQNState",
    "IMPALAConfig",
    "IMPALAState",
    "PPOConfig",
    "make_a2c",
    "make_agent",
    "make_dqn",
    "make_impala",
    "make_ppo",
]
