"""A Ctrl-C while a run sets up or compiles stops it, wherever it lands.

Python's own handler raised KeyboardInterrupt inside whatever ran: in a
`gc.callbacks` entry (JAX's `_xla_gc_callback`) Python dropped it, and the
run trained to its end (reviews/ck14.md #1).
"""

import gc
import signal
import sys
import types

import pytest

import purejaxdrl as pjd
from tests.training.test_train import _tiny

pytestmark = pytest.mark.timeout(300)


def _ctrl_c_in_a_gc_callback(monkeypatch):
    """Makes train's compile step deliver SIGINT inside a gc callback."""
    train_module = sys.modules["purejaxdrl.training.train"]
    compile_programs = train_module.compile_programs

    def hook(phase, info):
        if phase == "start":
            gc.callbacks.remove(hook)
            signal.raise_signal(signal.SIGINT)  # to this thread, at once
            for _ in range(3):  # Python runs the handler at a loop's jump
                pass

    def compiling(*args, **kwargs):
        gc.callbacks.append(hook)
        gc.collect()
        return compile_programs(*args, **kwargs)

    monkeypatch.setattr(train_module, "compile_programs", compiling)


def test_a_ctrl_c_in_a_gc_callback_stops_a_new_run_untrained(tmp_path, monkeypatch):
    _ctrl_c_in_a_gc_callback(monkeypatch)
    runs = tmp_path / "runs"  # made by the run's setup
    with pytest.raises(KeyboardInterrupt, match="before the first update; nothing"):
        pjd.train(_tiny(runs), write_files=True, console=False)
    assert not runs.exists()  # neither the run's folder nor --run-dir's


def test_a_ctrl_c_while_a_resume_compiles_keeps_its_checkpoints(tmp_path, monkeypatch):
    config = _tiny(tmp_path)
    done = pjd.train(config, write_files=True, console=False).run_dir
    longer = pjd.apply_overrides(config, {"total_steps": 4 * 16 * 8})
    before = sorted(p.name for p in (done / "checkpoints").iterdir())
    _ctrl_c_in_a_gc_callback(monkeypatch)
    with pytest.raises(KeyboardInterrupt, match="from update 4; the run's check"):
        pjd.train(longer, resume=done, allow_changes=True, console=False)
    assert sorted(p.name for p in (done / "checkpoints").iterdir()) == before
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_command_says_a_ctrl_c_while_compiling_saved_nothing(
    tmp_path, monkeypatch, capsys
):
    from purejaxdrl import cli

    _ctrl_c_in_a_gc_callback(monkeypatch)
    argv = ["train", "--env", "cartpole", "--num-envs", "4", "--total-steps", "1024"]
    status = cli.main([*argv, "--quiet", "--run-dir", str(tmp_path / "runs")])
    assert status == 130
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == "interrupted: stopped before the first update; nothing was saved"
    # What the signal's own line said: no chunk was under way, none is saved.
    assert err[-2].startswith(
        "purejaxdrl: SIGINT received: stopping before the first chunk (Ctrl-C"
    )
    assert not (tmp_path / "runs").exists()


def _ctrl_c_in_open_sinks(monkeypatch):
    """SIGINT after the post-compile check, before the chunk loop holds it."""
    train_module = sys.modules["purejaxdrl.training.train"]
    open_sinks = train_module.open_sinks

    def opening(*args, **kwargs):
        signal.raise_signal(signal.SIGINT)
        return open_sinks(*args, **kwargs)

    monkeypatch.setattr(train_module, "open_sinks", opening)


# A tensorboard/ folder, made by its sink, goes with the run (mut16 S5).
@pytest.mark.parametrize("log_to", [(), ("tensorboard",)])
def test_a_ctrl_c_after_compiling_saves_no_untrained_checkpoint(
    tmp_path, monkeypatch, log_to
):
    # mut15 #1: it saved checkpoints/0, params.msgpack and summary.json.
    _ctrl_c_in_open_sinks(monkeypatch)
    runs = tmp_path / "runs"
    with pytest.raises(KeyboardInterrupt, match="before the first update; nothing"):
        pjd.train(_tiny(runs), write_files=True, console=False, log_to=log_to)
    assert not runs.exists()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_stop_before_the_first_chunk_never_says_training(
    tmp_path, monkeypatch, capsys
):
    # As a peer's signal during compiling, seen only by the chunk loop's
    # agreement: it printed `training… (compiling took 18s)` (mh18 #5).
    _ctrl_c_in_open_sinks(monkeypatch)
    with pytest.raises(KeyboardInterrupt, match="before the first update; nothing"):
        pjd.train(_tiny(tmp_path / "runs"), write_files=True)
    err = capsys.readouterr().err
    assert "compiling…" in err and "training…" not in err, err


def test_a_ctrl_c_after_a_resume_compiled_keeps_its_files(tmp_path, monkeypatch):
    config = _tiny(tmp_path)
    done = pjd.train(config, write_files=True, console=False).run_dir
    longer = pjd.apply_overrides(config, {"total_steps": 4 * 16 * 8})
    kept = [done / "summary.json", *(done / "checkpoints").rglob("*")]
    before = {p: p.read_bytes() for p in kept if p.is_file()}
    _ctrl_c_in_open_sinks(monkeypatch)
    with pytest.raises(KeyboardInterrupt, match="from update 4; the run's check"):
        pjd.train(longer, resume=done, allow_changes=True, console=False)
    kept = [done / "summary.json", *(done / "checkpoints").rglob("*")]
    assert {p: p.read_bytes() for p in kept if p.is_file()} == before


def test_a_ctrl_c_while_a_resume_restores_stops_before_any_write(tmp_path, monkeypatch):
    # mut15 #3: not on to rewrite config.yaml, start W&B and compile first.
    config = _tiny(tmp_path)
    done = pjd.train(config, write_files=True, console=False).run_dir
    saved = (done / "config.yaml").read_bytes()
    train_module = sys.modules["purejaxdrl.training.train"]
    restore, compiled = train_module.restore, []

    def restoring(*args, **kwargs):
        signal.raise_signal(signal.SIGINT)
        return restore(*args, **kwargs)

    monkeypatch.setattr(train_module, "restore", restoring)
    monkeypatch.setattr(train_module, "compile_programs", compiled.append)
    longer = pjd.apply_overrides(config, {"total_steps": 4 * 16 * 8})
    with pytest.raises(KeyboardInterrupt, match="from update 4; the run's check"):
        pjd.train(longer, resume=done, allow_changes=True, console=False)
    assert (done / "config.yaml").read_bytes() == saved
    assert not (done / "overrides.jsonl").exists()
    assert compiled == []


def test_a_ctrl_c_while_compiling_keeps_a_run_dir_that_was_there(tmp_path, monkeypatch):
    # mut15 #11: the user's own (empty) runs/ is theirs, not the setup's.
    _ctrl_c_in_a_gc_callback(monkeypatch)
    runs = tmp_path / "runs"
    runs.mkdir()
    with pytest.raises(KeyboardInterrupt, match="nothing was saved"):
        pjd.train(_tiny(runs), write_files=True, console=False)
    assert runs.is_dir() and not any(runs.iterdir())


def test_an_unstarted_runs_cleanup_keeps_another_run_beside_it(tmp_path):
    from purejaxdrl.training.run_files import UnstartedRun

    (tmp_path / "runs" / "a" / "checkpoints").mkdir(parents=True)
    (tmp_path / "runs" / "b").mkdir()
    UnstartedRun(tmp_path / "runs" / "a", parent_made=True).close()
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["b"]


def test_a_bare_interrupt_says_interrupted_alone(monkeypatch, capsys):
    # One with no message of what was kept: no dangling colon (mut15 #13).
    from purejaxdrl import cli

    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr("purejaxdrl.cli.train.train_command", interrupted)
    assert cli.main(["train"]) == 130
    assert capsys.readouterr().err.splitlines()[-1] == "interrupted"


def test_only_process_0_of_several_says_interrupted(monkeypatch, capsys):
    # Process 1's signal line says process 0 reports the stop (mh18 #5).
    from purejaxdrl import cli
    from purejaxdrl.cli import processes

    stopped = "stopped before the first update; nothing was saved"

    def interrupted(argv):
        raise KeyboardInterrupt(stopped)

    monkeypatch.setattr("purejaxdrl.cli.train.train_command", interrupted)
    monkeypatch.setattr(processes, "joined", lambda: True)
    monkeypatch.setattr(processes, "exit_if_joined", lambda status: None)
    for me in (1, 0):
        state = types.SimpleNamespace(process_id=me)
        monkeypatch.setattr(processes, "_state", lambda state=state: state)
        assert cli.main(["train"]) == 130
        err = capsys.readouterr().err
        if me:
            assert "interrupted" not in err, err
        else:
            assert err.splitlines()[-1] == f"interrupted: {stopped}", err


class _StopAfter:
    """A logger that sends SIGINT once it reads update `updates`'s record."""

    def __init__(self, updates):
        self.updates = updates

    def write(self, record):
        if record["updates"] == self.updates:
            signal.raise_signal(signal.SIGINT)

    def close(self):
        pass


def test_a_ctrl_c_after_the_first_chunk_returns_the_run_saved_once(tmp_path):
    # Chunks of 1 update, each saved as due; stopped once the one queued behind
    # update 1 ends: a stopped run, not "before the first update" (mut16 C3),
    # and no second save of the update just saved (C2).
    config = pjd.apply_overrides(_tiny(tmp_path / "runs"), {"num_logs": 4})
    try:
        result = pjd.train(
            config, write_files=True, console=False, loggers=[_StopAfter(1)]
        )
    except KeyboardInterrupt as e:  # named as this test's failure, not pytest's
        pytest.fail(f"the stopped run raised KeyboardInterrupt: {e}")
    assert result.stopped_by == "SIGINT" and 0 < result.updates < 4
    steps = sorted(p.name for p in (result.run_dir / "checkpoints").iterdir())
    assert str(result.updates) in steps, steps
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_ctrl_c_in_a_run_without_files_returns_it_stopped(tmp_path, capsys):
    # pjd.train's default (a notebook's): the interrupt stops the run after the
    # chunk and returns it in memory, as a run with files does (nb21 #2);
    # before, a bare KeyboardInterrupt from deep in JAX lost the whole run.
    config = pjd.apply_overrides(_tiny(tmp_path / "runs"), {"num_logs": 4})
    try:
        result = pjd.train(config, console=False, loggers=[_StopAfter(1)])
    except KeyboardInterrupt as e:  # named as this test's failure, not pytest's
        pytest.fail(f"the stopped run raised KeyboardInterrupt: {e!r}")
    assert result.stopped_by == "SIGINT" and 0 < result.updates < 4
    assert result.run_dir is None and not (tmp_path / "runs").exists()
    assert result.policy() is not None
    said = capsys.readouterr().err.splitlines()
    assert said == [
        "purejaxdrl: SIGINT received: stopping once the chunks under way finish "
        "(one, or two where the next is queued; on host environments, the "
        "update under way) (Ctrl-C again aborts)"
    ]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
