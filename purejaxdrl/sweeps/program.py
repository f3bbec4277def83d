"""`sweep()`: trains a plan's runs, program by program and batch by batch."""

import contextlib
import pathlib
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp

from purejaxdrl.agents.registry import DEFAULT_ALGO
from purejaxdrl.config import ConfigError
from purejaxdrl.observe.numbers import return_text
from purejaxdrl.observe.records import reading, restore_or_restart
from purejaxdrl.parallel import make_sweep_mesh, resume_command
from purejaxdrl.rng import make_key
from purejaxdrl.runners.anakin import RunnerState
from purejaxdrl.sweeps import layout as sweep_layout
from purejaxdrl.sweeps.batch import (
    SweepStopped,
    resume_call,
    seconds_trained,
    train_batch,
)
from purejaxdrl.sweeps.best_policy import best_run
from purejaxdrl.sweeps.checkpoints import SweepStore
from purejaxdrl.sweeps.compiled import Programs, make_programs, stack_hps
from purejaxdrl.sweeps.inputs import (
    base_and_target,
    check_device_memory,
    messenger,
    off_budget,
    running_meta,
    shown,
)
from purejaxdrl.sweeps.messages import (
    diverged_line,
    layout_lines,
    plan_lines,
)
from purejaxdrl.sweeps.report import read_plan, start_dir, write_sweep
from purejaxdrl.sweeps.rerun import ALONE, run_command
from purejaxdrl.sweeps.result import SweepResult
from purejaxdrl.sweeps.spec import SweepPlan, make_plan
from purejaxdrl.training import opened_run
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.faults import StopSignals
from purejaxdrl.training.presets.load import load_preset
from purejaxdrl.training.run_files import holding_run_dir
from purejaxdrl.training.schedule import chunk_lengths
from purejaxdrl.training.setup_stop import SetupHold, end_setup_hold


def sweep(
    base: TrainConfig | str,
    *,
    algo: str | None = None,
    grid: Mapping[str, Sequence[Any]] | None = None,
    sample: Mapping[str, tuple[str, float, float]] | None = None,
    num_samples: int | None = None,
    seeds: int | Sequence[int] = 1,
    search_seed: int = 0,
    target_return: float | None = None,
    write_files: bool = False,
    device_memory: int | None = None,
    notify: Callable[[str], None] | None = None,
    console: bool = True,
) -> SweepResult:
    """Trains every setting of a grid / random search with every seed.

    Runs that differ only in dynamic fields (array leaves of the algorithm's
    config) and in their seed train together in one compiled program
    (`compiled.make_programs`), split over the devices (`layout`); a grid over
    a static field (shapes, loop counts) becomes one program per value, run one
    after another. Every run is the run `train` would make with its setting and
    seed: same keys, same updates, same parameters (to float rounding).

    Args:
      base: a TrainConfig, or a preset name (`cartpole`) whose `algo` section
        is the base (and whose target score is used).
      algo: with a preset name, the algorithm (default ppo).
      grid: field -> values; the Cartesian product is trained. Bare names are
        the algorithm's fields (`learning_rate`); others are dotted paths
        (`network.hidden_sizes`) or top-level (`num_envs`).
      sample: field -> (`loguniform` | `uniform`, low, high): random search
        over dynamic fields, `num_samples` draws.
      num_samples: random draws (required with `sample`).
      seeds: a count N (base seed, +1, ...) or a list of seeds.
      search_seed: seeds the random search.
      target_return: the score a run's final return must reach to count as
        reaching the target; the first chunk that crossed it is reported too
        (a preset's target by default).
      write_files: write a sweep directory under `base.run_dir`: one metrics
        JSONL per run, runs.csv, summary.csv / summary.md, curves.png and each
        run's final parameters.
      device_memory: bytes per device the sweep may use, instead of the
        estimate from the device (or host) memory; smaller forces batches.
      notify: called with each message (layout, batches, progress), instead
        of the console.
      console: without `notify`, print the messages and one plain progress
        line per chunk to stderr, so stdout stays the script's own (in a
        Jupyter cell to stdout, where `pjd.train` draws); False: silent.

    Returns:
      A SweepResult: per-run histories, final returns and parameters, and the
      summary per setting.

    Examples:
      More in docs/guide/sweeps.md.

      >>> import purejaxdrl as pjd
      >>> result = pjd.sweep("cartpole", grid={"learning_rate": [1e-4, 3e-4]}, seeds=4)
      >>> print(result.table())  # per setting: mean ± sample std

    Raises:
      ConfigError: bad fields or values (nothing has compiled yet).
      SweepStopped: with `write_files`, a signal (SIGINT, SIGTERM) stopped it
        after the current chunk, saved; `resume_sweep(e.path)` continues it.
        One while it set up stops it before its first chunk (update 0).
      KeyboardInterrupt: a signal before its directory was made, or, without
        `write_files`, before its first chunk: nothing was saved.

    """
    # A signal from here on is a request (`SetupHold`): before the folder is
    # made it stops the sweep untouched; then its chunk loop takes it over.
    with SetupHold() as held:
        if jax.process_count() > 1:
            raise ConfigError(
                f"sweeps run in one process (this is one of {jax.process_count()}); "
                "start the sweep on a single host."
            )
        given = target_return
        named = isinstance(base, str)
        preset = load_preset(base, algo or DEFAULT_ALGO) if named else None
        base, target_return = base_and_target(base, algo, target_return, preset)
        check_device_memory(device_memory)
        plan = make_plan(
            base,
            grid=grid,
            sample=sample,
            num_samples=num_samples,
            seeds=seeds,
            search_seed=search_seed,
        )
        if base.devices:  # held to train's rules before anything is written
            for runs in plan.static_groups():
                sweep_layout.group_mesh_shape(len(runs), plan.run_config(runs[0]))
        notify = shown(notify, console)
        messages, say = messenger(notify)
        if given is None and target_return is not None:
            why = off_budget(preset, plan.configs)
            if why:
                say(f"sweep: {why}: not judged (target_return= sets one)")
                target_return = None
        result = SweepResult.before_training(plan, target_return, messages)
        held.stop_if_asked(None)  # no folder yet: nothing to leave
        store = None
        if write_files:
            result.run_dir = start_dir(result)
            store = SweepStore(result.run_dir, base.checkpoint.every)
            again = resume_command("sweep", result.run_dir, devices=plan.base.devices)
            say(
                f"sweep: writing {result.run_dir} (if stopped, `{again}` continues it, "
                f"pjd.resume_sweep({str(result.run_dir)!r}) in Python)"
            )
        return _train_plan(result, device_memory, say, notify, store)


def resume_sweep(
    path: str | pathlib.Path,
    *,
    device_memory: int | None = None,
    notify: Callable[[str], None] | None = None,
    console: bool = True,
) -> SweepResult:
    """Continues a sweep that was stopped (killed, or its machine lost).

    Batches whose runs finished are read from the directory; the batch that
    was training restarts from its newest checkpoint; the rest train as they
    would have. Every run ends with the parameters and records of the sweep
    run straight through.

    Args:
      path: the sweep directory (`sweep(..., write_files=True)`).
      device_memory: as `sweep`'s, for programs not started yet: one laid
        out keeps its recorded batches (its checkpoints hold them), and a
        budget they do not fit is refused.
      notify: called with each message (and progress line), instead of the
        console.
      console: without `notify`, print the messages and one plain progress
        line per chunk to stderr, so stdout stays the script's own (in a
        Jupyter cell to stdout, where `pjd.train` draws); False: silent.

    Raises:
      ConfigError: not a sweep directory, a finished one, fewer devices
        than it was laid out on (more are fine: it keeps its layout), or a
        `device_memory` its recorded batches do not fit.
      SweepStopped: a signal (SIGINT, SIGTERM) stopped it after the current
        chunk, saved; `resume_sweep(e.path)` continues it.

    Examples:
      More in docs/guide/sweeps.md.

      >>> import purejaxdrl as pjd
      >>> grid = {"learning_rate": [1e-4, 3e-4]}
      >>> try:
      ...     result = pjd.sweep("cartpole", grid=grid, write_files=True)
      ... except pjd.SweepStopped as stopped:  # Ctrl-C or SIGTERM, saved
      ...     result = pjd.resume_sweep(stopped.path)

    """
    path = pathlib.Path(path).absolute()  # its records name it from anywhere
    # A signal from here on is a request (`SetupHold`), which the chunk loop
    # takes over: the sweep stops before its first chunk, its folder as it was.
    with SetupHold():
        meta = running_meta(path, "sweep", "sweep", "results in DIR", "summary.md")
        notify = shown(notify, console)
        messages, say = messenger(notify)
        with reading(path / "sweep.yaml", restore_or_restart("sweep")):
            plan = read_plan(meta)
            target_return = meta["target_return"]
        result = SweepResult.before_training(plan, target_return, messages, path)
        store = SweepStore(path, plan.base.checkpoint.every)
        store.check_budget(len(plan.static_groups()), device_memory)
        say(f"sweep: resuming {path}")
        return _train_plan(result, device_memory, say, notify, store)


@holding_run_dir  # one process trains a sweep directory at a time
def _train_plan(
    result: SweepResult,
    device_memory: int | None,
    say: Callable[[str], None],
    progress: Callable[[str], None] | None,
    store: SweepStore | None,
) -> SweepResult:
    """Trains every static group of `result.plan`, then reports."""
    plan = result.plan
    groups = plan.static_groups()
    for line in plan_lines(plan, len(groups)):
        say(line)
    # A sweep that writes files stops on SIGINT / SIGTERM after the current
    # chunk, saved (SweepStopped), also with checkpoint.every 0 (no due saves,
    # as `train`); one without files has nowhere to save, so is interrupted.
    signals = StopSignals(host_envs=False) if store is not None else None
    stop = None if signals is None else lambda: signals.requested
    if store is not None:  # a failed save's line says how to continue
        again = resume_call("sweep", store.directory, plan.base.devices)
        opened_run.remember(store.directory, again)
    with signals or contextlib.nullcontext():
        for g, runs in enumerate(groups):
            label = f"program {g + 1} of {len(groups)}: " if len(groups) > 1 else ""
            try:
                _train_group(
                    result, g, runs, label, device_memory, say, progress, store, stop
                )
            except SweepStopped as e:
                raise SweepStopped(
                    e.reason, store.directory, "sweep", plan.base.devices
                ) from None
    for run, at in enumerate(result.diverged):
        if at is not None:
            say(diverged_line(plan, run, at))
    if store is not None:
        path = write_sweep(result)  # with the best run's policy
        say(f"sweep: results in {path}")
        if (best := best_run(result)) is not None:
            setting, seed = result.plan.run(best)
            say(
                f"sweep: the best setting's best run's policy (run {best}: "
                f"setting {setting}, seed {seed}, final return "
                f"{return_text(result.final_return[best])}) in {path / 'policy'}"
            )
            if (command := run_command(result, best)) is not None:
                say(f"sweep: train it alone ({ALONE}) with: {command}")
    return result


def _train_group(
    result: SweepResult,
    group: int,
    runs: list[int],
    label: str,
    device_memory: int | None,
    say: Callable[[str], None],
    progress: Callable[[str], None] | None,
    store: SweepStore | None,
    stop: Callable[[], str | None] | None = None,
) -> None:
    """Trains runs that share their static fields: one program, one mesh.

    The runs are laid out over the devices, split into batches that fit their
    memory, and trained batch after batch; `result` collects their records,
    parameters and timings. With a `store`, finished batches are read from it,
    an interrupted one restarts from its checkpoint, and each batch saves its
    state as it trains.
    """
    plan = result.plan
    cfg = plan.run_config(runs[0])
    # A resumed group keeps the mesh its checkpoints hold.
    recorded = None if store is None else store.recorded_shape(group)
    if recorded is None:
        shape = sweep_layout.group_mesh_shape(len(runs), cfg)
    else:
        shape, note = recorded
        if note:
            say(f"sweep: {label}{note}")
    start = time.perf_counter()
    mesh = make_sweep_mesh(*shape)
    programs = make_programs(cfg, mesh)
    layout, source = sweep_layout.group_layout(
        len(runs), shape, programs.state_shapes, cfg, device_memory, programs.specs
    )
    if store is not None:
        layout = _recorded(store, group, layout, label, say)
    result.layouts.append(layout)
    for line in layout_lines(label, len(runs), layout, source, jax.default_backend()):
        say(line)
    schedule = chunk_lengths(cfg.num_updates, cfg.num_logs)
    compiled: dict[int, Any] = {}
    size = layout.batch_size
    for b in range(layout.num_batches):
        batch = runs[b * size : (b + 1) * size]
        if store is not None and store.finished(group, b):
            store.load_finished(group, b, result, batch)
            result.train_seconds += seconds_trained(result.histories[batch[0]])
            say(f"sweep: batch {b + 1} of {layout.num_batches} already trained")
            continue
        hps, states = _init_batch(programs, plan, batch, size)
        checkpoint = None if store is None else store.open(group, b, states, mesh)
        done = 0
        if checkpoint is not None and (
            restored := checkpoint.restore(result, batch, say)
        ):
            done, states = restored
            say(f"sweep: batch {b + 1} resumed at update {done}")
        before = seconds_trained(result.histories[batch[0]])
        for n in sorted(set(schedule)):
            if n not in compiled:
                compiled[n] = programs.chunk(n).lower(hps, states).compile()
                result.programs_compiled += 1
        jax.block_until_ready(states)
        begin = time.perf_counter()  # each batch's init and restore: not training
        if start is not None:  # building and compiling, not training
            result.compile_seconds += begin - start
            start = None
        if store is None:  # no chunk loop holds signals: Python's from here
            end_setup_hold()  # stopped first, unsaved, if one came
        states = train_batch(
            compiled, schedule, hps, states, batch, cfg, result, progress,
            done=done, checkpoint=checkpoint, stop=stop, seconds_before=before,
        )  # fmt: skip
        params = jax.device_get(states.agent.params)
        stats = jax.device_get(getattr(states.env_params, "obs_stats", None))
        for j, run in enumerate(batch):
            result.final_params[run] = jax.tree.map(lambda x, j=j: x[j], params)
            if stats is not None:  # what the run's policy needs beside params
                result.final_stats[run] = jax.tree.map(lambda x, j=j: x[j], stats)
        result.train_seconds += before + time.perf_counter() - begin
        if store is not None:
            store.finish(group, b, result, batch, checkpoint)
        if layout.num_batches > 1:
            say(f"sweep: batch {b + 1} of {layout.num_batches} done")


def _recorded(
    store: SweepStore,
    group: int,
    planned: sweep_layout.Layout,
    label: str,
    say: Callable[[str], None],
) -> sweep_layout.Layout:
    """The layout a group trains with (`SweepStore.layout`), said if not `planned`."""
    layout = store.layout(group, planned)
    if layout.batch_size != planned.batch_size:
        say(
            f"sweep: {label or 'the sweep '}keeps its recorded batches of "
            f"{layout.batch_size} run{'s' * (layout.batch_size != 1)} (its checkpoints "
            "hold them); a memory budget applies to programs not started yet"
        )
    return layout


def _init_batch(
    programs: Programs, plan: SweepPlan, batch: list[int], size: int
) -> tuple[Any, RunnerState]:
    """The stacked configs and initial states of a batch of `size` runs.

    Padding (copies of the last run) keeps every batch the same shape, so all
    batches share one compiled program.
    """
    padded = batch + [batch[-1]] * (size - len(batch))
    configs = [plan.run_config(i) for i in padded]
    hps = stack_hps(configs)
    keys = jnp.stack([make_key(c.seed, c.rng_impl) for c in configs])
    return hps, programs.init(hps, keys)


__all__ = ["SweepResult", "sweep"]
