"""The objects a TrainConfig describes: environment, network, agent, runner."""

import dataclasses
from typing import Any

import numpy as np
from jax.sharding import Mesh

from purejaxdrl import env as envs
from purejaxdrl.agents import Q_LEARNING, make_agent
from purejaxdrl.agents.base import Agent
from purejaxdrl.config import TrainConfig, validate
from purejaxdrl.networks import (
    Network,
    make_actor_critic,
    make_q_network,
    make_sac_networks,
)
from purejaxdrl.parallel import DATA_AXIS, make_mesh
from purejaxdrl.runners.anakin import Runner, make_runner


@dataclasses.dataclass(frozen=True)
class Experiment:
    """The objects a TrainConfig describes, ready to run."""

    config: TrainConfig
    env: envs.Env
    env_params: Any
    agent: Agent
    runner: Runner
    network: Network


def make_env(config: TrainConfig) -> tuple[envs.Env, Any]:
    """The environment of `config` and its default parameters.

    The environment is wrapped in episode statistics, and in observation
    normalisation when the config asks for it.
    """
    env = envs.make(config.env.id, **config.env.options)
    env = envs.EpisodeStatistics(env)
    if config.env.normalize_observations:
        env = envs.NormalizeObservation(env)
    return env, env.default_params


def make_networks(
    config: TrainConfig, env: envs.Env, env_params: Any
) -> tuple[Network, Any]:
    """The acting network and the learner's networks of `config.algo`.

    Returns:
      (acting, learner): the same actor-critic (or Q-network, for DQN and
      Ape-X) twice; for SAC the learner's is the whole SACNetworks (policy and
      critics) and the acting one its policy.

    """
    obs_spec = env.observation_spec(env_params)
    action_spec = env.action_spec(env_params)
    if config.algo == "sac":
        networks = make_sac_networks(config.network, obs_spec, action_spec)
        return networks.policy, networks
    if config.algo in Q_LEARNING:
        dueling = getattr(config, config.algo).dueling
        network = make_q_network(config.network, obs_spec, action_spec, dueling=dueling)
    else:
        network = make_actor_critic(config.network, obs_spec, action_spec)
    return network, network


def zero_observation(env: envs.Env, env_params: Any) -> np.ndarray:
    """One all-zero observation (unbatched), to initialise parameters with."""
    return np.zeros(env.observation_spec(env_params).shape, np.float32)


def make_experiment(config: TrainConfig, mesh: Mesh | None = None) -> Experiment:
    """Makes the environment, network, agent and runner for `config`.

    Args:
      config: the run.
      mesh: the devices to train on; None for `config.devices` local devices of
        every process (all of them when it is 0).

    Raises:
      ConfigError, UnknownEnvironmentError, ValueError: for bad configuration.

    """
    validate(config)
    if mesh is None:
        mesh = make_mesh(config.devices or None)
    env, env_params = make_env(config)
    network, learner_network = make_networks(config, env, env_params)
    agent = make_agent(
        config.algo,
        getattr(config, config.algo),
        learner_network,
        zero_observation(env, env_params),
        num_updates=config.num_updates,
        # One device needs no all-reduce, and its agent works outside shard_map.
        axis_name=DATA_AXIS if mesh.size > 1 else None,
        num_envs=config.num_envs,
        num_devices=mesh.size,
        unroll_length=config.unroll_length,
    )
    runner = make_runner(
        env,
        env_params,
        agent,
        num_envs=config.num_envs,
        unroll_length=config.unroll_length,
        mesh=mesh,
        scan_unroll=config.scan_unroll,
    )
    return Experiment(config, env, env_params, agent, runner, network)
