"""Builds a run from a TrainConfig and drives it: the host loop.

The host dispatches compiled chunks of updates and reads each chunk's metrics
only after the next chunk is queued, so the device never waits for logging.
"""

import dataclasses
import datetime
import json
import math
import pathlib
import time
from collections.abc import Sequence
from typing import Any

import flax.serialization
import jax
import numpy as np
import yaml
from jax.sharding import Mesh

from purejaxdrl import env as envs
from purejaxdrl.agents import make_agent
from purejaxdrl.agents.base import Agent
from purejaxdrl.config import TrainConfig, to_dict, validate
from purejaxdrl.loggers import ConsoleLogger, JsonlLogger, Logger
from purejaxdrl.networks import make_actor_critic
from purejaxdrl.parallel import DATA_AXIS, is_main_process, make_mesh
from purejaxdrl.rng import make_key
from purejaxdrl.runner import Runner, RunnerState, make_runner


@dataclasses.dataclass(frozen=True)
class Experiment:
    """The objects a TrainConfig describes, ready to run."""

    config: TrainConfig
    env: envs.Env
    env_params: Any
    agent: Agent
    runner: Runner


@dataclasses.dataclass
class TrainResult:
    """What a finished run reports.

    Attributes:
      state: the final RunnerState (parameters, optimiser, envs, key).
      mean_return: mean return of the episodes completed in the last chunk that
        completed any (NaN if none ever did).
      env_steps: environment steps taken.
      compile_seconds: time to compile the training programs.
      train_seconds: wall time after compilation.
      steps_per_second: env_steps / train_seconds (compile time excluded), all
        devices together.
      num_devices: how many devices trained (over all processes).
      history: one record per chunk, as written to metrics.jsonl.
      run_dir: the run's output folder, or None.

    """

    state: RunnerState
    mean_return: float
    env_steps: int
    compile_seconds: float
    train_seconds: float
    steps_per_second: float
    num_devices: int
    history: list[dict[str, Any]]
    run_dir: pathlib.Path | None


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
    env = envs.make(config.env.id, **config.env.options)
    env = envs.EpisodeStatistics(env)
    if config.env.normalize_observations:
        env = envs.NormalizeObservation(env)
    env_params = env.default_params
    obs_spec = env.observation_spec(env_params)
    network = make_actor_critic(config.network, obs_spec, env.action_spec(env_params))
    obs_example = np.zeros(obs_spec.shape, np.float32)
    agent = make_agent(
        config.algo,
        getattr(config, config.algo),
        network,
        obs_example,
        num_updates=config.num_updates,
        # One device needs no all-reduce, and its agent works outside shard_map.
        axis_name=DATA_AXIS if mesh.size > 1 else None,
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
    return Experiment(config, env, env_params, agent, runner)


def chunk_lengths(num_updates: int, num_logs: int) -> list[int]:
    """Splits `num_updates` into about `num_logs` chunks of equal length.

    Prefers a length that divides `num_updates` (one compiled program); otherwise
    a last, shorter chunk is compiled separately.
    """
    target = max(1, num_updates // max(1, num_logs))
    divisors = [d for d in range(1, num_updates + 1) if num_updates % d == 0]
    best = min(divisors, key=lambda d: abs(math.log(d / target)))
    if 0.5 <= best / target <= 2.0:
        return [best] * (num_updates // best)
    lengths = [target] * (num_updates // target)
    if num_updates % target:
        lengths.append(num_updates % target)
    return lengths


def _summarize(metrics: dict[str, np.ndarray]) -> dict[str, float]:
    """Means of per-update metrics over a chunk; episode means from the sums."""
    out = {
        k: float(np.mean(v)) for k, v in metrics.items() if not k.startswith("episode/")
    }
    if "episode/count" in metrics:
        count = float(np.sum(metrics["episode/count"]))
        out["episode/count"] = count
        for name in ("return", "length"):
            total = float(np.sum(metrics[f"episode/{name}_sum"]))
            out[f"episode/mean_{name}"] = total / count if count else math.nan
    return out


def make_run_dir(config: TrainConfig) -> pathlib.Path:
    """Creates `run_dir/<env>_<algo>_<time>` and writes the resolved config there."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    name = f"{config.env.id.replace('/', '-')}_{config.algo}_{stamp}"
    path = pathlib.Path(config.run_dir) / name
    suffix = 1
    while path.exists():
        suffix += 1
        path = pathlib.Path(config.run_dir) / f"{name}-{suffix}"
    path.mkdir(parents=True)
    (path / "config.yaml").write_text(yaml.safe_dump(to_dict(config), sort_keys=False))
    return path


def train(
    config: TrainConfig,
    *,
    loggers: Sequence[Logger] = (),
    console: bool = False,
    write_files: bool = False,
) -> TrainResult:
    """Trains `config.algo` on `config.env`. Not jittable: the host loop.

    Args:
      config: the run.
      loggers: extra sinks receiving one record per chunk.
      console: show a live progress line on stderr.
      write_files: write config.yaml, metrics.jsonl, summary.json and the final
        network parameters (params.msgpack) to a new folder under
        `config.run_dir` (process 0 only).

    Returns:
      A TrainResult (compile time reported separately from steps/s).

    """
    exp = make_experiment(config)
    lengths = chunk_lengths(config.num_updates, config.num_logs)
    steps_per_update = exp.runner.steps_per_update
    total_steps = config.num_updates * steps_per_update
    num_devices = exp.runner.mesh.size
    # Every process runs the same program; only process 0 speaks.
    main = is_main_process()
    sinks = list(loggers) if main else []
    run_dir = make_run_dir(config) if write_files and main else None
    if run_dir is not None:
        sinks.append(JsonlLogger(run_dir / "metrics.jsonl"))
    if console and main:
        description = f"{config.algo} {config.env.id}"
        sinks.append(ConsoleLogger(total_steps, description, num_devices))

    start_compile = time.perf_counter()
    state = exp.runner.init(make_key(config.seed, config.rng_impl))
    programs = {
        n: exp.runner.train_chunk(n).lower(state).compile() for n in set(lengths)
    }
    jax.block_until_ready(state)
    compile_seconds = time.perf_counter() - start_compile

    history: list[dict[str, Any]] = []
    mean_return = math.nan
    start = time.perf_counter()
    done_updates = 0

    def record(metrics: Any, length: int) -> None:
        nonlocal done_updates, mean_return
        summary = _summarize(jax.device_get(metrics))  # blocks on this chunk only
        done_updates += length
        elapsed = time.perf_counter() - start
        env_steps = done_updates * steps_per_update
        sps = env_steps / elapsed
        rec = {
            "env_steps": env_steps,
            "updates": done_updates,
            "time": elapsed,
            "steps_per_second": sps,
            "steps_per_second_per_device": sps / num_devices,
            "devices": num_devices,
            "eta_seconds": (total_steps - env_steps) / sps,
            **summary,
        }
        if not math.isnan(summary.get("episode/mean_return", math.nan)):
            mean_return = summary["episode/mean_return"]
        history.append(rec)
        for sink in sinks:
            sink.write(rec)

    try:
        pending = None
        for length in lengths:
            state, metrics = programs[length](state)  # queued, not awaited
            if pending is not None:
                record(*pending)
            pending = (metrics, length)
        if pending is not None:
            record(*pending)
        jax.block_until_ready(state)
    finally:
        for sink in sinks:
            sink.close()
    train_seconds = time.perf_counter() - start
    result = TrainResult(
        state=state,
        mean_return=mean_return,
        env_steps=total_steps,
        compile_seconds=compile_seconds,
        train_seconds=train_seconds,
        steps_per_second=total_steps / train_seconds,
        num_devices=num_devices,
        history=history,
        run_dir=run_dir,
    )
    if run_dir is not None:
        summary = {
            "mean_return": None if math.isnan(mean_return) else mean_return,
            "env_steps": total_steps,
            "compile_seconds": compile_seconds,
            "train_seconds": train_seconds,
            "steps_per_second": result.steps_per_second,
            "devices": num_devices,
            "steps_per_second_per_device": result.steps_per_second / num_devices,
        }
        (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        # The final network parameters, e.g. to evaluate the policy. Whole-run
        # checkpoints (optimiser, environments, keys) are checkpoint.py's job.
        params = jax.device_get(state.agent.params)
        (run_dir / "params.msgpack").write_bytes(
            flax.serialization.msgpack_serialize(params)
        )
    return result
