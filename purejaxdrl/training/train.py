"""`train()`: one run from a TrainConfig, as a recipe of host-side steps.

Prepare the experiment and run directory, compile, restore or init, then the
chunk loop (`loop.ChunkLoop`: dispatch, observe, evaluate, checkpoint, stop),
then finish. A run with a run directory checkpoints its whole state, resumes
exactly, stops cleanly on SIGINT / SIGTERM and refuses to train on NaNs.
"""

import contextlib
import dataclasses
import os
import pathlib
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax

from purejaxdrl.observe.loggers import Logger
from purejaxdrl.observe.progress import ConsoleLogger, NotebookProgress
from purejaxdrl.rng import make_key
from purejaxdrl.runners.base import Runner
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.experiment import Experiment, make_experiment
from purejaxdrl.training.loop import ChunkLoop, params_finite
from purejaxdrl.training.memory import check_replay_fits
from purejaxdrl.training.policy.exported import write_policy
from purejaxdrl.training.policy.folder import check_policy_folder
from purejaxdrl.training.policy.record import PolicySource, policy_source
from purejaxdrl.training.programs import Programs, compile_programs
from purejaxdrl.training.replay_shards import replay_devices
from purejaxdrl.training.result import (
    TrainResult,
    check_sinks,
    close,
    closed_on_error,
    finish,
    open_progress,
    open_sinks,
)
from purejaxdrl.training.resume import check_resume
from purejaxdrl.training.run import (
    Run,
    Start,
    attach_checkpointer,
    lock_run,
    open_run,
    restore,
    save_resumed_config,
    start_wandb,
)
from purejaxdrl.training.run_files import UnstartedRun
from purejaxdrl.training.schedule import chunk_schedule
from purejaxdrl.training.setup_stop import SetupHold, stopped_unsaved

__all__ = ["TrainResult", "train"]


def _training_phase(runner: Runner) -> str:
    """The progress line's phase while the chunks run."""
    if runner.compiles_late:  # a host runner: the learner's first batch compiles it
        return "training, the learner compiling on its first batch"
    return "training"


def train(
    config: TrainConfig,
    *,
    loggers: Sequence[Logger] | None = (),
    console: bool = True,
    write_files: bool = False,
    resume: str | pathlib.Path | None = None,
    notify: Callable[[str], None] | None = None,
    log_to: Sequence[str] | None = (),
    allow_changes: bool = False,
) -> TrainResult:
    """Trains `config.algo` on `config.env`. Not jittable: the host loop.

    With a run directory (`write_files` or `resume`), the whole runner state is
    checkpointed every `config.checkpoint.every` chunks and at the end, in the
    background. SIGINT or SIGTERM (a notebook's interrupt) stops the run after
    the current chunk and returns it (`stopped_by`), saved where it has a run
    directory, in memory only without one; a second SIGINT aborts. A NaN or
    infinite loss or parameter stops the run.

    Args:
      config: the run, a `TrainConfig`. A preset's is
        `pjd.load_preset(name).config`; a name alone is refused with that
        hint (unlike `sweep` and `pbt`, which read a preset's target too).
      loggers: extra sinks receiving one record per chunk (None: none).
      console: show the run's progress (default): in the Jupyter cell when run
        from a notebook, else on stderr: a line redrawn in place on a terminal,
        one plain line per chunk (`config.num_logs` of them) in a pipe or a
        log file. False: silent, e.g. for many runs in a loop.
      write_files: write config.yaml, metrics.jsonl, summary.json, checkpoints
        and the final network parameters (params.msgpack) to a new folder
        under `config.run_dir` (files other than checkpoints: process 0 only).
      resume: a run directory to continue from its newest checkpoint that
        verifies; `config` must be its config (`resume_config(run_dir, {})[0]`,
        with any overrides), checked before anything is written. On device
        environments the continued run is bitwise the uninterrupted one on
        the same devices; a host-env run restarts its environments, so it
        continues the training but not bitwise (checkpoints.md, "Host
        environments").
        A run with a replay buffer and `devices: 0` resumes on the device
        count it was saved on (its buffer's shards), saying so.
      notify: called with each message (resume, skipped checkpoints, device
        changes) on process 0; they are also in `TrainResult.messages`. The
        progress line is `console`'s alone (a sweep's `notify` replaces it).
      log_to: named sinks writing into the run directory (so they need one):
        "tensorboard" (event files in `tensorboard/`), "wandb" (a W&B run,
        files in `wandb/`; `WANDB_MODE=offline` keeps them local).
      allow_changes: with `resume`, continue with a config whose changes
        alter the run's updates (the command line's `--override`); without,
        only changes that do not (devices, run_dir, env.imports, checkpoint.*,
        eval.*, num_logs, scan_unroll).

    Returns:
      A TrainResult (compile time reported separately from steps/s).

    Examples:
      More in docs/guide/presets-and-training.md.

      >>> import purejaxdrl as pjd
      >>> config = pjd.load_preset("cartpole").config
      >>> result = pjd.train(config, console=False)  # result.mean_return

    Raises:
      ConfigError: `resume` is not a run that `config` may continue, or
        another process trains it now (nothing is written then).
      NonFiniteError: a loss, metric or parameter became NaN or infinite; the
        message names the update, the metric and the last good checkpoint.
        A host environment's NaN observation or reward too (a HostEnvError).
      LogWriteError: a file of the run's logs (metrics.jsonl, TensorBoard's,
        summary.json, params.msgpack) could not be written: a full disk; the
        message names it and the command that resumes the run.
      HostEnvError: a host environment, or the policy acting in it, raised
        (its cause their error); a ConfigError too where the environment's
        step broke Gymnasium's API.
      KeyboardInterrupt: a signal before the first chunk (nothing trained,
        nothing saved), or a second SIGINT.

    """
    # A signal from here on is a request (`SetupHold`), acted on between steps.
    with SetupHold() as held:
        loggers, log_to = check_sinks(
            log_to, write_files or resume is not None, loggers
        )
        config, accepted, normalised_before = _checked_resume(
            config, resume, allow_changes
        )
        exp = make_experiment(config, normalised_before=normalised_before)
        parent_was_there = os.path.exists(config.run_dir)  # False for a bad name
        with closed_on_error(exp.runner) as keep:  # a failed setup leaves nothing open
            key = make_key(config.seed, config.rng_impl)
            abstract = exp.runner.abstract_state(key)
            # Before the run folder: a replay that cannot fit is refused.
            memory = check_replay_fits(config, abstract, exp.runner.mesh.size)
            run = open_run(
                config,
                resume=resume,
                write_files=write_files,
                notify=notify,
                allow_changes=allow_changes,
                devices=exp.runner.mesh.size,
                log_to=log_to,
            )
            # A new run interrupted before its first update leaves no folder
            # (nor a --run-dir folder made for it).
            new = run.run_dir if resume is None and run.main else None
            unstarted = keep(UnstartedRun(new, parent_made=not parent_was_there))
            keep(lock_run(run))  # before anything is read or written
            if exp.device_note:
                run.say(exp.device_note)
            if memory:
                run.say(memory)
            attach_checkpointer(run, exp.runner, abstract)
            keep(run.checkpointer)
            start = restore(run, exp, accepted) if resume is not None else Start()
            resumed_at = start.done if resume is not None else None
            held.stop_if_asked(resumed_at)
            if resume is not None:
                # Not before: a refused resume changes nothing.
                save_resumed_config(run, start.done)
            # After the resume's checks (a refused resume starts no W&B run),
            # before compiling: W&B sets itself up while XLA compiles.
            wandb = keep(start_wandb(run, log_to, exp.runner.mesh.size))
            schedule = chunk_schedule(config, start.done)
            # Says it compiles; a complete run resumed has no phases to show.
            progress = keep(open_progress(run, exp, console and bool(schedule)))
            programs, state, compile_seconds = _compiled(
                run, exp, abstract, key, schedule, start
            )
            held.stop_if_asked(resumed_at)
            # After compiling: a run stopped compiling writes no logger files.
            sinks = open_sinks(run, start.history, loggers, wandb, log_to, progress)
            loop = _chunk_loop(run, exp, programs, sinks, log_to, start, progress)
        with run.lock or contextlib.nullcontext():  # released however train ends
            try:
                with exp.runner.session(state, key, start.done):
                    state, stopped_by = loop.run_schedule(state, schedule)
            finally:
                close(sinks, run.checkpointer)
            if stopped_by is None or loop.done != start.done:
                export = _exporter(run, exp, state, loop.done)
                return finish(run, loop, state, stopped_by, compile_seconds, export)
        # A signal held since the last check, taken over by the chunk loop
        # before its first chunk: nothing trained, nothing saved, as in setup.
        unstarted.close()
        raise stopped_unsaved(resumed_at)


def _compiled(
    run: Run,
    exp: Experiment,
    abstract: Any,
    key: jax.Array,
    schedule: list[tuple[int, int]],
    start: Start,
) -> tuple[Programs, Any, float]:
    """(programs, first state, compile seconds): the progress line's `compiling`."""
    start_compile = time.perf_counter()
    programs = compile_programs(
        exp, abstract, key, [n for _, n in schedule], need_init=start.state is None
    )
    state = programs.init(key) if start.state is None else start.state
    if run.checkpointer is not None:
        # Compiles the first save's packer and finiteness check outside steps/s.
        jax.block_until_ready((run.checkpointer.pack(state), params_finite(state)))
    jax.block_until_ready(state)
    return programs, state, time.perf_counter() - start_compile


def _chunk_loop(
    run: Run,
    exp: Experiment,
    programs: Programs,
    sinks: Sequence[Logger],
    log_to: Sequence[str],
    start: Start,
    progress: ConsoleLogger | NotebookProgress | None,
) -> ChunkLoop:
    """The chunk loop of a run set up (`train`).

    `progress` says `training…` once no process stopped before the first
    chunk: not before a stop that a peer's signal asked for during compiling.
    """
    phase, so_far = _training_phase(exp.runner), start.progress()
    return ChunkLoop(
        started=lambda: progress is not None and progress.phase(phase),
        run=run,
        programs=programs,
        sinks=sinks,
        log_to=log_to,
        steps_per_update=exp.runner.steps_per_update,
        num_devices=exp.runner.mesh.size,
        done=so_far.done,
        history=so_far.history,
        seconds_before=so_far.seconds_before,
        device_seconds_before=so_far.device_seconds_before,
        dispatch_ahead=exp.runner.dispatch_ahead,
        late_compile=lambda: exp.runner.late_compile_seconds,
        # None where the resume found no checkpoint it could use.
        last_saved=start.done if start.state is not None else None,
    )


def _checked_resume(
    config: TrainConfig, resume: str | pathlib.Path | None, allow_changes: bool
) -> tuple[TrainConfig, list[str], bool]:
    """(config, notes, normalised before) of a resume, checked before any write.

    The notes, said once `restore` accepts the resume (a refusal is its own
    line alone), name each changed field and, for a replay run left to choose
    its devices, that it resumes on its saved count (where it is not all of
    them), not the count it pinned as a change. A replay run begun
    normalising before that was refused goes on so (`validate`'s
    `normalised_before`).
    """
    if resume is None:
        return config, [], False
    given, (config, replay_note) = config, replay_devices(config, resume)
    saved, changes = check_resume(resume, config, allow_changes)
    if given.devices == saved.devices:  # `replay_devices` kept it as it was
        changes = [c for c in changes if not c.startswith("devices:")]
    notes = [f"resuming with {change}" for change in changes]
    notes += [replay_note] if replay_note else []
    return config, notes, saved.env.normalize_observations


def _exporter(run: Run, exp: Experiment, state: Any, updates: int) -> "PolicyExport":
    """`TrainResult.export`: writes the policy of the run's final `state` (`finish`)."""
    return PolicyExport(policy_source(run.config, exp, state, updates))


@dataclasses.dataclass(frozen=True, repr=False)
class PolicyExport:
    """A finished run's `export(out, *, overwrite=False)`: its final policy.

    A class, not a closure, so that a TrainResult pickles (to hand it to
    another process) as it did.
    """

    source: PolicySource

    def __call__(
        self, out: str | pathlib.Path, *, overwrite: bool = False
    ) -> pathlib.Path:
        """Writes the run's final policy to the folder `out`; returns it as a path.

        `out` is refused as `result.policy(out)` and `export_policy` refuse
        it: a folder holding an exported policy (unless `overwrite`), and
        always a run directory, whose params.msgpack is the run's own.

        Raises:
          ConfigError: `out` is refused (nothing is written then).

        """
        check_policy_folder(pathlib.Path(out), overwrite, "out")
        return write_policy(out, self.source)

    def __repr__(self) -> str:
        config = self.source.config
        return f"<export of {config.algo} on {config.env.id}>"
