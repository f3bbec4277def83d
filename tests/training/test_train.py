"""The recipe's own steps: sink checks, opening the sinks, closing, finishing."""

import json
import math
import time
import types

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.observe.loggers import JsonlLogger
from purejaxdrl.observe.progress import ConsoleLogger
from purejaxdrl.training.result import (
    check_sinks,
    close,
    finish,
    open_progress,
    open_sinks,
)
from purejaxdrl.training.run import Run


def _config(num_updates: int = 8) -> pjd.TrainConfig:
    # 4 envs x 128 steps = 512 steps per update.
    return pjd.apply_overrides(pjd.TrainConfig(), {"total_steps": 512 * num_updates})


def _experiment(devices: int = 1):
    mesh = types.SimpleNamespace(size=devices)
    return types.SimpleNamespace(
        runner=types.SimpleNamespace(steps_per_update=512, mesh=mesh)
    )


def testcheck_sinks_names_unknown_sinks_and_needs_a_run_directory():
    with pytest.raises(ValueError, match=r"log_to=\['nope'\]: the sinks are"):
        check_sinks(["tensorboard", "nope"], True)
    with pytest.raises(ValueError, match="pass write_files=True"):
        check_sinks(["tensorboard"], False)
    check_sinks(["tensorboard", "wandb"], True)
    check_sinks([], False)


def test_open_sinks_rewrites_metrics_jsonl_with_the_checkpoints_history(tmp_path):
    # What the killed process wrote after its last checkpoint is dropped.
    (tmp_path / "metrics.jsonl").write_text('{"updates": 2}\n{"updates": 4}\n')
    run = Run(config=_config(), run_dir=tmp_path, main=True)
    extra = object()
    sinks = open_sinks(run, [{"updates": 2}], [extra], None, [], None)
    assert sinks[0] is extra and isinstance(sinks[1]._sink, JsonlLogger)
    assert len(sinks) == 2
    assert (tmp_path / "metrics.jsonl").read_text() == '{"updates": 2}\n'


def test_only_process_0_writes():
    run = Run(config=_config(), run_dir=None, main=False)
    assert open_sinks(run, [], [object()], None, [], None) == []
    assert open_progress(run, _experiment(), True) is None


def test_close_closes_every_sink_and_hides_a_checkpointer_error():
    closed = []

    class Sink:
        def close(self):
            closed.append("sink")

    class Failing:
        def close(self):
            closed.append("checkpointer")
            raise RuntimeError("disk full")

    close([Sink(), Sink()], Failing())
    assert closed == ["sink", "sink", "checkpointer"]


def _loop(done, start_updates, seconds=10.0, before=0.0, recorded=None):
    """A ChunkLoop `seconds` into a session after `before` s of earlier ones,
    its last chunk's record taken `recorded` s into this one."""
    recorded = seconds if recorded is None else recorded
    return types.SimpleNamespace(
        start=time.perf_counter() - seconds,
        elapsed=lambda: seconds - 0.5,
        late_compile=lambda: 0.5,  # a host runner's learner, compiled in chunk 1
        done=done,
        start_updates=start_updates,
        steps_per_update=512,
        mean_return=1.5,
        num_devices=2,
        history=[{"updates": done, "time": before + recorded}],
        seconds_before=before,
        eval_return=math.nan,
    )


def test_finish_times_the_whole_run_to_its_last_record_and_writes_the_summary(
    tmp_path,
):
    run = Run(config=_config(8), run_dir=tmp_path, main=True, messages=["hi"])
    state = types.SimpleNamespace(agent=types.SimpleNamespace(params={"w": np.ones(2)}))
    # Resumed at update 2 after 7 s of training, stopped by a signal at update
    # 6 of 8: its record taken 10 s into this session, 2 s before the end (the
    # final evaluation and checkpoint, which train nothing).
    loop = _loop(6, 2, seconds=12.0, before=7.0, recorded=10.0)
    result = finish(run, loop, state, "SIGTERM", 3.0)
    assert result.env_steps == 6 * 512 and result.updates == 6
    assert result.train_seconds == 17.0
    assert result.steps_per_second == 6 * 512 / 17.0  # the whole run's
    assert result.stopped_by == "SIGTERM" and result.messages == ["hi"]
    assert result.mean_return == 1.5 and result.num_devices == 2
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["env_steps"] == 3072 and summary["total_steps"] == 4096
    assert summary["complete"] is False and summary["stopped_by"] == "SIGTERM"
    assert summary["compile_seconds"] == 3.5 and summary["train_seconds"] == 17.0
    assert summary["eval_return"] is None  # no evaluation (NaN: null)
    assert (tmp_path / "params.msgpack").exists()


def test_finish_of_a_run_with_nothing_left_reports_no_speed():
    run = Run(config=_config(8), run_dir=None, main=True)
    result = finish(run, _loop(8, 8), None, None, 1.0)
    assert math.isnan(result.steps_per_second) and result.env_steps == 4096
    assert result.run_dir is None and result.stopped_by is None


@pytest.mark.timeout(300)
def test_train_says_it_compiles_before_the_first_record(capsys):
    config = pjd.apply_overrides(_config(4), {"num_logs": 2, "devices": 1})
    pjd.train(config, console=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "ppo CartPole-v1: compiling…", lines
    assert lines[1].startswith("ppo CartPole-v1: training… (compiling took ")
    assert [line.split()[1] for line in lines[2:]] == ["1,024/2,048", "2,048/2,048"]


@pytest.mark.timeout(300)
def test_a_complete_run_resumed_shows_no_compile_or_training_phase(tmp_path, capsys):
    result = pjd.train(_tiny(tmp_path), write_files=True, console=False)
    again = pjd.train(_tiny(tmp_path), resume=result.run_dir, console=True)
    assert again.updates == result.updates
    assert any("already complete" in m for m in again.messages)
    err = capsys.readouterr().err
    assert "compiling" not in err and "training…" not in err, err


@pytest.mark.timeout(300)
def test_a_resume_s_compile_time_is_its_compiling_phase(tmp_path, monkeypatch, capsys):
    # A resumed run printed "compiling took 3s", then "compile time 6.7 s" in
    # its summary: the summary's clock started before the checkpoint's
    # restore, the progress line's after it. One definition now: the phase.
    import importlib

    recipe = importlib.import_module("purejaxdrl.training.train")

    result = pjd.train(_tiny(tmp_path), write_files=True, console=False)
    capsys.readouterr()

    def slow_restore(*args, **kwargs):
        time.sleep(3.0)  # a large checkpoint on a slow disk
        return restore(*args, **kwargs)

    restore = recipe.restore
    monkeypatch.setattr(recipe, "restore", slow_restore)
    # The phase's own clock, read as it ends (its printed "took" is rounded
    # and, past a minute, "1m05s"): no parsing, whatever the machine's load.
    phases = {}
    phase = ConsoleLogger.phase

    def timed_phase(self, name):
        ended, since = self._phase, self._since
        phase(self, name)
        if ended is not None:
            phases[ended] = self._since - since

    monkeypatch.setattr(ConsoleLogger, "phase", timed_phase)
    more = pjd.apply_overrides(_tiny(tmp_path), {"total_steps": 4 * 16 * 8})
    again = pjd.train(more, resume=result.run_dir, console=True, allow_changes=True)
    # Only the instants between the two clocks' reads differ (not the 3 s; a
    # loaded machine's stall can part them by a fraction of one).
    assert abs(again.compile_seconds - phases["compiling"]) < 1.5, (
        again.compile_seconds,
        phases,
    )


@pytest.mark.timeout(300)
def test_train_from_python_shows_progress_unless_asked_not_to(capsys):
    # A script's pjd.train(config) is not silent for its whole run: stderr is
    # not a terminal here, so one plain line per phase and per chunk.
    config = pjd.apply_overrides(_config(4), {"num_logs": 2, "devices": 1})
    pjd.train(config)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 4 and "compiling…" in lines[0], lines
    assert "2,048/2,048" in lines[-1] and "return" in lines[-1]
    result = pjd.train(config, console=False)
    assert capsys.readouterr().err == ""
    # A notebook cell ending in `result` shows the outcome, not the state.
    assert repr(result).startswith(
        "TrainResult(ppo on CartPole-v1, 4 updates, 2,048 env steps, return "
    )
    assert len(repr(result)) < 200
    # A config shows the run's fields and its own algorithm's section only.
    assert "ppo=PPOConfig(" in repr(config) and "dqn=" not in repr(config)


def test_a_resume_without_its_loggers_says_so_even_with_no_history(tmp_path):
    # W&B refused the first session: no record, no checkpoint, but its
    # folder. A resume that leaves out --logger wandb would log nowhere.
    run = Run(config=_config(8), run_dir=tmp_path, main=True)
    (tmp_path / "wandb").mkdir()
    close(open_sinks(run, [], [], None, (), None), None)
    assert run.messages == [
        "this run used --logger wandb before (its wandb/ folder); it does not "
        "now: pass --logger wandb with --resume to go on"
    ]
    # Passed again, nothing is said (W&B's sink is opened by `start_wandb`).
    run.messages.clear()
    close(open_sinks(run, [], [], None, ("wandb",), None), None)
    assert run.messages == []


def test_a_resumed_runs_metrics_are_strict_json_nan_as_null(tmp_path):
    # A resume rewrites metrics.jsonl with the checkpoint's records; a chunk
    # that ended no episode has a NaN mean return, which JSON has no word for.
    run = Run(config=_config(8), run_dir=tmp_path, main=True)
    (tmp_path / "tensorboard").mkdir()  # the session before logged there
    history = [{"updates": 1, "episode/mean_return": math.nan}, {"updates": 2}]
    sinks = open_sinks(run, history, [], None, (), None)
    assert run.messages == [
        "this run used --logger tensorboard before (its tensorboard/ folder); it "
        "does not now: pass --logger tensorboard with --resume to go on"
    ]
    sinks[0].write({"updates": 3, "episode/mean_return": math.inf})
    close(sinks, None)

    def refuse(word):
        raise ValueError(f"not strict JSON: {word}")

    lines = (tmp_path / "metrics.jsonl").read_text().splitlines()
    records = [json.loads(line, parse_constant=refuse) for line in lines]
    assert [r.get("episode/mean_return", 0) for r in records] == [None, 0, None]


def _tiny(tmp_path):
    return pjd.apply_overrides(
        pjd.TrainConfig(),
        {"num_envs": 4, "unroll_length": 16, "total_steps": 4 * 16 * 4,
         "num_logs": 2, "devices": 1, "run_dir": str(tmp_path)},
    )  # fmt: skip


@pytest.mark.timeout(300)
def test_a_signal_during_the_last_chunk_stops_nothing(tmp_path):
    # The run had ended: it is complete, not "stopped by SIGINT" with a
    # resume command that has nothing left to train.
    import signal

    class Interrupt:
        def write(self, record):
            if record["updates"] == 4:
                signal.raise_signal(signal.SIGINT)

        def close(self):
            pass

    config = _tiny(tmp_path)
    result = pjd.train(config, write_files=True, console=False, loggers=[Interrupt()])
    assert result.updates == 4 and result.stopped_by is None


@pytest.mark.timeout(300)
def test_a_resume_without_a_usable_checkpoint_names_none_as_saved(
    tmp_path, monkeypatch
):
    import shutil

    from purejaxdrl.training import loop as loop_module

    result = pjd.train(_tiny(tmp_path), write_files=True, console=False)
    for step in (result.run_dir / "checkpoints").iterdir():
        if step.name.isdigit():
            shutil.rmtree(step)
    seen = []
    original = loop_module.ChunkLoop.run_schedule

    def spy(self, state, schedule):
        seen.append(self.last_saved)
        return original(self, state, schedule)

    monkeypatch.setattr(loop_module.ChunkLoop, "run_schedule", spy)
    pjd.train(_tiny(tmp_path), resume=result.run_dir, console=False)
    assert seen == [None]  # not "update 0 in checkpoints/0", which is no folder


def test_a_failed_setup_closes_what_it_opened_newest_first():
    from purejaxdrl.training.result import closed_on_error

    closed = []

    class Thing:
        def __init__(self, name):
            self.name = name

        def close(self):
            closed.append(self.name)
            if self.name == "wandb":
                raise RuntimeError("a close that fails stops no other")

    with (
        pytest.raises(ValueError, match="compile failed"),
        closed_on_error(Thing("runner")) as keep,
    ):
        assert keep(None) is None
        keep(Thing("wandb"))
        keep(Thing("checkpointer"))
        raise ValueError("compile failed")
    assert closed == ["checkpointer", "wandb", "runner"]
    closed.clear()
    with closed_on_error(Thing("runner")) as keep:
        keep(Thing("checkpointer"))
    assert closed == []  # on success training keeps them


@pytest.mark.timeout(300)
def test_ctrl_c_while_compiling_leaves_no_folder_but_a_resumed_runs(
    tmp_path, monkeypatch
):
    import sys

    train_module = sys.modules["purejaxdrl.training.train"]  # the module's name
    result = pjd.train(_tiny(tmp_path / "done"), write_files=True, console=False)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(train_module, "compile_programs", interrupted)
    with pytest.raises(KeyboardInterrupt):
        pjd.train(_tiny(tmp_path / "new"), write_files=True, console=False)
    # No folder without an update, nor the --run-dir folder made for it.
    assert not (tmp_path / "new").exists()
    with pytest.raises(KeyboardInterrupt):
        pjd.train(_tiny(tmp_path / "done"), resume=result.run_dir, console=False)
    assert (result.run_dir / "summary.json").is_file()  # a resumed run's, kept
    assert any(p.name.isdigit() for p in (result.run_dir / "checkpoints").iterdir())


def test_a_new_folder_holding_more_than_the_setup_made_is_kept(tmp_path):
    from purejaxdrl.training.run_files import LOCK_FILE, UnstartedRun

    folder = tmp_path / "run"
    (folder / "checkpoints").mkdir(parents=True)
    (folder / LOCK_FILE).write_text("")
    (folder / "wandb").mkdir()  # a W&B run started: its error names the folder
    UnstartedRun(folder).close()
    assert folder.is_dir()
    (folder / "wandb").rmdir()
    UnstartedRun(folder).close()
    assert not folder.exists()


@pytest.mark.timeout(300)
def test_nothing_compiles_inside_the_timed_chunk_loop(tmp_path, monkeypatch):
    # steps/s exclude compile time: what the first save runs (the packer and
    # the finiteness check) is compiled before the clock starts, not lazily
    # at the first checkpoint inside `run_schedule`.
    import jax

    from purejaxdrl.training import loop as loop_module

    loop_module.params_finite.clear_cache()  # compiled by an earlier test
    compiled, timing = [], []

    def listen(event, duration, **kwargs):
        if timing and event == "/jax/core/compile/backend_compile_duration":
            compiled.append(kwargs.get("fun_name", event))

    run_schedule = loop_module.ChunkLoop.run_schedule

    def timed(self, *args, **kwargs):
        timing.append(True)
        try:
            return run_schedule(self, *args, **kwargs)
        finally:
            timing.clear()

    monkeypatch.setattr(loop_module.ChunkLoop, "run_schedule", timed)
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        config = pjd.apply_overrides(_tiny(tmp_path), {"num_logs": 4})
        pjd.train(config, write_files=True, console=False)
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    assert compiled == []
