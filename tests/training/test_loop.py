"""The chunk loop's steps, with stand-in programs (nothing compiles here)."""

import json
import math
import pathlib
import re
import shlex
import types

import jax
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.observe.evaluation import EvalResult
from purejaxdrl.training.loop import ChunkLoop
from purejaxdrl.training.programs import Programs
from purejaxdrl.training.result import finish
from purejaxdrl.training.run import Run
from purejaxdrl.training.schedule import is_due


class ListSink:
    def __init__(self, events):
        self.events = events

    def write(self, record):
        self.events.append(f"write {record['updates']}")

    def close(self):
        pass


def _loop(
    events,
    *,
    num_updates=8,
    stop_at=None,
    evaluate=None,
    length=2,
    ahead=True,
    history=(),
    done=0,
    num_devices=1,
):
    overrides = {"total_steps": 512 * num_updates}
    if stop_at is not None:
        overrides["eval"] = {"episodes": 1, "every": 1, "stop_at": stop_at}
    config = pjd.apply_overrides(pjd.TrainConfig(), overrides)

    def chunk(state, stop=None):  # a blocking runner's: polls `stop`
        events.append(f"dispatch {state}")
        ones = np.ones(length, np.float32)
        return state + length, {"loss/total": ones * state}

    programs = Programs(chunks={length: chunk}, init=None, evaluate=evaluate)
    run = Run(config=config, run_dir=None, main=True)
    return ChunkLoop(
        run=run,
        programs=programs,
        sinks=[ListSink(events)],
        log_to=(),
        steps_per_update=512,
        num_devices=num_devices,
        done=done,
        history=list(history),
        seconds_before=0.0,
        dispatch_ahead=ahead,
    )


def test_is_due_every_n_chunks_and_after_the_last():
    due = [is_due(i, 5, 2) for i in range(6)]
    assert due == [False, True, False, True, False, True]
    assert [is_due(i, 3, 0) for i in range(4)] == [False, False, False, True]


@pytest.mark.parametrize("field", ["start_updates", "start", "reached", "stopping"])
def test_the_loop_s_running_state_is_not_an_argument(field):
    # A value for `start_updates` was silently replaced by `done`: the loop's
    # own state is set by the loop, never taken from its caller.
    base = _loop([], done=3)
    fields = ("run", "programs", "sinks", "log_to", "steps_per_update")
    given = {f: getattr(base, f) for f in fields}
    with pytest.raises(TypeError, match=field):
        ChunkLoop(**given, num_devices=1, done=3, history=[], seconds_before=0.0,
                  **{field: 99})  # fmt: skip
    assert base.start_updates == 3 and base.reached is None


def test_each_chunk_is_dispatched_before_the_previous_one_is_read():
    events = []
    loop = _loop(events)
    state, stopped_by = loop.run_schedule(0, [(i, 2) for i in range(4)])
    assert events == [
        "dispatch 0",
        "dispatch 2",
        "write 2",
        "dispatch 4",
        "write 4",
        "dispatch 6",
        "write 6",
        "write 8",
    ]
    assert state == 8 and stopped_by is None and loop.done == 8
    assert [r["loss/total"] for r in loop.history] == [0.0, 2.0, 4.0, 6.0]
    assert [r["env_steps"] for r in loop.history] == [1024, 2048, 3072, 4096]


def test_a_runner_whose_chunks_block_has_each_read_at_once():
    # Sebulba's chunks return when their updates are done: nothing to overlap.
    events = []
    loop = _loop(events, ahead=False)
    state, stopped_by = loop.run_schedule(0, [(i, 2) for i in range(3)])
    assert events == [
        "dispatch 0",
        "write 2",
        "dispatch 2",
        "write 4",
        "dispatch 4",
        "write 6",
    ]
    assert state == 6 and stopped_by is None and loop.done == 6


def test_eval_stop_at_stops_after_the_chunk_already_queued():
    events = []

    def evaluate(state, updates):
        events.append(f"evaluate {state} after {updates} updates")
        return EvalResult(np.array([500.0]), np.array([500]))

    loop = _loop(events, stop_at=475.0, evaluate=evaluate)
    state, stopped_by = loop.run_schedule(0, [(i, 2) for i in range(4)])
    # Chunk 0's evaluation reaches 475 when it is read, after chunk 1 was
    # dispatched; chunk 1 is read, nothing more is dispatched.
    assert events == [
        "dispatch 0",
        "evaluate 2 after 2 updates",
        "dispatch 2",
        "evaluate 4 after 4 updates",
        "write 2",
        "write 4",
    ]
    assert stopped_by == "eval.stop_at (500.0 >= 475 at update 2)"
    assert loop.eval_return == 500.0 and loop.done == 4
    assert loop.history[0]["eval/mean_return"] == 500.0
    # The run ends there: neither record has an ETA (hr21 #3).
    assert ["eta_seconds" in r for r in loop.history] == [False, False]


def test_an_evaluation_record_means_its_episodes_and_stop_at_is_reached_at_equality():
    # Three episodes, by hand: returns 1, 2, 6 (mean 3), lengths 2, 4, 9
    # (mean 5), the second cut at the step cap, an environment metric 3, 0, 6
    # (mean 3). `stop_at` is "reaches": a mean equal to it stops the run.
    returns = np.array([1.0, 2.0, 6.0], np.float32)
    lengths = np.array([2, 4, 9], np.int32)
    ended = np.array([True, False, True])
    metrics = {"t": np.array([3.0, 0.0, 6.0], np.float32)}

    def evaluate(state, updates):
        return EvalResult(returns, lengths, metrics, ended)

    loop = _loop([], stop_at=3.0, evaluate=evaluate)
    _, stopped_by = loop.run_schedule(0, [(i, 2) for i in range(4)])
    record = loop.history[0]
    assert record["eval/mean_return"] == 3.0
    assert record["eval/mean_length"] == 5.0
    assert record["eval/episodes"] == 3 and record["eval/cut"] == 1
    assert record["eval/env/t"] == 3.0
    assert stopped_by == "eval.stop_at (3.00 >= 3 at update 2)"


def test_a_non_finite_metric_names_the_update_and_the_last_checkpoint(tmp_path):
    loop = _loop([])
    host = {"loss/total": np.array([0.0, 1.0, np.nan, 2.0])}
    # A chunk of 4 updates ending at update 20: index 2 is update 19.
    with pytest.raises(pjd.NonFiniteError, match="update 19: loss/total is nan"):
        loop.check_finite(host, 4, 20, None)
    with pytest.raises(pjd.NonFiniteError, match="no checkpoint was saved before"):
        loop.check_finite(host, 4, 20, None)

    class Saved:
        directory = pathlib.Path(tmp_path)

        def wait(self):
            pass

    loop.run.checkpointer, loop.run.run_dir, loop.last_saved = Saved(), tmp_path, 12
    message = f"the last good checkpoint is update 12 in {tmp_path / '12'}"
    with pytest.raises(pjd.NonFiniteError, match=message):
        loop.check_finite(host, 4, 20, None)
    # Finite metrics but non-finite parameters: the chunk's last update.
    finite = {"loss/total": np.zeros(4)}
    with pytest.raises(pjd.NonFiniteError, match="update 20: a parameter is nan"):
        loop.check_finite(finite, 4, 20, np.bool_(False))
    loop.check_finite(finite, 4, 20, np.bool_(True))  # all finite: no error
    assert math.isnan(loop.mean_return)


def _saving(loop, tmp_path, last_saved=12):
    class Saved:
        directory = pathlib.Path(tmp_path)

        def wait(self):
            pass

    run_dir = pathlib.Path(tmp_path) / "cartpole_ppo_20261203-180522"
    loop.run.checkpointer, loop.run.run_dir, loop.last_saved = (
        Saved(),
        run_dir,
        last_saved,
    )
    return run_dir


def _resume_command(message):
    # The command between the backquotes, split as a shell splits it.
    words = shlex.split(re.search(r"resume it with `([^`]*)`", message).group(1))
    # A run on one device (`_loop`'s): no JAX_NUM_CPU_DEVICES setting, however
    # many CPU devices the tests fake; the callers' lists start "purejaxdrl".
    return words


def test_the_resume_command_of_a_non_finite_error_is_well_formed(tmp_path):
    loop = _loop([])
    run_dir = _saving(loop, tmp_path)
    with pytest.raises(pjd.NonFiniteError) as raised:
        loop.check_finite({"loss/total": np.array([np.nan])}, 1, 20, None)
    words = _resume_command(str(raised.value))
    assert words == ["purejaxdrl", "train", "--resume", str(run_dir), "--override"]
    assert "a lower learning rate" in str(raised.value)


def test_the_resume_command_of_a_non_finite_error_keeps_the_run_s_devices(
    tmp_path, monkeypatch
):
    # A run on 2 faked CPU devices resumes only where 2 are faked again: its
    # command starts with their setting, or, run as printed, it is refused.
    loop = _loop([], num_devices=2)
    run_dir = _saving(loop, tmp_path)
    monkeypatch.setattr(jax, "default_backend", lambda: "cpu")
    with pytest.raises(pjd.NonFiniteError) as raised:
        loop.check_finite({"loss/total": np.array([np.nan])}, 1, 20, None)
    again = re.search(r"resume it with `([^`]*)`", str(raised.value)).group(1)
    assert (
        again == f"JAX_NUM_CPU_DEVICES=2 purejaxdrl train --resume {run_dir} --override"
    )


def test_the_resume_command_of_a_non_finite_error_keeps_the_run_s_loggers(tmp_path):
    # Loggers are not in the saved config: the command, run as printed, must
    # go on logging where the run did, from every process (only process 0
    # has sinks; a user's own sink has no flag to repeat).
    loop = _loop([])
    run_dir = _saving(loop, tmp_path)
    loop.sinks, loop.log_to = [], ("tensorboard", "wandb", "tensorboard")
    with pytest.raises(pjd.NonFiniteError) as raised:
        loop.check_finite({"loss/total": np.array([np.nan])}, 1, 20, None)
    assert _resume_command(str(raised.value)) == [
        "purejaxdrl", "train", "--resume", str(run_dir), "--logger", "tensorboard",
        "--logger", "wandb", "--override",
    ]  # fmt: skip


def test_an_environment_s_non_finite_output_is_named_before_the_learner(tmp_path):
    # Update 19's NaN observation made the learner's loss NaN at the same
    # update: the message names the environment, its output and the update,
    # and does not send the user to the learning rate.
    loop = _loop([])
    run_dir = _saving(loop, tmp_path)
    host = {
        "loss/total": np.array([0.0, 1.0, np.nan, np.nan]),
        "non_finite/final_observation": np.array([0.0, 0.0, 3.0, 64.0]),
        "non_finite/observation": np.array([0.0, 0.0, 3.0, 0.0]),
        "non_finite/reward": np.zeros(4),
    }
    with pytest.raises(pjd.NonFiniteError) as raised:
        loop.check_finite(host, 4, 20, None)
    message = str(raised.value)
    assert message.startswith(
        f"update 19: environment {loop.run.config.env.id} returned a non-finite "
        "observation (3 entries in the update's unroll); the environment, not "
        "the learner, went non-finite"
    )
    assert "learning rate" not in message and "\n" not in message
    assert f"the last good checkpoint is update 12 in {tmp_path / '12'}" in message
    words = _resume_command(message)
    assert words == ["purejaxdrl", "train", "--resume", str(run_dir)]
    # A learner's NaN before the environment's is the learner's.
    host["loss/total"] = np.array([np.nan, 1.0, 1.0, 1.0])
    with pytest.raises(pjd.NonFiniteError, match="update 17: loss/total is nan"):
        loop.check_finite(host, 4, 20, None)
    # A reward alone, one entry.
    host = {"non_finite/reward": np.array([0.0, 1.0]), "loss/total": np.zeros(2)}
    with pytest.raises(pjd.NonFiniteError, match="reward \\(1 entry in"):
        loop.check_finite(host, 2, 20, None)


class FakeSignals:
    """Stands in for StopSignals: a sink "receives" SIGTERM while logging."""

    latest = None

    def __init__(self, peer, saves=True):
        self.requested = None
        FakeSignals.latest = self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


class SavingCheckpointer:
    def __init__(self, events):
        self.events = events
        self.waited = 0.0
        self.skippable = []  # per save: may a newer save replace it?

    def pack(self, state):
        return f"packed {state}"

    def drop_replaceable(self, newest):
        return newest  # nothing waits here

    def save(self, step, packed, meta, metric, *, skippable):
        self.skippable.append(skippable)
        self.events.append(f"save {step} ({packed}, updates={meta['updates']})")

    def wait(self):
        pass


def test_a_signal_stops_after_the_queued_chunk_with_a_checkpoint(monkeypatch):
    import purejaxdrl.training.loop as loop_module

    monkeypatch.setattr(loop_module, "StopSignals", FakeSignals)
    monkeypatch.setattr(loop_module, "params_finite", lambda state: np.bool_(True))
    events = []
    loop = _loop(events)
    loop.run.config = pjd.apply_overrides(loop.run.config, {"checkpoint": {"every": 0}})
    loop.run.checkpointer = SavingCheckpointer(events)

    class SignalledSink(ListSink):
        def write(self, record):
            super().write(record)
            FakeSignals.latest.requested = "SIGTERM"

    loop.sinks = [SignalledSink(events)]
    state, stopped_by = loop.run_schedule(0, [(i, 2) for i in range(4)])
    # The signal arrives while chunk 0 is logged; chunk 1, already queued, is
    # read, nothing more is dispatched, and update 4 is saved (checkpoint.every
    # 0 would otherwise save only after the last chunk).
    assert events == [
        "dispatch 0",
        "dispatch 2",
        "write 2",
        "write 4",
        "save 4 (packed 4, updates=4)",
    ]
    assert stopped_by == "SIGTERM" and state == 4
    assert loop.done == 4 and loop.last_saved == 4
    # The record the run ends with has no ETA (hr21 #3): it would not finish.
    assert ["eta_seconds" in r for r in loop.history] == [True, False]
    # A newer save may replace it while it waits for the writer: never the loop.
    assert loop.run.checkpointer.skippable == [True]


def test_checkpoint_wait_writes_every_due_save(monkeypatch):
    import purejaxdrl.training.loop as loop_module

    monkeypatch.setattr(loop_module, "StopSignals", FakeSignals)
    monkeypatch.setattr(loop_module, "params_finite", lambda state: np.bool_(True))
    loop = _loop([])
    loop.run.config = pjd.apply_overrides(
        loop.run.config, {"checkpoint": {"wait": True}}
    )
    loop.run.checkpointer = SavingCheckpointer([])
    loop.run_schedule(0, [(i, 2) for i in range(3)])
    assert loop.run.checkpointer.skippable == [False, False, False]


def test_waiting_saves_are_dropped_before_the_next_due_save_is_packed(monkeypatch):
    # Else their device copies of the state sit beside the new one: with
    # keep_best, four whole states (replay buffers too) at once.
    import purejaxdrl.training.loop as loop_module

    monkeypatch.setattr(loop_module, "StopSignals", FakeSignals)
    monkeypatch.setattr(loop_module, "params_finite", lambda state: np.bool_(True))
    events = []

    class Dropping(SavingCheckpointer):
        def pack(self, state):
            self.events.append(f"pack {state}")
            return super().pack(state)

        def drop_replaceable(self, newest):
            self.events.append(f"drop (newest {newest})")
            return None if newest == 2 else newest  # as if 2 waited, dropped

    loop = _loop(events)
    loop.run.checkpointer = Dropping(events)
    loop.run_schedule(0, [(i, 2) for i in range(3)])
    assert [e for e in events if not e.startswith("write")] == [
        "dispatch 0",
        "drop (newest None)",
        "pack 2",
        "dispatch 2",
        "drop (newest None)",
        "pack 4",
        "save 2 (packed 2, updates=2)",
        "dispatch 4",
        "drop (newest 2)",  # 2 dropped: the newest kept is returned
        "pack 6",
        "save 4 (packed 4, updates=4)",
        "save 6 (packed 6, updates=6)",
    ]
    assert loop.last_saved == 6


def test_evaluations_are_keyed_by_the_updates_done_not_the_chunks_index():
    # A resume with another budget renumbers the chunks from 0: keyed by
    # their index, its evaluations replayed the episodes of earlier ones.
    keys = []

    def evaluate(state, updates):
        keys.append(updates)
        return EvalResult(np.array([1.0]), np.array([1]))

    loop = _loop([], evaluate=evaluate, num_updates=12)
    loop.run.config = pjd.apply_overrides(
        loop.run.config, {"eval": {"episodes": 1, "every": 1}}
    )
    loop.done = loop.start_updates = 6  # resumed after update 6
    loop.run_schedule(6, [(0, 2), (1, 2), (2, 2)])
    assert keys == [8, 10, 12]


def test_the_last_evaluation_is_dispatched_after_the_last_record_is_taken(
    monkeypatch,
):
    # Its time is not training's: on an H200 a Playground evaluation queued
    # with the last chunk delayed the records of the last two chunks.
    clock = types.SimpleNamespace(perf_counter=lambda: now[0])
    now = [0.0]
    monkeypatch.setattr("purejaxdrl.training.loop.time", clock)
    events = []

    def evaluate(state, updates):
        events.append(f"evaluate {state} after {updates} updates")
        now[0] += 100.0  # a long evaluation
        return EvalResult(np.array([7.0]), np.array([9]))

    loop = _loop(events, evaluate=evaluate, num_updates=4)
    loop.run.config = pjd.apply_overrides(loop.run.config, {"eval": {"episodes": 1}})

    def chunk(state, stop=None):  # a blocking runner's: polls `stop`
        events.append(f"dispatch {state}")
        now[0] += 1.0  # each chunk's second of training
        return state + 2, {"loss/total": np.ones(2, np.float32)}

    loop.programs = Programs(chunks={2: chunk}, init=None, evaluate=evaluate)
    loop.start = 0.0
    loop.run_schedule(0, [(0, 2), (1, 2)])
    assert events == [
        "dispatch 0",
        "dispatch 2",
        "write 2",
        "evaluate 4 after 4 updates",
        "write 4",
    ]
    assert [r["time"] for r in loop.history] == [2.0, 2.0]
    assert loop.history[-1]["steps_per_second"] == 4 * 512 / 2.0
    assert loop.history[-1]["eval/mean_return"] == 7.0 == loop.eval_return


def test_saves_that_held_training_back_are_said_with_the_fix(monkeypatch):
    # A multi-process run saves on the loop's thread, holding training back
    # (a single process's queue once did too: the quickstart's CartPole
    # trained at a third of its speed, its steps/s blaming nothing).
    import purejaxdrl.training.loop as loop_module

    monkeypatch.setattr(loop_module, "StopSignals", FakeSignals)
    monkeypatch.setattr(loop_module, "params_finite", lambda state: np.bool_(True))
    # 4 s trained, whatever this machine's load: the saves' 1.2 s is 30 %.
    monkeypatch.setattr(ChunkLoop, "elapsed", lambda self: 4.0)

    class SlowCheckpointer(SavingCheckpointer):
        def save(self, step, packed, meta, metric, *, skippable):
            self.waited += 0.3  # the caller waits, as a multi-process run's does

    events = []
    loop = _loop(events)
    loop.run.checkpointer = SlowCheckpointer(events)
    loop.run_schedule(0, [(i, 2) for i in range(4)])  # 4 saves: 1.2 s held
    (line,) = loop.run.messages
    assert line.startswith("checkpoint saves held training for 1.2 s of its ")
    assert line.endswith(
        "(a save every 1 chunk(s)); pass --checkpoint.every 10 (checkpoint.every"
        "=10 in Python) to save less often, 0 only at the end and on Ctrl-C."
    )
    fast = _loop([])
    fast.run.checkpointer = SavingCheckpointer([])
    fast.run_schedule(0, [(i, 2) for i in range(4)])
    assert fast.run.messages == []


class _Saves:
    """A checkpointer that records what each save was ranked by."""

    def __init__(self):
        self.metrics = []

    def pack(self, state):
        return state

    def save(self, step, packed, meta, metric, skippable):
        self.metrics.append((step, metric))


def test_a_chunk_that_a_stop_ends_early_gives_no_eta(monkeypatch):
    # hr21 #3: a host run stalled 88 s in its second update, then stopped:
    # its last line said "0 steps/s ... ETA 56557 s", worked out from the
    # stall. A chunk that ends early ends the run: its record has no ETA.
    import purejaxdrl.training.loop as loop_module

    monkeypatch.setattr(loop_module, "StopSignals", FakeSignals)
    monkeypatch.setattr(loop_module, "params_finite", lambda state: np.bool_(True))
    events = []
    loop = _loop(events, ahead=False)
    loop.run.checkpointer = SavingCheckpointer(events)

    def chunk(state, stop):
        ran = 1 if state == 2 else 2  # the second chunk stops after 1 update
        if ran == 1:
            FakeSignals.latest.requested = "SIGINT"
        events.append(f"dispatch {state}")
        return state + ran, {"loss/total": np.ones(ran, np.float32) * state}

    loop.programs = Programs(chunks={2: chunk}, init=None, evaluate=None)
    state, stopped_by = loop.run_schedule(0, [(i, 2) for i in range(4)])
    assert stopped_by == "SIGINT" and state == 3 and loop.done == 3
    assert [r["updates"] for r in loop.history] == [2, 3]
    assert loop.history[0]["eta_seconds"] > 0
    assert "eta_seconds" not in loop.history[1]


def test_a_stopped_run_ranks_its_save_by_its_last_records_return(monkeypatch):
    # As a resume's backfill and `--checkpoint best` rank it: keep-best must
    # not treat the save a signal made as one without a return.
    import purejaxdrl.training.loop as loop_module

    monkeypatch.setattr(loop_module, "params_finite", lambda state: True)
    loop = _loop([])
    loop.run.checkpointer = _Saves()
    state = {"w": np.ones(3)}
    loop.history = [{"updates": 4, "episode/mean_return": 7.5}]
    loop.done = 4
    loop.save_stopped(state)
    loop.history = [{"updates": 4, "episode/mean_return": 7.5}]
    loop.done = 5  # no record at the update it stopped after: unranked
    loop.save_stopped(state)
    assert loop.run.checkpointer.metrics == [(4, 7.5), (5, None)]


def test_a_resumed_run_reports_its_history_s_last_evaluation(tmp_path):
    # A session that evaluates nothing (stopped before its next due one, or a
    # complete run resumed) reported no evaluation, and its summary.json
    # overwrote the one before with null.
    history = [
        {"updates": 2, "episode/mean_return": 10.0, "eval/mean_return": 20.0},
        {"updates": 4, "episode/mean_return": 11.0, "eval/mean_return": 25.0},
        {"updates": 6, "episode/mean_return": math.nan},  # JSON: null
        {"updates": 8, "episode/mean_return": None, "eval/mean_return": None},
    ]
    loop = _loop([], num_updates=12, history=history, done=8)
    assert loop.eval_return == 25.0 and loop.mean_return == 11.0
    loop.run.run_dir = tmp_path
    loop.run_schedule(8, [(0, 2)])  # no evaluation in this session
    assert loop.done == 10 and "eval/mean_return" not in loop.history[-1]
    params = types.SimpleNamespace(params={"w": np.ones(2)})
    result = finish(loop.run, loop, types.SimpleNamespace(agent=params), "SIGINT", 1.0)
    assert result.eval_return == 25.0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["eval_return"] == 25.0 and summary["updates"] == 10


class _Arriving:
    """An evaluation's returns that reach the host `seconds` after it asks."""

    def __init__(self, clock, values, seconds):
        self.clock, self.values, self.seconds = clock, np.asarray(values), seconds

    def copy_to_host_async(self):  # what `jax.device_get` calls first
        self.clock[0] += self.seconds

    def __array__(self, dtype=None, copy=None):
        return self.values


@pytest.mark.parametrize("ahead", [True, False])
def test_evaluations_between_chunks_are_not_training_time(monkeypatch, ahead):
    # Evaluating after every chunk cut a CartPole run's steps/s by 28%: the
    # evaluations' time was counted as training.
    now = [0.0]
    monkeypatch.setattr(
        "purejaxdrl.training.loop.time",
        types.SimpleNamespace(perf_counter=lambda: now[0]),
    )

    def queued(state, updates):  # a device evaluation: its results come later
        return EvalResult(_Arriving(now, [5.0], 100.0), np.array([9]))

    def played(state, updates):  # a host evaluation: played at the call
        now[0] += 100.0
        return EvalResult(np.array([5.0]), np.array([9]))

    def chunk(state, stop=None):  # a blocking runner's: polls `stop`
        now[0] += 1.0  # each chunk's second of training
        return state + 2, {"loss/total": np.ones(2, np.float32)}

    evaluate = queued if ahead else played
    loop = _loop([], evaluate=evaluate, num_updates=6, ahead=ahead)
    loop.run.config = pjd.apply_overrides(
        loop.run.config, {"eval": {"episodes": 1, "every": 1}}
    )
    loop.programs = Programs(chunks={2: chunk}, init=None, evaluate=evaluate)
    loop.start = 0.0
    loop.run_schedule(0, [(0, 2), (1, 2), (2, 2)])
    # Dispatched ahead, chunk 1 is queued before chunk 0's record is taken:
    # its second is in that record (as without evaluation).
    times = [2.0, 3.0, 3.0] if ahead else [1.0, 2.0, 3.0]
    assert [r["time"] for r in loop.history] == times
    assert [r["eval/seconds"] for r in loop.history] == [100.0] * 3
    assert loop.history[-1]["steps_per_second"] == 6 * 512 / 3.0
    assert loop.eval_seconds == 300.0 and loop.eval_return == 5.0


@pytest.mark.parametrize(
    ("device_seconds_before", "want_device_seconds"),
    [
        (10.0, 10.0 + 5.0 * 2),  # 10 s on 1 device, then 5 s on 2
        (None, (10.0 + 5.0) * 2),  # a checkpoint that kept no count: as if on 2
    ],
)
def test_speed_per_device_weighs_each_session_by_its_devices(
    device_seconds_before, want_device_seconds
):
    # A run of 10 s on 1 device resumed for 5 s on 2 showed the run's steps/s
    # over 2 (29,751 "per device" where its sessions ran 112,974 and 20,194).
    base = _loop([], num_updates=8, done=6)
    loop = ChunkLoop(
        **{
            **{f: getattr(base, f) for f in ("run", "programs", "sinks", "log_to")},
            "steps_per_update": 512,
            "num_devices": 2,
            "done": 6,
            "history": [],
            "seconds_before": 10.0,
            "device_seconds_before": device_seconds_before,
        }
    )
    loop.done, loop.elapsed = 8, lambda: 5.0  # 2 updates in this session
    rec = loop.record({})
    assert rec["steps_per_second"] == pytest.approx(8 * 512 / 15.0)
    assert rec["steps_per_second_per_device"] == pytest.approx(
        8 * 512 / want_device_seconds
    )
    assert loop.meta()["device_seconds"] == pytest.approx(want_device_seconds)
