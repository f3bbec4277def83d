"""`train()` on host environments: the Sebulba runner under the usual recipe.

The same steps as a device run (`train.py`): open the run, build, init, a loop
of logged chunks of updates, finish; the chunks are the learner's updates
yielded one by one (`runners.sebulba`), read into the same records, sinks, NaN
checks and summary as the chunk loop's.
"""

import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import numpy as np

from purejaxdrl.agents.base import AgentState
from purejaxdrl.agents.registry import algorithm
from purejaxdrl.env.host import HostEnv, make_host_env
from purejaxdrl.observe.loggers import Logger, in_notebook
from purejaxdrl.parallel import DATA_AXIS
from purejaxdrl.rng import make_key
from purejaxdrl.runners.sebulba import SebulbaRunner, split_devices
from purejaxdrl.training.config import TrainConfig, validate
from purejaxdrl.training.experiment import build_agent
from purejaxdrl.training.loop import ChunkLoop, Pending
from purejaxdrl.training.result import TrainResult, close, finish, open_sinks
from purejaxdrl.training.run import open_run, start_wandb
from purejaxdrl.training.schedule import chunk_lengths


class HostRunState(NamedTuple):
    """A host run's state on the device: the learner's (envs live on the host)."""

    agent: AgentState


class HostExperiment(NamedTuple):
    """The objects a host-env TrainConfig describes (cf. `Experiment`)."""

    config: TrainConfig
    envs: list[HostEnv]
    runner: SebulbaRunner
    network: Any


def make_host_experiment(config: TrainConfig) -> HostExperiment:
    """Pools of host environments, the network, the agent and the runner.

    Raises:
      ConfigError, ValueError: for bad configuration (named values).

    """
    validate(config)
    host = config.host
    actor_devices, learner_devices = split_devices(
        jax.local_devices()[: config.devices or None], host
    )
    threads = len(actor_devices) * host.actor_threads
    if config.num_envs % threads:
        raise ValueError(
            f"num_envs={config.num_envs} must split evenly over the {threads} "
            "actor threads (host.actor_threads x actor devices); e.g. "
            f"--num-envs {threads * max(1, config.num_envs // threads)}"
        )
    options = dict(config.env.options)
    if host.env_threads and config.env.id.startswith("envpool:"):
        options["num_threads"] = host.env_threads
    per_thread = config.num_envs // threads
    envs = [
        make_host_env(config.env.id, per_thread, config.seed * 1000 + i, **options)
        for i in range(threads)
    ]
    spec = envs[0].spec
    record = algorithm(config.algo)
    section = getattr(config, config.algo)
    network, learner_network = record.make_networks(
        section, config.network, spec.observation, spec.action
    )
    mesh = jax.make_mesh((len(learner_devices),), (DATA_AXIS,), devices=learner_devices)
    observation = np.zeros(spec.observation.shape, np.float32)
    agent = build_agent(config, learner_network, observation, mesh.size)
    runner = SebulbaRunner(envs, agent, actor_devices, mesh, config.unroll_length, host)
    return HostExperiment(config, envs, runner, network)


def train_host(
    config: TrainConfig,
    *,
    loggers: Sequence[Logger] = (),
    console: bool | None = None,
    write_files: bool = False,
    notify: Callable[[str], None] | None = None,
    log_to: Sequence[str] = (),
) -> TrainResult:
    """Trains `config.algo` on the host environments `config.env.id`.

    As `train`, for `envpool:` and `gymnasium:` ids; `train` calls it. Host
    runs do not checkpoint or resume yet.
    """
    console = in_notebook() if console is None else console
    exp = make_host_experiment(config)
    run = open_run(config, resume=None, write_files=write_files, notify=notify)
    wandb = start_wandb(run, log_to)
    key = make_key(config.seed, config.rng_impl)
    start_compile = time.perf_counter()
    state = exp.runner.init(key)
    jax.block_until_ready(state)
    compile_seconds = time.perf_counter() - start_compile
    sinks = open_sinks(run, exp, [], loggers, wandb, log_to, console)
    loop = ChunkLoop(
        run=run,
        programs=None,
        sinks=sinks,
        steps_per_update=exp.runner.steps_per_update,
        num_devices=exp.runner.mesh.size,
        done=0,
        history=[],
        seconds_before=0.0,
        eval_key=None,
    )
    try:
        state = run_updates(loop, exp, state, key)
    finally:
        close(sinks, run.checkpointer)
        for env in exp.envs:
            env.close()
    return finish(run, loop, HostRunState(state), None, compile_seconds)


def run_updates(
    loop: ChunkLoop, exp: HostExperiment, state: AgentState, key: Any
) -> AgentState:
    """Every update of the run, logged in chunks of about num_updates/num_logs."""
    config = exp.config
    lengths = iter(chunk_lengths(config.num_updates, config.num_logs))
    length, chunk = next(lengths), []
    updates = exp.runner.train(state, key, 0, config.num_updates)
    try:
        for u, update in enumerate(updates):
            state = update.state
            chunk.append(update.metrics)
            if len(chunk) == length:
                metrics = {k: np.array([m[k] for m in chunk]) for k in chunk[0]}
                loop.observe(Pending(metrics, length, u + 1, None, None))
                length, chunk = next(lengths, 0), []
    finally:
        updates.close()
    return state


__all__ = ["HostRunState", "make_host_experiment", "train_host"]
