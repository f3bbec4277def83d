"""A run's host-side context and where it starts, with stand-in checkpoints."""

import functools
import json
import types

import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl.runners.anakin import AnakinRunner
from purejaxdrl.training import resume
from purejaxdrl.training.run import (
    Run,
    Start,
    open_run,
    restore,
    save_resumed_config,
    start_wandb,
)


def _config() -> pjd.TrainConfig:
    return pjd.apply_overrides(pjd.TrainConfig(), {"num_envs": 8})


class SavedCheckpoints:
    """Stands in for a Checkpointer: what `restore` asks of one.

    The meta of its checkpoint is on disk, where `checkpoint.saved_devices`
    reads a replay's device count: as orbax writes it, without a manifest
    (a step orbax committed counts as whole).
    """

    directory = None

    def __init__(self, tmp_path, step, meta, skipped=()):
        self.directory = tmp_path / "checkpoints"
        if step is not None:
            (self.directory / str(step) / "meta").mkdir(parents=True)
            (self.directory / str(step) / "meta" / "metadata").write_text(
                json.dumps(meta)
            )
        self.restored = types.SimpleNamespace(
            step=step, meta=meta, state="the state", skipped=list(skipped)
        )

    def restore_latest(self):
        return self.restored


def _run(tmp_path, checkpointer, heard=None):
    notify = None if heard is None else heard.append
    run = Run(config=_config(), run_dir=tmp_path, main=True, notify=notify)
    run.checkpointer = checkpointer
    return run


def _experiment(devices, num_envs=8):
    # The Anakin runner's own resume notes, on a stand-in of its fields.
    mesh = types.SimpleNamespace(size=devices)
    runner = types.SimpleNamespace(mesh=mesh, num_envs=num_envs)
    runner.resume_notes = functools.partial(AnakinRunner.resume_notes, runner)
    return types.SimpleNamespace(runner=runner)


def _replay_run(run, algo="dqn"):
    # Whether a run keeps a replay is its algorithm's (`keeps_replay`).
    run.config = pjd.apply_overrides(run.config, {"algo": algo})
    return run


def test_say_records_every_message_and_notifies_only_process_0():
    heard = []
    run = Run(config=_config(), run_dir=None, main=False, notify=heard.append)
    run.say("a")
    assert run.messages == ["a"] and heard == []
    run.main = True
    run.say("b")
    assert run.messages == ["a", "b"] and heard == ["b"]


def test_open_run_without_files_has_no_directory_and_no_wandb():
    run = open_run(_config(), resume=None, write_files=False, notify=None)
    assert run.run_dir is None and run.main and run.checkpointer is None
    assert start_wandb(run, ["tensorboard"]) is None


def test_a_resumed_runs_config_yaml_is_rewritten_only_once_it_restored(tmp_path):
    (tmp_path / "config.yaml").write_text("num_envs: 4\n")
    run = open_run(_config(), resume=str(tmp_path), write_files=False, notify=None)
    assert run.run_dir == tmp_path
    # Opening it changes nothing: a resume refused after this leaves the run.
    assert yaml.safe_load((tmp_path / "config.yaml").read_text())["num_envs"] == 4
    save_resumed_config(run, 0)
    assert yaml.safe_load((tmp_path / "config.yaml").read_text())["num_envs"] == 8


def test_config_yaml_holds_the_run_s_own_section_and_reloads_equal(tmp_path):
    # Other algorithms' sections hold their defaults, not a preset's: a
    # reader would take them for this run's. A new run's and a resumed run's
    # config.yaml hold the run's fields and its algorithm's section only.
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", algo="dqn").config, {"run_dir": str(tmp_path)}
    )
    run = open_run(config, resume=None, write_files=True, notify=None)
    for _ in range(2):
        saved = yaml.safe_load((run.run_dir / "config.yaml").read_text())
        sections = {"ppo", "impala", "a2c", "dqn", "apex", "r2d2", "sac", "pqn"}
        assert sections & set(saved) == {"dqn"}
        assert saved["dqn"]["learning_rate"] == config.dqn.learning_rate
        assert resume.config_changes(resume.load_run_config(run.run_dir), config) == []
        save_resumed_config(run, 0)


def test_restore_without_a_usable_checkpoint_starts_fresh_and_says_so(tmp_path):
    heard = []
    saved = SavedCheckpoints(tmp_path, None, None, skipped=["skipped 20: corrupt"])
    start = restore(_run(tmp_path, saved, heard), _experiment(1))
    assert start == Start()
    assert heard == [
        "skipped 20: corrupt",
        f"no usable checkpoint in {tmp_path}; starting from update 0",
    ]


def test_restore_on_other_devices_resplits_the_environments(tmp_path):
    meta = {"devices": 2, "history": [{"updates": 4}], "train_seconds": 3}
    run = _run(tmp_path, SavedCheckpoints(tmp_path, 4, meta))
    start = restore(run, _experiment(4))
    assert start == Start(
        state="the state", done=4, history=[{"updates": 4}], seconds_before=3.0
    )
    # 8 environments over 4 devices: 2 each.
    assert run.messages == [
        f"resumed at update 4 of {run.config.num_updates:,} from "
        f"{tmp_path / 'checkpoints' / '4'}",
        "saved on 2 device(s), resumed on 4: learner state replicated, the 8 "
        "environments (with any replay kept per environment) re-split to 2 per "
        "device",
    ]
    # The history is a copy: the loop appends to it, not to the checkpoint's.
    assert start.history is not meta["history"]


def test_restore_refuses_a_replay_buffer_on_another_device_count(tmp_path):
    meta = {"devices": 2, "history": [], "train_seconds": 0.0}
    run = _replay_run(_run(tmp_path, SavedCheckpoints(tmp_path, 4, meta)))
    message = "keeps a replay buffer in 2 shards.*not 4; pass --devices 2"
    with pytest.raises(pjd.ConfigError, match=message):
        restore(run, _experiment(4))
    # On the same device count it resumes, and says nothing about devices.
    start = restore(run, _experiment(2))
    assert start.done == 4 and len(run.messages) == 1


def test_restore_resplits_a_replay_kept_per_environment(tmp_path):
    # R2D2's shards are one per environment: they split over another device
    # count as the environments do (tests/training/test_replay_devices.py
    # trains it); the refusal was for DQN's, one per device.
    meta = {"devices": 2, "history": [], "train_seconds": 0.0}
    run = _replay_run(_run(tmp_path, SavedCheckpoints(tmp_path, 4, meta)), "r2d2")
    start = restore(run, _experiment(4))
    assert start.done == 4
    assert "re-split to 2 per device" in run.messages[-1]


def test_restore_says_when_this_machine_has_too_few_devices_for_a_replay_run(
    tmp_path,
):
    # Saved on 16 devices; this machine has 8: --devices cannot reach 16.
    meta = {"devices": 16, "history": [], "train_seconds": 0.0}
    run = _replay_run(_run(tmp_path, SavedCheckpoints(tmp_path, 4, meta)))
    message = (
        "resumes only on 16 devices, not 4; this machine has 8 cpu device\\(s\\): "
        "resume it on a machine with 16 .*JAX_NUM_CPU_DEVICES=16"
    )
    with pytest.raises(pjd.ConfigError, match=message):
        restore(run, _experiment(4))


def test_a_new_run_says_how_its_budget_was_rounded_and_a_resume_if_it_is_new(
    tmp_path,
):
    # 8 envs x 128 steps = 1,024 per update: 50,000 steps are 48 updates.
    small = pjd.apply_overrides(_config(), {"total_steps": 50_000})
    run = open_run(small, resume=None, write_files=False, notify=None)
    assert run.messages == [
        "total_steps 50,000 rounded to 49,152 (whole updates of num_envs x "
        "unroll_length = 8 x 128 = 1,024 steps; --total-steps 50,176 trains one "
        "update more)"
    ]
    whole = pjd.apply_overrides(_config(), {"total_steps": 1024 * 488})
    assert open_run(whole, resume=None, write_files=False, notify=None).messages == []
    # Resumed with the budget it was saved with: it said so at its start.
    (tmp_path / "config.yaml").write_text("num_envs: 8\ntotal_steps: 50000\n")
    resumed = open_run(small, resume=str(tmp_path), write_files=False, notify=None)
    assert resumed.messages == []
    # A budget new at the resume (--override) is said, as to a new run.
    (tmp_path / "config.yaml").write_text(f"num_envs: 8\ntotal_steps: {1024 * 488}\n")
    resumed = open_run(small, resume=str(tmp_path), write_files=False, notify=None)
    assert resumed.messages == run.messages


def test_a_resume_says_the_evaluation_note_when_it_is_new(tmp_path):
    # Resumed with --eval.every 2 on a run without evaluation episodes: no
    # evaluation runs, which only a new run used to be told.
    note = (
        "eval.every=2 with eval.episodes=0: no evaluation will run; pass e.g. "
        "--eval.episodes 16 to evaluate"
    )
    every = pjd.apply_overrides(_config(), {"eval": {"every": 2, "episodes": 0}})
    run_dir = str(tmp_path)
    (tmp_path / "config.yaml").write_text("num_envs: 8\neval: {episodes: 0}\n")
    heard = []
    resumed = open_run(every, resume=run_dir, write_files=False, notify=heard.append)
    assert resumed.messages == heard == [note]
    # Saved asking every 3 chunks: the note names another N, said again.
    (tmp_path / "config.yaml").write_text(
        "num_envs: 8\neval: {episodes: 0, every: 3}\n"
    )
    resumed = open_run(every, resume=run_dir, write_files=False, notify=None)
    assert resumed.messages == [note]
    # Saved with the same condition: said at its start, not again.
    (tmp_path / "config.yaml").write_text(
        "num_envs: 8\neval: {episodes: 0, every: 2}\n"
    )
    assert (
        open_run(every, resume=run_dir, write_files=False, notify=None).messages == []
    )


def test_restore_of_a_complete_run_says_there_is_nothing_to_train(tmp_path):
    meta = {"devices": 1, "history": [], "train_seconds": 2.0}
    done = _config().num_updates
    run = _run(tmp_path, SavedCheckpoints(tmp_path, done, meta))
    assert restore(run, _experiment(1)).done == done
    assert run.messages == [
        f"resumed at update {done:,} of {done:,} from "
        f"{tmp_path / 'checkpoints' / str(done)}; the run is already complete, "
        "nothing to train"
    ]


def test_restore_of_a_replay_run_without_a_checkpoint_starts_fresh(tmp_path):
    # Stopped before its first checkpoint: no saved count to hold it to, so
    # a replay run resumed on 4 devices starts afresh on them (it was refused
    # as "1 shard" when a missing count read as 1).
    run = _replay_run(_run(tmp_path, SavedCheckpoints(tmp_path, None, None)))
    start = restore(run, _experiment(4))
    assert start.state is None and start.done == 0
