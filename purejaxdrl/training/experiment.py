"""The objects a TrainConfig describes: environment, network, agent, runner."""

import dataclasses
from typing import Any

import numpy as np
from jax.sharding import Mesh

from purejaxdrl import env as envs
from purejaxdrl.agents.base import Agent
from purejaxdrl.agents.registry import algorithm, make_agent
from purejaxdrl.env.wrappers import HideObservations, check_hidden
from purejaxdrl.networks import Network
from purejaxdrl.parallel import DATA_AXIS, make_mesh
from purejaxdrl.runners.anakin import Runner, make_runner
from purejaxdrl.training.config import TrainConfig, validate


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
    hiding and normalisation when the config asks for them.

    Raises:
      ValueError: for hidden entries that do not fit the observation.

    """
    env = envs.make(config.env.id, **config.env.options)
    if config.env.hide_observations:
        hidden = config.env.hide_observations
        check_hidden(hidden, env.observation_spec(env.default_params), config.env.id)
        env = HideObservations(env, hidden)
    env = envs.EpisodeStatistics(env)
    if config.env.normalize_observations:
        env = envs.NormalizeObservation(env)
    return env, env.default_params


def make_networks(
    config: TrainConfig, env: envs.Env, env_params: Any
) -> tuple[Network, Any]:
    """The acting network and the learner's networks of `config.algo`.

    Returns:
      (acting, learner), from the algorithm's record: for actor-critics and
      Q-learners one network twice; for SAC its policy, and the whole
      SACNetworks (policy and critics).

    """
    return algorithm(config.algo).make_networks(
        getattr(config, config.algo),
        config.network,
        env.observation_spec(env_params),
        env.action_spec(env_params),
    )


def zero_observation(env: envs.Env, env_params: Any) -> np.ndarray:
    """One all-zero observation (unbatched), to initialise parameters with."""
    return np.zeros(env.observation_spec(env_params).shape, np.float32)


def build_agent(
    config: TrainConfig, learner_network: Any, observation: np.ndarray, devices: int
) -> Agent:
    """The agent of `config.algo` for a learner on `devices` devices.

    `observation` is one (unbatched, float32) observation to initialise with.
    """
    return make_agent(
        config.algo,
        getattr(config, config.algo),
        learner_network,
        observation,
        num_updates=config.num_updates,
        # One device needs no all-reduce, and its agent works outside shard_map.
        axis_name=DATA_AXIS if devices > 1 else None,
        num_envs=config.num_envs,
        num_devices=devices,
        unroll_length=config.unroll_length,
    )


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
    agent = build_agent(
        config, learner_network, zero_observation(env, env_params), mesh.size
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
