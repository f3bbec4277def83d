"""`train(config, resume=DIR)` from Python checks the run before writing to it.

The command line resumes through `resume_config`; a Python caller passes a
config of their own, which must get the same checks, and before `config.yaml`
is rewritten: a refused resume leaves the run as it was.
"""

import json
import pathlib
import shutil
import warnings

import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError, to_dict
from purejaxdrl.training.resume import load_run_config

TINY = {"num_envs": 4, "unroll_length": 8, "total_steps": 64, "num_logs": 1}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("runs")
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config, {**TINY, "run_dir": str(root)}
    )
    result = pjd.train(config, write_files=True, console=False)
    return pathlib.Path(result.run_dir)


def _own_copy(run_dir: pathlib.Path, tmp_path: pathlib.Path) -> pathlib.Path:
    """A copy of the module's run, for a test that trains it on: a test that
    resumes the module's run must find it as trained (2 updates), whichever
    test its worker ran first (one once found 8, CI 2026-12-05)."""
    copy = tmp_path / "runs" / run_dir.name
    shutil.copytree(run_dir, copy)
    return copy


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"ppo": {"learning_rate": 0.01}}, "with changes that alter the run "
         "(ppo.learning_rate: "),
        ({"algo": "dqn"}, "algo='dqn' differs from the run's algo='ppo'"),
        ({"algo": "dqn"}, "(in Python, the run's own config: pjd.resume_config("),
        ({"env": {"id": "Acrobot-v1"}}, "env.id='Acrobot-v1' differs from"),
    ],
)  # fmt: skip
def test_a_resume_that_would_change_the_run_is_refused_and_writes_nothing(
    run_dir, overrides, message
):
    saved = (run_dir / "config.yaml").read_text()
    config = pjd.apply_overrides(pjd.resume_config(run_dir, {})[0], overrides)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        pjd.train(config, resume=run_dir, console=False)
    assert (run_dir / "config.yaml").read_text() == saved


def test_an_override_that_changes_the_states_shapes_names_the_change(run_dir):
    # Not "another purejaxdrl version or config saved it": this command did.
    saved = (run_dir / "config.yaml").read_text()
    config = pjd.resume_config(run_dir, {"network": {"hidden_sizes": [8]}},
                               allow_changes=True)[0]  # fmt: skip
    with pytest.raises(ConfigError) as error:
        pjd.train(config, resume=run_dir, console=False, allow_changes=True)
    message = str(error.value)
    assert "of the changes (network.hidden_sizes: " in message
    assert "the checkpoint's state does not fit this run's (" in message
    assert "changes the state's shapes" in message
    assert "another purejaxdrl version" not in message and "\n" not in message
    assert (run_dir / "config.yaml").read_text() == saved


def test_a_folder_that_is_not_a_run_is_refused_and_left_empty(tmp_path):
    config = pjd.apply_overrides(pjd.load_preset("cartpole").config, TINY)
    with pytest.raises(ConfigError, match="has no config.yaml, so it is not"):
        pjd.train(config, resume=tmp_path, console=False)
    assert list(tmp_path.iterdir()) == []


def test_a_file_outside_any_run_is_not_pointed_at_its_folder(tmp_path):
    # '.' (the file's folder) is no run either: it was the advice.
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ConfigError) as error:
        load_run_config(tmp_path / "afile")
    assert "its folder is no run either" in str(error.value)
    assert "pass a folder made by `purejaxdrl train`" in str(error.value)


def test_changes_that_leave_the_updates_alone_or_are_allowed_resume(run_dir, tmp_path):
    run_dir = _own_copy(run_dir, tmp_path)  # the module's run stays as trained
    config = pjd.resume_config(run_dir, {})[0]
    more = pjd.apply_overrides(config, {"total_steps": 128})  # one more update
    result = pjd.train(more, resume=run_dir, console=False, allow_changes=True)
    assert result.updates == 4
    # Its speed is the run's, as its record and progress line say.
    last = result.history[-1]
    assert result.steps_per_second == last["steps_per_second"]
    assert last["steps_per_second"] == last["env_steps"] / last["time"]
    assert "total_steps: 128" in (run_dir / "config.yaml").read_text()
    # The record says what the override changed, as a user auditing it reads it.
    record = json.loads((run_dir / "overrides.jsonl").read_text())
    changes = [{"field": "total_steps", "old": 64, "new": 128}]
    assert record == {"resumed_at": 2, "changes": changes}


def test_a_config_yaml_edited_by_hand_is_refused_against_its_checkpoint(tmp_path):
    # The resume checks compare with config.yaml; the checkpoint's own record
    # catches an edit of the file, which would otherwise change the run.
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config, {**TINY, "run_dir": str(tmp_path)}
    )
    run_dir = pathlib.Path(pjd.train(config, write_files=True, console=False).run_dir)
    data = yaml.safe_load((run_dir / "config.yaml").read_text())
    # A module to import first changes no update: free, as the guide of
    # adding an algorithm tells a user to do for a run made from Python.
    data["env"]["imports"] = ["json"]
    (run_dir / "config.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    config = pjd.resume_config(run_dir, {})[0]
    assert config.env.imports == ("json",)
    assert pjd.train(config, resume=run_dir, console=False).updates == 2
    assert not (run_dir / "overrides.jsonl").exists()
    data["ppo"]["learning_rate"] = 0.01
    edited = yaml.safe_dump(data, sort_keys=False)
    (run_dir / "config.yaml").write_text(edited)
    config = pjd.resume_config(run_dir, {})[0]
    heard = []
    with pytest.raises(
        ConfigError,
        match=r"update 2 was saved with another config "
        r"than its config.yaml now holds \(ppo.learning_rate: ",
    ):
        pjd.train(config, resume=run_dir, console=False, notify=heard.append)
    assert (run_dir / "config.yaml").read_text() == edited
    assert not any("resumed at" in line for line in heard)  # it did not
    result = pjd.train(config, resume=run_dir, console=False, allow_changes=True)
    assert result.updates == 2
    # That --override resume saved no checkpoint (the run was complete, as
    # one killed before its first save): its record lets a plain resume go on.
    # The edit is in config.yaml already: this resume changed nothing of it.
    record = '{"resumed_at": 2, "changes": []}\n'
    assert (run_dir / "overrides.jsonl").read_text() == record
    assert pjd.train(config, resume=run_dir, console=False).updates == 2
    # A budget below what the run trained would contradict its checkpoints.
    fewer = pjd.apply_overrides(config, {"total_steps": 32})
    with pytest.raises(
        ConfigError, match="ends at update 1, before the 2 updates this run"
    ):
        pjd.train(fewer, resume=run_dir, console=False, allow_changes=True)
    assert "total_steps: 64" in (run_dir / "config.yaml").read_text()


def test_a_replay_that_would_never_reach_min_replay_is_refused_before_training(
    tmp_path,
):
    # 4 updates of 4 envs x 8 steps store 128 transitions: min_replay 128
    # starts learning at the last update; 129 never would.
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "dqn").config,
        {**TINY, "total_steps": 128, "dqn": {"min_replay": 128}},
    )
    ran = pjd.train(config, console=False)
    assert [r["learner/grad_steps"] > 0 for r in ran.history] == [True]
    with pytest.raises(pjd.ConfigError) as refused:
        pjd.train(pjd.apply_overrides(config, {"dqn": {"min_replay": 129}}))
    assert str(refused.value) == (
        "dqn.min_replay=129 transitions is more than the run ever stores (4 updates "
        "x 32 = 128): learning would never start; pass at most --dqn.min-replay "
        "128 (dqn.min_replay=128 in Python), or at least --total-steps 160 "
        "(total_steps=160 in Python)."
    )
    # A run saved with such a budget (before the rule) still reads back, and
    # resumes once its budget is raised; not without.
    never = pjd.apply_overrides(config, {"dqn": {"min_replay": 129}})
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(to_dict(never)))
    assert load_run_config(tmp_path) == never
    with pytest.raises(pjd.ConfigError, match="at least --total-steps 160 "):
        pjd.resume_config(tmp_path, {})
    raised, changes = pjd.resume_config(
        tmp_path, {"total_steps": 160}, allow_changes=True
    )
    assert raised.num_updates == 5 and changes == ["total_steps: 128 -> 160"]
    # R2D2 stores one sequence per environment per update (2 x 4 = 8).
    r2d2 = pjd.apply_overrides(
        pjd.load_preset("cartpole_masked", "r2d2").config,
        {**TINY, "unroll_length": 16, "total_steps": 128,
         "r2d2": {"min_replay": 12, "buffer_size": 64, "batch_size": 4}},
    )  # fmt: skip
    with pytest.raises(pjd.ConfigError, match=r"r2d2.min_replay=12 sequences is "
                       r"more than the run ever stores \(2 updates x 4 = 8\).*"
                       r"at least --total-steps 192 \(total_steps=192 in "
                       r"Python\)\.$"):  # fmt: skip
        pjd.training.validate(r2d2)
    pjd.training.validate(pjd.apply_overrides(r2d2, {"r2d2": {"min_replay": 8}}))
    sac = pjd.apply_overrides(
        pjd.load_preset("cartpole_balance", "sac").config,
        {**TINY, "total_steps": 128, "sac": {"min_replay": 200}},
    )
    with pytest.raises(pjd.ConfigError, match=r"--sac.min-replay 128 \(sac.min_"
                       r"replay=128 in Python\), or at least --total-steps 224 "
                       r"\(total_steps=224 in Python\)\.$"):  # fmt: skip
        pjd.training.validate(sac)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"loggers": [print]}, r"loggers\[0\]=<built-in function print> has no "
         r"write\(\) or close\(\); a logger is an object with write\(record\)"),
        ({"log_to": "tensorboard", "write_files": True}, "log_to='tensorboard' is "
         "one string; pass a list of sink names, e.g. log_to=\\['tensorboard'\\]"),
    ],
)  # fmt: skip
def test_sinks_that_would_fail_after_training_are_refused_before_it(kwargs, message):
    config = pjd.apply_overrides(pjd.load_preset("cartpole").config, TINY)
    with pytest.raises(ValueError, match=message):
        pjd.train(config, console=False, **kwargs)


def test_evaluation_asked_for_without_episodes_is_said_not_refused():
    # eval.episodes 0 turns evaluation off, eval.every may stay with it.
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config, {**TINY, "eval": {"every": 2}}
    )
    result = pjd.train(config, console=False)
    assert (
        "eval.every=2 with eval.episodes=0: no evaluation will run; pass e.g. "
        "--eval.episodes 16 to evaluate"
    ) in result.messages


@pytest.mark.parametrize(
    ("marker", "says"),
    [
        ("policy.json", "it is an exported policy: play it with `purejaxdrl eval "),
        ("sweep.yaml", "pjd.sweeps.export_run(pjd.load_sweep(DIR), RUN, OUT)"),
        ("pbt.yaml", "it is a PBT directory: its best member's policy is in"),
    ],
)
def test_a_folder_that_is_no_run_says_what_it_is_and_how_to_use_it(
    tmp_path, marker, says
):
    (tmp_path / marker).write_text("{}")
    with pytest.raises(pjd.ConfigError, match="has no config.yaml") as e:
        load_run_config(tmp_path)
    assert says in str(e.value)


def test_resuming_a_sweep_as_pbt_or_back_names_the_right_command(tmp_path):
    from purejaxdrl.sweeps.inputs import running_meta

    (tmp_path / "sweep.yaml").write_text("status: running\n")
    with pytest.raises(ConfigError, match="it is a sweep directory; continue it"):
        running_meta(tmp_path, "pbt", "PBT run", "writing DIR", "lineage.csv")


def test_folders_that_cannot_be_written_are_one_line(run_dir, tmp_path):
    # A resume writes checkpoints and config.yaml: a folder it cannot write in
    # (here the write test's own file name taken by a folder) is refused first.
    (run_dir / ".purejaxdrl-write-test-0").mkdir()
    config = pjd.resume_config(run_dir, {})[0]
    try:
        with pytest.raises(ConfigError, match=r"cannot write there \(Is a directory"):
            pjd.train(config, resume=run_dir, console=False)
    finally:
        (run_dir / ".purejaxdrl-write-test-0").rmdir()
    # A new run's folder that cannot be made (a name over the system's limit).
    config = pjd.apply_overrides(config, {"run_dir": str(tmp_path / ("x" * 300))})
    with pytest.raises(ConfigError, match=r"cannot make a run folder there \(File"):
        pjd.train(config, write_files=True, console=False)


def test_a_failed_save_says_the_operating_systems_reason():
    from purejaxdrl.training.faults import failure_reason

    full = OSError(28, "No space left on device", "/runs/a/checkpoints/16.tmp")
    try:
        try:
            raise full
        except OSError as e:
            raise ValueError("tensorstore: " + "context " * 500) from e
    except ValueError as wrapped:
        reason = failure_reason(wrapped)
    assert reason == "No space left on device (/runs/a/checkpoints/16.tmp)"
    text = ValueError('RESOURCE_EXHAUSTED: writing "shared" No space left on device')
    assert failure_reason(text) == "No space left on device"


def test_a_run_another_process_trains_is_refused_and_free_after(run_dir, tmp_path):
    import os

    from purejaxdrl.training.run_files import RunLock

    run_dir = _own_copy(run_dir, tmp_path)  # it trains on: not the module's run
    config = pjd.resume_config(run_dir, {})[0]
    held = rf"is being trained by process {os.getpid()} on "
    with RunLock(run_dir), pytest.raises(ConfigError, match=held):
        pjd.train(config, resume=run_dir, console=False)  # as a second process

    # Each train() releases its hold, whether it ends well or not: here a
    # logger fails mid-run, its traceback kept (as a notebook keeps it).
    class Failing:
        def write(self, record):
            raise RuntimeError("logger down")

        def close(self):
            pass

    more = pjd.apply_overrides(config, {"total_steps": 4 * 64})
    with pytest.raises(RuntimeError, match="logger down") as failed:
        pjd.train(
            more, resume=run_dir, console=False, loggers=[Failing()], allow_changes=True
        )
    with RunLock(run_dir):
        pass
    assert failed.value is not None  # the traceback was alive while locking
    pjd.train(pjd.resume_config(run_dir, {})[0], resume=run_dir, console=False)
    with RunLock(run_dir):
        pass


def test_a_trainer_waits_out_an_evals_instant_shared_hold(tmp_path):
    # eval and export ask whether a run trains by holding its lock shared for
    # an instant; a resume starting then was refused, naming a stale holder.
    import fcntl
    import threading

    from purejaxdrl.training.run_files import LOCK_FILE, RunLock

    with (tmp_path / LOCK_FILE).open("a+") as probe:
        fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
        threading.Timer(0.3, fcntl.flock, (probe, fcntl.LOCK_UN)).start()
        with RunLock(tmp_path):
            pass


def test_a_saved_config_reads_only_its_own_algorithms_section():
    # config.yaml holds every section, with the saving version's defaults
    # (or values set before other sections were refused); one written before
    # a field was added lacks it. Neither may keep the run from being read.
    from purejaxdrl.training.resume import config_from_dict

    saved = to_dict(pjd.load_preset("cartpole").config)
    saved["dqn"]["learning_rate"] = 0.5
    saved["a2c"]["gamma"] = 0.5
    del saved["scan_unroll"]
    config = config_from_dict(saved, "config.yaml")
    assert config.algo == "ppo"
    assert config.dqn == pjd.TrainConfig().dqn
    assert config.a2c == pjd.TrainConfig().a2c
    assert config.ppo == pjd.load_preset("cartpole").config.ppo


def test_a_resume_compares_only_the_sections_its_run_reads():
    import dataclasses

    from purejaxdrl.training.resume import config_changes

    saved = pjd.load_preset("cartpole").config
    dqn = dataclasses.replace(saved.dqn, learning_rate=0.5)
    assert config_changes(saved, dataclasses.replace(saved, dqn=dqn)) == []
    ppo = dataclasses.replace(saved.ppo, learning_rate=0.5)
    changed = config_changes(saved, dataclasses.replace(saved, ppo=ppo))
    assert changed == [f"ppo.learning_rate: {saved.ppo.learning_rate!r} -> 0.5"]


def test_resume_config_refuses_another_algo_without_advice_on_switching(run_dir):
    # apply_overrides would advise a preset's tuned dqn config: a resume
    # refuses the change, so its one message is the refusal.
    from purejaxdrl.setup_warnings import forget_warnings

    forget_warnings()
    with warnings.catch_warnings(record=True) as caught, pytest.raises(ConfigError):
        warnings.simplefilter("always")
        pjd.resume_config(run_dir, {"algo": "dqn"})
    assert not [w for w in caught if "keeps this config" in str(w.message)]
    forget_warnings()
