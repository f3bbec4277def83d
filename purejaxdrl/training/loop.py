"""The chunk loop: dispatch, observe, evaluate, checkpoint, stop.

The host dispatches chunk k+1 before it reads chunk k's metrics, so the device
never waits for logging, evaluation or checkpointing: each of those is queued
behind its chunk and read one chunk later, but for the last chunk's
evaluation, dispatched once that chunk's record is taken. The training time
(`time`, steps/s) leaves compiles and evaluations out.
"""

import dataclasses
import functools
import math
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import jax
import numpy as np

from purejaxdrl.config import to_dict
from purejaxdrl.observe.loggers import Logger, logger_flags
from purejaxdrl.observe.numbers import return_text
from purejaxdrl.parallel import resume_command
from purejaxdrl.runners.base import EnvError
from purejaxdrl.training import faults
from purejaxdrl.training.device_state import params_finite, placed
from purejaxdrl.training.faults import NonFiniteError, StopSignals, agreed_stop
from purejaxdrl.training.programs import Programs
from purejaxdrl.training.run import Run
from purejaxdrl.training.schedule import is_due, pipelined, summarize_chunk


class Pending(NamedTuple):
    """A dispatched chunk whose results the host has not read yet.

    Attributes:
      metrics: its per-update metrics (device arrays).
      length: its number of updates.
      ends_at: updates done when it ends.
      snapshot: (packed state, parameters finite) queued behind it, or None.
      evaluated: the EvalResult of evaluation episodes after it, or the call
        that runs them (after the last chunk, or a blocking runner's), or None.

    """

    metrics: Any
    length: int
    ends_at: int
    snapshot: tuple[Any, Any] | None
    evaluated: Any


@dataclasses.dataclass
class ChunkLoop:
    """The host side of the chunk loop: what it has read and what it saved.

    Attributes:
      run: the run's context (checkpointer, messages).
      programs: the compiled programs.
      sinks: where each chunk's record goes.
      log_to: the run's `--logger` names, every process's (only process 0
        has sinks), for the resume commands its errors print.
      steps_per_update: environment steps per update, all devices.
      num_devices: devices training.
      done: updates whose results the host has read.
      history: one record per chunk read (a resumed run's earlier ones too).
      seconds_before: training time before a resume.
      device_seconds_before: its seconds times its devices, summed over
        sessions: the per-device speed of a run resumed on another count.
        None (a checkpoint that kept no count): as if on this session's.
      dispatch_ahead: dispatch chunk k+1 before reading chunk k (the
        runner's chunks are queued programs); else read each at once.
      late_compile: the runner's compile time inside chunks so far
        (`Runner.late_compile_seconds`), taken out of the training time.
      eval_seconds: this session's evaluations' time so far, taken out of
        the training time too (`read_evaluation`).
      last_saved: the update of the newest checkpoint asked for (or
        restored). Saves in between may be replaced by newer ones, never
        this one: after `checkpointer.wait()` it is on disk.
      poll_stop: () -> whether this process was asked to stop, polled after
        each update by a chunk that blocks to end early (`run_schedule`).
      started: called once no stop was agreed before the first chunk.

    """

    run: Run
    programs: Programs
    sinks: Sequence[Logger]
    log_to: Sequence[str]
    steps_per_update: int
    num_devices: int
    done: int
    history: list[dict[str, Any]]
    seconds_before: float
    device_seconds_before: float | None = None
    dispatch_ahead: bool = True
    late_compile: Callable[[], float] = lambda: 0.0
    eval_seconds: float = 0.0
    last_saved: int | None = None
    poll_stop: Callable[[], bool] | None = None
    started: Callable[[], Any] = lambda: None
    # Running state, set by the loop (not arguments): the newest episodes' and
    # evaluation's mean returns (NaN: none yet; a resumed run's history's), why
    # `eval.stop_at` stopped the run, whether a stop ends it (its records then
    # give no ETA), and `done` and the time this session began.
    mean_return: float = dataclasses.field(init=False, default=math.nan)
    eval_return: float = dataclasses.field(init=False, default=math.nan)
    reached: str | None = dataclasses.field(init=False, default=None)
    stopping: bool = dataclasses.field(init=False, default=False)
    start_updates: int = dataclasses.field(init=False)
    start: float = dataclasses.field(init=False, default_factory=time.perf_counter)

    def __post_init__(self) -> None:
        self.start_updates = self.done
        if self.device_seconds_before is None:
            self.device_seconds_before = self.seconds_before * self.num_devices
        # A resumed run's returns so far are its history's (else a session
        # that evaluates nothing reports, and writes, no evaluation).
        for rec in self.history:
            for key, name in (("episode/", "mean_return"), ("eval/", "eval_return")):
                value = rec.get(key + "mean_return")
                if value is not None and not math.isnan(value):
                    setattr(self, name, value)

    def dispatch(
        self, state: Any, index: int, length: int, ends_at: int, last: int
    ) -> tuple[Any, Pending]:
        """Queues chunk `index` and, when due, its evaluation and snapshot.

        Returns the state the chunk will end with, and the chunk as Pending.
        """
        config, checkpointer = self.run.config, self.run.checkpointer
        if self.poll_stop is None:
            state, metrics = self.programs.chunks[length](state)  # queued, not awaited
        else:  # blocks; one that stops early is saved by `save_stopped` alone
            state, metrics = self.programs.chunks[length](state, stop=self.poll_stop)
            # ran 0: a host run stopped waiting on its environments (`{}`).
            if (ran := len(next(iter(metrics.values()), ()))) < length:
                self.stopping = True  # or stalled: its speed says nothing
                return state, Pending(metrics, ran, ends_at - length + ran, None, None)
        evaluated = snapshot = None
        due = is_due(index, last, config.eval.every)
        if self.programs.evaluate is not None and due:
            # Keyed by updates done, which a resume's new schedule keeps.
            evaluated = functools.partial(self.programs.evaluate, state, ends_at)
            if index != last and self.dispatch_ahead:
                evaluated = evaluated()  # queued now: the next chunk donates `state`
            # Else once the chunk's record is taken: after the last nothing is left
            # to overlap (queued with it, an H200 Playground evaluation delayed the
            # chunk before's read); a blocking runner's is timed where it runs.
        if checkpointer is not None and is_due(index, last, config.checkpoint.every):
            # Waiting saves this one replaces go first: their device copies of
            # the state are not kept beside its copy.
            self.last_saved = checkpointer.drop_replaceable(self.last_saved)
            # Device copies queued behind this chunk; `state` is donated next.
            snapshot = (checkpointer.pack(state), params_finite(state))
        return state, Pending(metrics, length, ends_at, snapshot, evaluated)

    def observe(self, pending: Pending) -> None:
        """Reads a chunk's metrics (blocking on it only), logs and saves them."""
        host = jax.device_get(pending.metrics)
        finite = pending.snapshot and pending.snapshot[1]
        self.check_finite(host, pending.length, pending.ends_at, finite)
        summary = summarize_chunk(host)
        self.done = pending.ends_at
        rec = self.record(summary)
        if pending.evaluated is not None:
            self.read_evaluation(rec, pending.evaluated)
        self.history.append(rec)
        for sink in self.sinks:
            sink.write(dict(rec))  # a copy each: a sink that edits it edits only its
        if pending.snapshot is not None:
            metric = summary.get("episode/mean_return")
            self.save(pending.snapshot[0], metric)

    def elapsed(self) -> float:
        """Training time of this session so far: compiles and evaluations out."""
        taken_out = self.late_compile() + self.eval_seconds
        return time.perf_counter() - self.start - taken_out

    def record(self, summary: dict[str, float]) -> dict[str, Any]:
        """The chunk's record: progress, speed (`elapsed`), metrics."""
        done, per_update = self.done, self.steps_per_update
        elapsed = self.elapsed()
        # Speed: the run's so far (all its sessions); time left: this session's.
        sps = done * per_update / (self.seconds_before + elapsed)
        session = (done - self.start_updates) * per_update / elapsed
        left = (self.run.config.num_updates - done) * per_update / session
        device_seconds = self.device_seconds_before + elapsed * self.num_devices
        if not math.isnan(summary.get("episode/mean_return", math.nan)):
            self.mean_return = summary["episode/mean_return"]
        return {
            "env_steps": done * per_update,
            "updates": done,
            "time": self.seconds_before + elapsed,
            "steps_per_second": sps,
            # Per device-second: sessions on other device counts weigh in
            # by their devices (one session: sps / devices).
            "steps_per_second_per_device": done * per_update / device_seconds,
            "devices": self.num_devices,
            **({} if self.stopping else {"eta_seconds": left}),
            **summary,
        }

    def read_evaluation(self, rec: dict[str, Any], evaluated: Any) -> None:
        """Adds an evaluation to the record; notes when it reaches eval.stop_at.

        The host's time on it is out of the training time (`eval/seconds`):
        what it waits for a queued one's results (the device ran nothing else
        meanwhile, so at most the evaluation's own time), or all of one that
        runs here.
        """
        began = time.perf_counter()
        if callable(evaluated):
            evaluated = evaluated()
        result = jax.device_get(evaluated)
        rec["eval/seconds"] = time.perf_counter() - began
        self.eval_seconds += rec["eval/seconds"]
        self.eval_return = float(np.mean(result.returns))
        rec["eval/mean_return"] = self.eval_return
        rec["eval/mean_length"] = float(np.mean(result.lengths))
        rec["eval/episodes"] = int(np.size(result.returns))
        if result.ended is not None:  # cut at eval.max_steps: partial returns
            rec["eval/cut"] = int(np.sum(~np.asarray(result.ended)))
        for name, sums in result.metrics.items():
            rec[f"eval/env/{name}"] = float(np.mean(sums))
        stop_at = self.run.config.eval.stop_at
        if stop_at is not None and self.eval_return >= stop_at and self.reached is None:
            # Said with its update: the chunk queued behind it is evaluated too.
            shown, at = return_text(self.eval_return), rec["updates"]
            self.reached = f"eval.stop_at ({shown} >= {stop_at:g} at update {at:,})"
            rec.pop("eta_seconds", None)  # the run ends (after a chunk queued)

    def check_finite(
        self, host: dict[str, np.ndarray], length: int, ends_at: int, finite: Any
    ) -> None:
        """Stops the run when a metric or a parameter is not finite.

        `finite` is the chunk's "parameters finite" flag, or None without one.

        Raises:
          NonFiniteError: naming the update, the value and the last good
            checkpoint.

        """
        bad = faults.first_non_finite(host)
        if bad is None and finite is not None and not bool(finite):
            bad = ("a parameter", length - 1, math.nan)
        if bad is None:
            return
        update, env_id = ends_at - length + bad[1] + 1, self.run.config.env.id
        message = faults.non_finite_message(bad, update, env_id, self.last_good)
        raise NonFiniteError(message)

    def last_good(self, resume_with: str = "`") -> str:
        """The last good checkpoint, and its resume command: `resume_with` ends it."""
        checkpointer = self.run.checkpointer
        if checkpointer is None:
            return "no checkpoint was saved before it (the run has no directory)"
        checkpointer.wait()  # the last good checkpoint is on disk
        if self.last_saved is None:
            return "no checkpoint was saved before it"
        flags = logger_flags(self.log_to)  # so it logs there still
        again = resume_command("train", self.run.run_dir, flags, self.num_devices)
        return (
            f"the last good checkpoint is update {self.last_saved:,} in "
            f"{checkpointer.directory / str(self.last_saved)}; resume it with "
            f"`{again}{resume_with}"
        )

    def save(self, packed: Any, metric: float | None = None) -> None:
        """Saves a packed state as update `done`'s checkpoint, in the background.

        Should the previous save still wait for the writer, this one replaces
        it (the newest on disk would be no newer), unless `checkpoint.wait`.
        """
        skippable = not self.run.config.checkpoint.wait
        checkpointer = self.run.checkpointer
        checkpointer.save(self.done, packed, self.meta(), metric, skippable=skippable)
        self.last_saved = self.done

    def meta(self) -> dict[str, Any]:
        """What a checkpoint stores besides the state: progress and history."""
        config, done = self.run.config, self.done
        return {
            "updates": done,
            "env_steps": done * self.steps_per_update,
            "num_updates": config.num_updates,
            "train_seconds": self.seconds_before + (elapsed := self.elapsed()),
            "device_seconds": self.device_seconds_before + elapsed * self.num_devices,
            "devices": self.num_devices,
            "config": to_dict(config),
            "history": list(self.history),
            "state": self.run.state_index,
        }

    def run_schedule(
        self, state: Any, schedule: list[tuple[int, int]]
    ) -> tuple[Any, str | None]:
        """Trains `schedule`'s chunks, each dispatched before the last is read.

        SIGINT / SIGTERM stop the run after the current chunk (a blocking one's
        update), with a checkpoint where it has a checkpointer (without one, the
        state is returned unsaved; none before the first); `eval.stop_at` after
        the evaluation reaching it.

        Returns:
          The final state, and what stopped the run early (None: the end).

        """
        checkpointer = self.run.checkpointer
        # No files: the run stops as well (all processes together), unsaved.
        signals = StopSignals(peer=not self.run.main, saves=checkpointer is not None)
        if not self.dispatch_ahead:
            self.poll_stop = lambda: signals.requested is not None
        last = schedule[-1][0] if schedule else -1
        if schedule:
            state = placed(state, self.programs.chunks[schedule[0][1]])

        def dispatched() -> Iterator[Pending]:
            nonlocal state
            done = self.done
            for index, length in schedule:
                stop = agreed_stop(signals)
                if stop or self.reached is not None:
                    self.stopping = True  # for the chunk already queued
                    return
                if index == schedule[0][0]:  # the progress line's `training…`
                    self.started()
                state, queued = self.dispatch(state, index, length, done + length, last)
                done = queued.ends_at  # a chunk that stopped early ended before
                if queued.length:  # else no update to read
                    yield queued
                if queued.length < length:  # so did every process's: say why
                    agreed_stop(signals)  # (a peer's signal), even after the last
                    return

        with signals:
            try:
                pipelined(dispatched(), self.observe, ahead=self.dispatch_ahead)
            except EnvError as e:
                raise type(e)(f"{e}; {self.last_good()}") from e.__cause__
            stopped_by = self.stopped_by(signals)
            unsaved = self.start_updates != self.done != self.last_saved
            if checkpointer is not None and stopped_by and unsaved:
                self.save_stopped(state)
            jax.block_until_ready(state)
            if checkpointer is not None:
                checkpointer.wait()
                self.say_if_saves_held(checkpointer.waited)
        return state, stopped_by

    def say_if_saves_held(self, waited: float) -> None:
        """Says when waiting for checkpoint saves was much of the training time."""
        checkpoint = self.run.config.checkpoint
        resumed = self.start_updates > 0  # its settings: in config.yaml
        elapsed, count = self.elapsed(), jax.process_count()
        advice = faults.saves_held_advice(waited, elapsed, checkpoint, count, resumed)
        if advice is not None:
            self.run.say(advice)

    def stopped_by(self, signals: Any) -> str | None:
        """What stopped the run early: a signal, `eval.stop_at`, or None."""
        finished = self.done >= self.run.config.num_updates
        if getattr(signals, "requested", None) is not None:  # held: StopSignals
            # A signal during the last chunk stopped nothing: the run ended.
            return None if finished else signals.requested
        if self.reached is not None and self.done < self.run.config.num_updates:
            return self.reached
        return None

    def save_stopped(self, state: Any) -> None:
        """Checkpoints a stopped run's state (if its parameters are finite)."""
        packed, finite = self.run.checkpointer.pack(state), params_finite(state)
        self.check_finite({}, 1, self.done, finite)
        # Ranked by its record's return, as a resume's backfill and
        # `--checkpoint best` rank it (a host run's partial chunk has one too).
        last = self.history[-1] if self.history else {}
        metric = last.get("episode/mean_return")
        self.save(packed, metric if last.get("updates") == self.done else None)
