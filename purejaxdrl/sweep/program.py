"""Hyper-parameter sweeps: many runs in one compiled program, split over devices.

Runs that differ only in dynamic fields (array leaves of the algorithm's config:
learning rate, gamma, clip, entropy cost, ...) and in their seed train together:
the agent is built inside the compiled program from a traced config, and one
run's update is vmapped over the runs on each device; the runs are split over
a `sweep` mesh axis (and each run's environments over `data` when there are
fewer runs than devices). A grid over a static field (shapes, loop counts)
becomes one program per value, run one after another.

Every run is the run `train` would make with its setting and seed: same keys,
same updates, same parameters (to float rounding).
"""

import dataclasses
import functools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from purejaxdrl._platform import compiler_options
from purejaxdrl.agents.registry import algorithm, make_agent
from purejaxdrl.config import ConfigError
from purejaxdrl.parallel import DATA_AXIS, SWEEP_AXIS, make_sweep_mesh
from purejaxdrl.rng import make_key
from purejaxdrl.runners.anakin import RunnerState, run_functions
from purejaxdrl.sweep import layout as sweep_layout
from purejaxdrl.sweep.report import RETURN, SweepResult, write_sweep
from purejaxdrl.sweep.spec import SweepPlan, make_plan
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.experiment import make_env, make_networks, zero_observation
from purejaxdrl.training.faults import first_non_finite
from purejaxdrl.training.presets import load_preset
from purejaxdrl.training.train import chunk_lengths, summarize_chunk
from purejaxdrl.types import Metrics

# Runs are split over `sweep`; each run's environments over `data`.
_STATE_SPECS = RunnerState(
    agent=P(SWEEP_AXIS),
    actor=P(SWEEP_AXIS, DATA_AXIS),
    env_params=P(SWEEP_AXIS),
    key=P(SWEEP_AXIS),
)


@dataclasses.dataclass(frozen=True)
class _Programs:
    """One static group's compiled functions, for a fixed layout."""

    init: Callable[[Any, jax.Array], RunnerState]
    chunk: Callable[[int], Callable[[Any, RunnerState], tuple[RunnerState, Metrics]]]
    state_shapes: RunnerState  # of one run


def _programs(config: TrainConfig, mesh: Mesh) -> _Programs:
    """The init and chunk programs of runs sharing `config`'s static fields."""
    env, env_params = make_env(config)
    network, _ = make_networks(config, env, env_params)  # no SAC in sweeps
    obs_example = zero_observation(env, env_params)
    data = mesh.shape[DATA_AXIS]
    local_envs = config.num_envs // data

    def functions(hp: Any) -> Any:
        agent = make_agent(
            config.algo,
            hp,
            network,
            obs_example,
            num_updates=config.num_updates,
            # As `make_experiment`: no all-reduce when a run is on one device.
            axis_name=DATA_AXIS if data > 1 else None,
        )
        return run_functions(
            env,
            env_params,
            agent,
            local_envs=local_envs,
            unroll_length=config.unroll_length,
            scan_unroll=config.scan_unroll,
        )

    def init_runs(hps: Any, keys: jax.Array) -> RunnerState:
        return jax.vmap(lambda hp, key: functions(hp).init(key))(hps, keys)

    platform = mesh.devices.flat[0].platform
    init = jax.jit(
        jax.shard_map(
            init_runs,
            mesh=mesh,
            in_specs=(P(SWEEP_AXIS), P(SWEEP_AXIS)),
            out_specs=_STATE_SPECS,
        ),
        compiler_options=compiler_options(platform, runs_once=True),
    )

    @functools.cache
    def chunk(length: int) -> Callable:
        def sweep_chunk(hps: Any, states: RunnerState) -> tuple[RunnerState, Metrics]:
            def one(hp: Any, state: RunnerState) -> tuple[RunnerState, Metrics]:
                return jax.lax.scan(functions(hp).step, state, None, length=length)

            return jax.vmap(one)(hps, states)

        sharded = jax.shard_map(
            sweep_chunk,
            mesh=mesh,
            in_specs=(P(SWEEP_AXIS), _STATE_SPECS),
            out_specs=(_STATE_SPECS, P(SWEEP_AXIS)),
        )
        return jax.jit(
            sharded, donate_argnums=1, compiler_options=compiler_options(platform)
        )

    hp = getattr(config, config.algo)
    one = jax.eval_shape(
        init,
        jax.tree.map(lambda x: np.full(mesh.shape[SWEEP_AXIS], x, np.float32), hp),
        jnp.stack([make_key(0, config.rng_impl)] * mesh.shape[SWEEP_AXIS]),
    )
    shapes = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype), one)
    return _Programs(init, chunk, shapes)


def _stack_hps(configs: Sequence[TrainConfig]) -> Any:
    """The algorithm configs of `configs` as one config of float32 [R] leaves."""
    sections = [getattr(c, c.algo) for c in configs]
    return jax.tree.map(lambda *xs: np.asarray(xs, np.float32), *sections)


def sweep(
    base: TrainConfig | str,
    *,
    algo: str | None = None,
    grid: Mapping[str, Sequence[Any]] | None = None,
    sample: Mapping[str, tuple[str, float, float]] | None = None,
    num_samples: int = 0,
    seeds: int | Sequence[int] = 1,
    search_seed: int = 0,
    target_return: float | None = None,
    write_files: bool = False,
    device_memory: int | None = None,
    notify: Callable[[str], None] | None = None,
) -> SweepResult:
    """Trains every setting of a grid / random search with every seed.

    Args:
      base: a TrainConfig, or a preset name (`cartpole`) whose `algo` section
        is the base (and whose target score is used).
      algo: with a preset name, the algorithm (default ppo).
      grid: field -> values; the Cartesian product is trained. Bare names are
        the algorithm's fields (`learning_rate`); others are dotted paths
        (`network.hidden_sizes`) or top-level (`num_envs`).
      sample: field -> (`loguniform` | `uniform`, low, high): random search
        over dynamic fields, `num_samples` draws.
      num_samples: random draws.
      seeds: a count N (base seed, +1, ...) or a list of seeds.
      search_seed: seeds the random search.
      target_return: the score whose first crossing is reported per run (a
        preset's target by default).
      write_files: write a sweep directory under `base.run_dir`: one metrics
        JSONL per run, runs.csv, summary.csv / summary.md, curves.png and each
        run's final parameters.
      device_memory: bytes per device the sweep may use, instead of the
        estimate from the device (or host) memory; smaller forces batches.
      notify: called with each message (layout, batches, progress).

    Returns:
      A SweepResult: per-run histories, final returns and parameters, and the
      summary per setting.

    Raises:
      ConfigError: bad fields or values (nothing has compiled yet).

    """
    if jax.process_count() > 1:
        raise ConfigError(
            f"sweeps run in one process (this is one of {jax.process_count()}); "
            "start the sweep on a single host."
        )
    if isinstance(base, str):
        preset = load_preset(base, algo or "ppo")
        base = preset.config
        if target_return is None:
            target_return = preset.target_return
    elif algo is not None and algo != base.algo:
        raise ConfigError(
            f"algo={algo!r} differs from the config's algo={base.algo!r}; set "
            "the config's algo instead."
        )
    plan = make_plan(
        base,
        grid=grid,
        sample=sample,
        num_samples=num_samples,
        seeds=seeds,
        search_seed=search_seed,
    )
    messages: list[str] = []

    def say(line: str) -> None:
        messages.append(line)
        if notify is not None:
            notify(line)

    groups = plan.static_groups()
    total = plan.num_runs
    say(
        f"sweep: {len(plan.settings)} setting(s) x {len(plan.seeds)} seed(s) = "
        f"{total} runs of {base.algo} on {base.env.id}"
    )
    if len(groups) > 1:
        static = [f.path for f in plan.fields if not f.dynamic]
        say(
            f"sweep: {', '.join(static)} change(s) shapes or loop counts, so the "
            f"runs form {len(groups)} compiled programs, trained one after another"
        )
    result = SweepResult(
        plan=plan,
        histories=[[] for _ in range(total)],
        diverged=[None] * total,
        final_params=[None] * total,
        target_return=target_return,
        messages=messages,
    )
    for g, runs in enumerate(groups):
        label = f"program {g + 1} of {len(groups)}: " if len(groups) > 1 else ""
        _train_group(result, runs, label, device_memory, say, notify)
    for run, at in enumerate(result.diverged):
        if at is not None:
            say(f"sweep: run {run} ({_describe(plan, run)}) diverged at update {at:,}")
    if write_files:
        result.run_dir = write_sweep(result)
        say(f"sweep: results in {result.run_dir}")
    return result


def _train_group(
    result: SweepResult,
    runs: list[int],
    label: str,
    device_memory: int | None,
    say: Callable[[str], None],
    progress: Callable[[str], None] | None,
) -> None:
    """Trains runs that share their static fields: one program, one mesh.

    The runs are laid out over the devices, split into batches that fit their
    memory, and trained batch after batch; `result` collects their records,
    parameters and timings.
    """
    plan = result.plan
    cfg = plan.run_config(runs[0])
    devices = cfg.devices or jax.local_device_count()
    shape = sweep_layout.mesh_shape(
        len(runs),
        devices,
        cfg.num_envs,
        algorithm(cfg.algo).env_multiple(getattr(cfg, cfg.algo), cfg.unroll_length),
    )
    start = time.perf_counter()
    programs = _programs(cfg, make_sweep_mesh(*shape))
    per_run = sweep_layout.run_bytes(
        programs.state_shapes,
        data=shape[1],
        unroll_length=cfg.unroll_length,
        num_envs=cfg.num_envs,
        obs_shape=programs.state_shapes.actor.timestep.observation.shape[1:],
    )
    if device_memory is None:
        available, source = sweep_layout.device_bytes()
    else:
        available, source = device_memory, "device_memory"
    batch_size, num_batches = sweep_layout.batches(
        len(runs), shape[0], per_run, available
    )
    layout = sweep_layout.Layout(
        shape[0], shape[1], batch_size, num_batches, per_run, available
    )
    result.layouts.append(layout)
    plural = "s" * (len(runs) != 1)
    say(
        f"sweep: {label}{len(runs)} run{plural} on {shape[0]} x {shape[1]} (sweep "
        f"x data) {jax.default_backend()} device(s), {layout.runs_per_device} "
        f"per device"
    )
    if num_batches > 1:
        say(
            f"sweep: {len(runs)} runs need ~{_gib(per_run * len(runs) / shape[0])}"
            f" per device ({_gib(per_run)} each), more than the "
            f"{_gib(available)} of {source} a sweep may use; training them in "
            f"{num_batches} batches of {batch_size}, one after another"
        )
    schedule = chunk_lengths(cfg.num_updates, cfg.num_logs)
    compiled: dict[int, Any] = {}
    for b in range(num_batches):
        begin = time.perf_counter()
        batch = runs[b * batch_size : (b + 1) * batch_size]
        # Padding (copies of the last run) keeps every batch the same shape.
        padded = batch + [batch[-1]] * (batch_size - len(batch))
        configs = [plan.run_config(i) for i in padded]
        hps = _stack_hps(configs)
        keys = jnp.stack([make_key(c.seed, c.rng_impl) for c in configs])
        states = programs.init(hps, keys)
        for n in sorted(set(schedule)):
            if n not in compiled:
                compiled[n] = programs.chunk(n).lower(hps, states).compile()
                result.programs_compiled += 1
        jax.block_until_ready(states)
        if b == 0:  # building and compiling, not training
            begin = time.perf_counter()
            result.compile_seconds += begin - start
        states = _train_batch(
            compiled, schedule, hps, states, batch, cfg, result, progress
        )
        params = jax.device_get(states.agent.params)
        for j, run in enumerate(batch):
            result.final_params[run] = jax.tree.map(lambda x, j=j: x[j], params)
        result.train_seconds += time.perf_counter() - begin
        if num_batches > 1:
            say(f"sweep: batch {b + 1} of {num_batches} done")


def _train_batch(
    compiled: Mapping[int, Any],
    schedule: Sequence[int],
    hps: Any,
    states: RunnerState,
    runs: Sequence[int],
    config: TrainConfig,
    result: SweepResult,
    progress: Callable[[str], None] | None = None,
) -> RunnerState:
    """Runs the chunks of one batch, recording each real run's metrics.

    Chunk k+1 is dispatched before chunk k's metrics are read (as in `train`).
    `result` receives, per run, one record per chunk and the update at which
    it first went non-finite; `progress` a line per chunk.
    """
    histories, diverged = result.histories, result.diverged
    steps_per_update = config.steps_per_update
    start = time.perf_counter()
    done = 0

    def finish(metrics: Metrics, length: int, ends_at: int) -> None:
        host = jax.device_get(metrics)  # [batch, length] per name
        elapsed = time.perf_counter() - start
        for j, run in enumerate(runs):
            mine = {k: v[j] for k, v in host.items()}
            bad = first_non_finite(mine)
            if bad is not None and diverged[run] is None:
                diverged[run] = ends_at - length + bad[1] + 1
            histories[run].append(
                {
                    "env_steps": ends_at * steps_per_update,
                    "updates": ends_at,
                    "time": elapsed,
                    **summarize_chunk(mine),
                }
            )
        if progress is not None:
            returns = [histories[run][-1].get(RETURN, math.nan) for run in runs]
            finite = [r for r in returns if not math.isnan(r)]
            sps = ends_at * steps_per_update * len(runs) / elapsed
            shown = (
                f"mean return over runs {np.mean(finite):.1f} (best {max(finite):.1f})"
                if finite
                else "no episode ended yet"
            )
            progress(
                f"sweep: update {ends_at:,} of {config.num_updates:,}: {shown}, "
                f"{sps:,.0f} steps/s"
            )

    pending = None
    for length in schedule:
        states, metrics = compiled[length](hps, states)  # queued, not awaited
        done += length
        if pending is not None:
            finish(*pending)
        pending = (metrics, length, done)
    if pending is not None:
        finish(*pending)
    return states


def _describe(plan: SweepPlan, run: int) -> str:
    setting, seed = plan.run(run)
    values = ", ".join(f"{k}={v}" for k, v in plan.settings[setting].items())
    return f"{values}, seed {seed}" if values else f"seed {seed}"


def _gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


__all__ = ["SweepResult", "sweep"]
