"""`train()` on host environments: the Sebulba runner under the usual recipe.

The same steps as a device run (`train.py`): open the run, build, init, a loop
of logged chunks of updates, finish; the chunks are the learner's updates
yielded one by one (`runners.sebulba`), read into the same records, sinks, NaN
checks and summary as the chunk loop's.
"""

import contextlib
import dataclasses
import pathlib
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import numpy as np

from purejaxdrl.agents.base import AgentState
from purejaxdrl.agents.registry import algorithm
from purejaxdrl.env.host import HostEnv, make_host_env
from purejaxdrl.env.imports import import_modules
from purejaxdrl.observe.host_evaluation import make_training_evaluation
from purejaxdrl.observe.loggers import Logger
from purejaxdrl.rng import make_key
from purejaxdrl.runners.sebulba import HostEnvError, SebulbaRunner, place
from purejaxdrl.training.checkpoint import Checkpointer
from purejaxdrl.training.config import TrainConfig, validate
from purejaxdrl.training.experiment import build_agent, choose_devices, fits
from purejaxdrl.training.faults import StopSignals
from purejaxdrl.training.loop import (
    ChunkLoop,
    Pending,
    agreed_stop,
    is_due,
    params_finite,
)
from purejaxdrl.training.packing import describe
from purejaxdrl.training.result import (
    TrainResult,
    close,
    closed_on_error,
    finish,
    open_progress,
    open_sinks,
)
from purejaxdrl.training.run import (
    Run,
    Start,
    open_run,
    start_from_latest,
    start_wandb,
)
from purejaxdrl.training.schedule import chunk_schedule


class HostRunState(NamedTuple):
    """A host run's state on the device: the learner's (envs live on the host)."""

    agent: AgentState


class HostExperiment(NamedTuple):
    """The objects a host-env TrainConfig describes (cf. `Experiment`).

    `envs` are this process's pools for a run starting at update 0; a resumed
    run closes them and starts fresh ones (`make_host_envs`).
    """

    config: TrainConfig
    envs: list[HostEnv]
    runner: SebulbaRunner
    network: Any
    agent: Any
    device_note: str | None = None


def host_env_seed(seed: int, start: int, thread: int) -> int:
    """The seed of actor thread `thread`'s pool in a run (re)started at `start`.

    Host environments cannot be snapshotted, so a resumed run restarts them
    with seeds drawn from (seed, update, process, thread): distinct streams
    for every pool of every restart. 30 bits: EnvPool seeds its environments
    with seed + i and wants them all to fit an int32.
    """
    entropy = [seed, start, jax.process_index(), thread]
    return int(np.random.SeedSequence(entropy).generate_state(1)[0] >> 2)


def make_host_envs(config: TrainConfig, threads: int, start: int) -> list[HostEnv]:
    """Pools for this process, one per actor thread, for a run starting at `start`.

    Not pure: it first imports `config.env.imports` (the user's modules that
    register environments).
    """
    import_modules(config.env.imports)
    options = dict(config.env.options)
    if config.host.env_threads and config.env.id.startswith("envpool:"):
        options["num_threads"] = config.host.env_threads
    per_thread = config.num_envs // (threads * jax.process_count())
    return [
        make_host_env(
            config.env.id, per_thread, host_env_seed(config.seed, start, i), **options
        )
        for i in range(threads)
    ]


def make_host_experiment(config: TrainConfig) -> HostExperiment:
    """Pools of host environments, the network, the agent and the runner.

    Raises:
      ConfigError, ValueError: for bad configuration (named values).

    """
    validate(config)
    actor_devices, mesh = place(config.host, config.devices)
    threads = len(actor_devices) * config.host.actor_threads
    everywhere = threads * jax.process_count()
    if config.num_envs % everywhere:
        raise ValueError(
            f"num_envs={config.num_envs} must split evenly over the {everywhere} "
            "actor threads (host.actor_threads x actor devices x processes); "
            f"e.g. --num-envs {everywhere * max(1, config.num_envs // everywhere)}"
        )
    envs = make_host_envs(config, threads, 0)
    spec = envs[0].spec
    record = algorithm(config.algo)
    section = config.algo_config
    network, learner_network = record.make_networks(
        section, config.network, spec.observation, spec.action
    )
    observation = np.zeros(spec.observation.shape, np.float32)
    # The learner takes the most of its default devices the batch splits over.
    learners, note = choose_devices(
        config.host.learner_devices,
        lambda n: fits(config, learner_network, observation, n),
        available=mesh.size // jax.process_count(),
        what="learner on",
        flag="--host.learner-devices",
    )
    if learners != mesh.size // jax.process_count():
        host = dataclasses.replace(config.host, learner_devices=learners)
        actor_devices, mesh = place(host, config.devices)
    agent = build_agent(config, learner_network, observation, mesh.size)
    runner = SebulbaRunner(
        spec,
        agent,
        actor_devices,
        mesh,
        config.num_envs,
        config.unroll_length,
        config.host,
    )
    return HostExperiment(config, envs, runner, network, agent, note)


def train_host(
    config: TrainConfig,
    *,
    loggers: Sequence[Logger] = (),
    console: bool = True,
    write_files: bool = False,
    resume: str | pathlib.Path | None = None,
    notify: Callable[[str], None] | None = None,
    log_to: Sequence[str] = (),
) -> TrainResult:
    """Trains `config.algo` on the host environments `config.env.id`.

    As `train`, for `envpool:` and `gymnasium:` ids; `train` calls it. A
    checkpoint holds the learner state (parameters, optimiser) and the
    update count, which is the parameter version and, with the seed, gives
    every key. A resumed run restarts the environments with fresh seeds
    (`host_env_seed`): it continues the training, not the exact episodes.
    """
    exp = make_host_experiment(config)
    run = open_run(config, resume=resume, write_files=write_files, notify=notify)
    if exp.device_note:
        run.say(exp.device_note)
    wandb = start_wandb(run, log_to)
    key = make_key(config.seed, config.rng_impl)
    progress = open_progress(run, exp, console)  # says it compiles
    with closed_on_error(progress):
        start_compile = time.perf_counter()
        attach_host_checkpointer(run, exp, key)
        start = restore_host(run) if resume is not None else Start()
        state = exp.runner.init(key) if start.state is None else start.state.agent
        jax.block_until_ready(state)
        compile_seconds = time.perf_counter() - start_compile
        envs = exp.envs
        if start.done:
            for env in envs:
                env.close()
            envs = make_host_envs(config, len(envs), start.done)
        sinks = open_sinks(run, start.history, loggers, wandb, log_to, progress)
        loop = ChunkLoop(
            run=run,
            programs=None,
            sinks=sinks,
            steps_per_update=exp.runner.steps_per_update,
            num_devices=exp.runner.mesh.size,
            done=start.done,
            history=start.history,
            seconds_before=start.seconds_before,
            eval_key=None,
            last_saved=start.done if resume is not None else None,
        )
    if progress is not None:
        progress.phase("training")
    try:
        state, stopped_by = run_updates(loop, exp, envs, state, key)
    finally:
        close(sinks, run.checkpointer)
        for env in envs:
            env.close()
    return finish(run, loop, HostRunState(state), stopped_by, compile_seconds)


def attach_host_checkpointer(run: Run, exp: HostExperiment, key: Any) -> None:
    """Gives a run with a directory its checkpointer, for a HostRunState."""
    if run.run_dir is None:
        return
    abstract = HostRunState(exp.runner.abstract_state(key))
    run.checkpointer = Checkpointer(
        run.run_dir / "checkpoints",
        abstract,
        jax.tree.map(lambda a: a.sharding, abstract),
        exp.runner.mesh,
        keep=run.config.checkpoint.keep,
        keep_best=run.config.checkpoint.keep_best,
    )
    run.state_index = describe(abstract)


def restore_host(run: Run) -> Start:
    """The newest checkpoint that verifies, or a fresh start when there is none."""
    return start_from_latest(run, "; the host environments restart with new seeds")[0]


def run_updates(
    loop: ChunkLoop,
    exp: HostExperiment,
    envs: list[HostEnv],
    state: AgentState,
    key: Any,
) -> tuple[AgentState, str | None]:
    """The run's remaining updates, logged and saved in chunks.

    Chunks are about num_updates/num_logs updates; a checkpoint follows every
    `checkpoint.every` chunks and the last, and so does an evaluation
    (`config.eval`, on fresh host environments) every `eval.every`. SIGINT /
    SIGTERM (with a checkpointer) stop the run after the current chunk, with a
    checkpoint; an evaluation reaching `eval.stop_at` stops it there.

    Returns:
      The final state, and what stopped the run early (None: the end).

    Raises:
      HostEnvError: an actor's environments raised; the message names the
        last good checkpoint.

    """
    run, config = loop.run, exp.config
    schedule = chunk_schedule(config, loop.done)
    last = schedule[-1][0] if schedule else -1
    checkpointer = run.checkpointer
    signals = StopSignals(announce=run.main) if checkpointer else None
    updates = exp.runner.train(envs, state, key, loop.done, config.num_updates)
    evaluate = make_training_evaluation(config, exp.network)
    with signals or contextlib.nullcontext():
        try:
            for index, length in schedule:
                chunk = [next(updates) for _ in range(length)]
                state = chunk[-1].state
                snapshot = None
                if checkpointer is not None and is_due(
                    index, last, config.checkpoint.every
                ):
                    snapshot = (
                        checkpointer.pack(HostRunState(state)),
                        params_finite(HostRunState(state)),
                    )
                metrics = {
                    k: np.array([u.metrics[k] for u in chunk]) for k in chunk[0].metrics
                }
                evaluated = None
                if evaluate is not None and is_due(index, last, config.eval.every):
                    evaluated = evaluate(state.params, index)  # the learner's
                loop.observe(
                    Pending(metrics, length, loop.done + length, snapshot, evaluated)
                )
                if signals is not None and agreed_stop(signals):
                    break
                if loop.reached is not None:  # eval.stop_at, alike on every process
                    break
        except HostEnvError as e:
            raise HostEnvError(f"{e}; {last_good(loop)}") from e.__cause__
        finally:
            updates.close()
        stopped_by = loop.stopped_by(signals)
        if stopped_by and checkpointer is not None and loop.last_saved != loop.done:
            loop.save_stopped(HostRunState(state))
        if checkpointer is not None:
            checkpointer.wait()
    return state, stopped_by


def last_good(loop: ChunkLoop) -> str:
    """Where the run's last good checkpoint is, and how to resume it."""
    checkpointer = loop.run.checkpointer
    if checkpointer is None:
        return "the run kept no checkpoints (no run directory)"
    checkpointer.wait()
    if loop.last_saved is None:
        return "no checkpoint was saved before it"
    return (
        f"the last good checkpoint is update {loop.last_saved:,} in "
        f"{checkpointer.directory / str(loop.last_saved)}; resume it with "
        f"`purejaxdrl train --resume {loop.run.run_dir}`"
    )


__all__ = [
    "HostRunState",
    "host_env_seed",
    "make_host_envs",
    "make_host_experiment",
    "train_host",
]
