"""The objects a TrainConfig describes: environment, network, agent, runner."""

import dataclasses
import functools
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh

from purejaxdrl import env as envs
from purejaxdrl.agents.base import Agent
from purejaxdrl.agents.record_checks import check_acting_network, checked_agent
from purejaxdrl.agents.registry import acting_refusal, algorithm, make_agent
from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import field_example
from purejaxdrl.env.contract import check_on_devices
from purejaxdrl.env.host import is_host_env
from purejaxdrl.env.host.gymnasium import flattened_note
from purejaxdrl.env.registry import registered_by_user
from purejaxdrl.env.specs import action_bounds
from purejaxdrl.networks import Network
from purejaxdrl.networks.torsos import check_no_entry_keys
from purejaxdrl.observe.play import Player
from purejaxdrl.observe.players import DevicePlayer, HostPlayer
from purejaxdrl.parallel import DATA_AXIS, make_mesh, split_share
from purejaxdrl.rng import make_key
from purejaxdrl.runners.anakin import make_runner
from purejaxdrl.runners.base import Runner
from purejaxdrl.runners.placement import make_host_envs, place
from purejaxdrl.runners.sebulba import SebulbaRunner
from purejaxdrl.training.config import TrainConfig, run_shape
from purejaxdrl.training.device_choice import (
    check_requested,
    check_split,
    choose_devices,
)
from purejaxdrl.training.run_env import make_env, validate
from purejaxdrl.training.run_rules import check_dict_observations


@dataclasses.dataclass(frozen=True)
class Experiment:
    """The objects a TrainConfig describes, ready to run.

    Attributes:
      config: the run.
      env: the (unbatched) device environment; None on host environments,
        which the runner owns.
      env_params: its parameters; None on host environments.
      agent: the algorithm.
      runner: the Anakin runner (device environments) or the Sebulba one
        (host environments), behind one `Runner` interface.
      network: the acting network.
      obs_spec: the observation space (of one environment).
      action_spec: the action space.
      action_bounds: (low, high) per dimension, the environment's own bounds
        that Box actions in [-1, 1] are mapped to; None for Discrete actions.
      device_note: why the run uses fewer devices than it could, if it does.
      player: plays the policy of a state in fresh environments: the run's
        evaluations, `purejaxdrl eval` and its drawings (`observe.Player`).

    """

    config: TrainConfig
    env: envs.Env | None
    env_params: Any
    agent: Agent
    runner: Runner
    network: Network
    obs_spec: Any
    action_spec: Any
    action_bounds: Any = None
    device_note: str | None = None
    player: Player | None = None

    # The dataclass's own repr printed every field, the networks' flax modules
    # and the runner's functions among them (~3,500 characters).
    def __repr__(self) -> str:
        """`Experiment(ppo on CartPole-v1, AnakinRunner, 1 device, 500,000 steps)`."""
        config, devices = self.config, self.runner.mesh.size
        return (
            f"Experiment({config.algo} on {config.env.id}, "
            f"{type(self.runner).__name__}, "
            f"{devices} device{'s' * (devices != 1)}, {config.total_steps:,} steps)"
        )


def make_networks(
    config: TrainConfig, env: envs.Env, env_params: Any
) -> tuple[Network, Any]:
    """The acting network and the learner's networks of `config.algo`.

    Returns:
      (acting, learner), from the algorithm's record: for actor-critics and
      Q-learners one network twice; for SAC its policy, and the whole
      SACNetworks (policy and critics).

    Raises:
      ConfigError: as `spec_networks`.

    """
    return spec_networks(
        config, env.observation_spec(env_params), env.action_spec(env_params)
    )


def spec_networks(
    config: TrainConfig, obs_spec: Any, action_spec: Any
) -> tuple[Network, Any]:
    """`make_networks` for an environment's observation and action specs.

    The record's `action_kinds` are checked before its `make_networks` is
    called, and the acting network it returns after (`check_acting_network`),
    for every algorithm alike: a user's record needs no check of its own.

    Raises:
      ConfigError: dict observations for an algorithm that takes arrays,
        actions of a kind it does not act in, or an acting network whose
        output does not fit the actions.

    """
    record = algorithm(config.algo)
    check_dict_observations(config, record, obs_spec)
    refusal = acting_refusal(config.algo, action_spec, config.env.id)
    if refusal is not None:
        raise ConfigError(f"{refusal}.")
    network, learner_network = record.make_networks(
        config.algo_config, config.network, obs_spec, action_spec
    )
    check_acting_network(config.algo, network, obs_spec, action_spec)
    return network, learner_network


def zero_observation(env: envs.Env, env_params: Any) -> Any:
    """One all-zero observation (unbatched; a dict of them on dict observations)."""
    return jax.tree.map(
        lambda box: np.zeros(box.shape, np.float32),
        env.observation_spec(env_params),
        is_leaf=lambda x: isinstance(x, envs.Box),
    )


def build_agent(
    config: TrainConfig,
    learner_network: Any,
    observation: np.ndarray,
    devices: int,
    section: Any = None,
) -> Agent:
    """The agent of `config.algo` for a learner on `devices` devices.

    `observation` is one (unbatched, float32) observation to initialise with;
    `section` the algorithm's config to build from instead of the config's own
    (a sweep's, with traced array leaves). Its `init` and `update` say so in
    one line when they return the wrong kind, and its `state_spec` must split
    a replay buffer where its record `keeps_replay` (`checked_agent`).
    """
    agent = make_agent(
        config.algo,
        config.algo_config if section is None else section,
        learner_network,
        observation,
        run_shape(config)._replace(
            num_devices=devices,
            num_updates=config.num_updates,
            # One device needs no all-reduce, and its agent works outside
            # shard_map.
            axis_name=DATA_AXIS if devices > 1 else None,
        ),
    )
    # The record's word on replay is the config's, never a sweep's traced one.
    keeps = algorithm(config.algo).keeps_replay(config.algo_config)
    return checked_agent(agent, config.algo, keeps)


def make_experiment(
    config: TrainConfig,
    mesh: Mesh | None = None,
    *,
    budget: bool = True,
    normalised_before: bool = False,
) -> Experiment:
    """Makes the environment, network, agent and runner for `config`.

    Args:
      config: the run.
      mesh: the devices to train on; None for `config.devices` local devices of
        every process (all of them when it is 0). Host environments take
        none: their actors' and learner's devices are `config.host`'s
        (`host.actor_devices`, `host.learner_devices`), and a mesh is refused.
      budget: check the budget's rules (`validate`); False for a saved run
        read back to evaluate or export.
      normalised_before: the run continues one that normalised observations
        (`validate`: a replay learner's, begun before that was refused).

    Raises:
      ConfigError, UnknownEnvironmentError, ValueError: for bad configuration.

    """
    validate(config, budget=budget, normalised_before=normalised_before)
    if is_host_env(config.env.id):  # the one place a run's path is chosen
        if mesh is not None:
            raise ConfigError(
                f"make_experiment was given a mesh, but {config.env.id} steps "
                "on the host, whose actors and learner take their devices from "
                "config.host; pass no mesh, and set "
                "host.actor_devices / host.learner_devices (--host.actor-devices "
                "/ --host.learner-devices)."
            )
        return make_host_experiment(config)
    env, env_params = make_env(config)
    network, learner_network = make_networks(config, env, env_params)
    observation = zero_observation(env, env_params)
    note = None
    if mesh is None:
        fit = functools.partial(check_fits, config, learner_network, observation)
        devices, note = choose_devices(config.devices, fit)
        mesh = make_mesh(devices)
    if registered_by_user(config.env.id):  # now that the device count is known
        check_on_devices(env, config.env.id, mesh.size, make_key(0, config.rng_impl))
    # The rules on each device's share (PPO's minibatches), now that the
    # device count is known: before "compiling…", not when the update traces.
    check_split(config, mesh.size)
    agent = build_agent(config, learner_network, observation, mesh.size)
    runner = make_runner(
        env,
        env_params,
        agent,
        num_envs=config.num_envs,
        unroll_length=config.unroll_length,
        mesh=mesh,
        scan_unroll=config.scan_unroll,
    )
    player = DevicePlayer(env, network, config.eval)
    return Experiment(
        config=config,
        env=env,
        env_params=env_params,
        agent=agent,
        runner=runner,
        network=network,
        obs_spec=env.observation_spec(env_params),
        action_spec=env.action_spec(env_params),
        action_bounds=action_bounds(env, env_params),
        device_note=note,
        player=player,
    )


def make_host_experiment(config: TrainConfig) -> Experiment:
    """Pools of host environments, the network, the agent and the Sebulba runner.

    Raises:
      ConfigError, ValueError: for bad configuration (named values).

    """
    actor_devices, mesh = place(config.host, config.devices)
    threads = len(actor_devices) * config.host.actor_threads
    everywhere = threads * jax.process_count()
    if config.num_envs % everywhere:
        raise ConfigError(
            _uneven_split(config, everywhere // config.host.actor_threads)
        )
    pools = make_host_envs(config, threads, 0)
    try:
        return _host_experiment(config, pools, actor_devices, mesh)
    except BaseException:
        for pool in pools:  # a refused run leaves no pool running
            pool.close()
        raise


def _uneven_split(config: TrainConfig, per_thread: int) -> str:
    """Why `num_envs` does not split over the actor threads, and both fixes.

    `per_thread` is the actor devices x processes each thread count is
    multiplied by; the fixes are a multiple of the threads for `num_envs`,
    and the most threads (fewer than asked) that it splits over, if any.
    """
    n, threads = config.num_envs, config.host.actor_threads
    everywhere = threads * per_thread
    envs = field_example("num_envs", everywhere * max(1, n // everywhere))
    fewer = [t for t in range(threads - 1, 0, -1) if n % (t * per_thread) == 0]
    other = f" or {field_example('host.actor_threads', fewer[0])}" if fewer else ""
    return (
        f"num_envs={n} must split evenly over the {everywhere} actor threads "
        f"(host.actor_threads x actor devices x processes); pass e.g. {envs}{other}."
    )


def _host_experiment(
    config: TrainConfig, pools: list, actor_devices: list, mesh: Mesh
) -> Experiment:
    """`make_host_experiment` once its pools are made."""
    spec = pools[0].spec
    if getattr(pools[0], "flat", False):  # a Gymnasium space that is not a Box
        flat_note = flattened_note(pools[0].name, spec.observation.shape)
        check_no_entry_keys(config.network, flat_note)
    network, learner_network = spec_networks(config, spec.observation, spec.action)
    observation = np.zeros(spec.observation.shape, np.float32)
    host, processes = config.host, jax.process_count()
    flags = ("--host.learner-devices", "host.learner_devices")
    # The learner takes the most of its default devices the batch splits over.
    default = place(dataclasses.replace(host, learner_devices=0), config.devices)
    most = default[1].size // processes
    fit = functools.partial(check_fits, config, learner_network, observation)
    if host.learner_devices:  # one line now, not a JAX error on the first batch
        check_requested(host.learner_devices, fit, most, flags)
    learners, note = choose_devices(
        host.learner_devices,
        fit,
        available=most,
        what="learner on",
        flags=flags,
    )
    if learners != mesh.size // processes:
        host = dataclasses.replace(host, learner_devices=learners)
        actor_devices, mesh = place(host, config.devices)
    check_split(config, mesh.size, flags)
    agent = build_agent(config, learner_network, observation, mesh.size)
    runner = SebulbaRunner(spec, agent, actor_devices, mesh, config, pools)
    player = HostPlayer(config, network, spec)
    return Experiment(
        config=config,
        env=None,
        env_params=None,
        agent=agent,
        runner=runner,
        network=network,
        obs_spec=spec.observation,
        action_spec=spec.action,
        action_bounds=spec.action_bounds,
        device_note=note,
        player=player,
    )


def check_fits(
    config: TrainConfig, learner_network: Any, observation: np.ndarray, devices: int
) -> None:
    """Raises the error `config` would meet on `devices` devices per process.

    Its environments, and its algorithm's minibatches and replay, must split
    evenly over them (all processes' devices together).
    """
    total = devices * jax.process_count()
    if split_share(config.num_envs, total) is None:
        raise ValueError(
            f"num_envs={config.num_envs} does not split over {total} devices"
        )
    check_split(config, total)
    build_agent(config, learner_network, observation, total)
