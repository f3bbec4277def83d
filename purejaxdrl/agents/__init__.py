"""Algorithms: one file each, each a factory returning an Agent."""

import inspect
from typing import Any

import jax

from purejaxdrl.agents.a2c import A2CConfig, make_a2c
from purejaxdrl.agents.base import Agent, AgentState
from purejaxdrl.agents.dqn import DQNConfig, DQNState, make_dqn
from purejaxdrl.agents.impala import IMPALAConfig, IMPALAState, make_impala
from purejaxdrl.agents.ppo import PPOConfig, make_ppo
from purejaxdrl.agents.sac import SACConfig, SACState, make_sac
from purejaxdrl.networks import Network

# Algorithm name -> (config type, factory). Every factory has the signature of
# `make_agent` after its first argument.
AGENTS = {
    "ppo": (PPOConfig, make_ppo),
    "impala": (IMPALAConfig, make_impala),
    "a2c": (A2CConfig, make_a2c),
    "dqn": (DQNConfig, make_dqn),
    "apex": (DQNConfig, make_dqn),
    "sac": (SACConfig, make_sac),
}
# Q-learners: they act with a Q-network and keep a replay buffer.
Q_LEARNING = ("dqn", "apex")


def keeps_replay(algo: str, algo_config: Any) -> bool:
    """Whether algorithm `algo`'s agent keeps a replay buffer.

    Its buffer is state split over the devices (`Agent.state_spec` is not
    `P()`): such a run resumes only on its own device count, and a sweep does
    not lay it out yet.
    """
    if algo == "impala":
        return algo_config.replay_ratio > 0
    return algo in (*Q_LEARNING, "sac")


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
    unroll_length: int = 1,
) -> Agent:
    """Builds the agent of algorithm `algo` (a key of AGENTS).

    Args:
      algo: ppo, impala, a2c, dqn, apex or sac.
      algo_config: that algorithm's config (PPOConfig, IMPALAConfig, A2CConfig,
        DQNConfig).
      network: actor-critic network (`make_q_network` for dqn / apex,
        `make_sac_networks` for sac).
      obs_example: one observation (unbatched), to initialise parameters.
      num_updates: total number of `update` calls (learning-rate annealing).
      axis_name: mesh axis the agent's update all-reduces over, or None.
      num_envs: the global number of environments; passed, like the next
        two, only to the factories that take it (those with replay).
      num_devices: the devices the environments and any replay split over.
      unroll_length: steps per environment per update.

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
    layout = {
        "num_envs": num_envs,
        "num_devices": num_devices,
        "unroll_length": unroll_length,
    }
    accepted = inspect.signature(factory).parameters
    extra = {k: v for k, v in layout.items() if k in accepted}
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
    "Q_LEARNING",
    "keeps_replay",
    "Agent",
    "AgentState",
    "DQNConfig",
    "DQNState",
    "IMPALAConfig",
    "IMPALAState",
    "PPOConfig",
    "SACConfig",
    "SACState",
    "make_a2c",
    "make_agent",
    "make_dqn",
    "make_impala",
    "make_ppo",
    "make_sac",
]
