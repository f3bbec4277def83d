"""Reading a run outside training (`restored.restore_run`): on any device count,
from the right folder, and what to do before its first checkpoint."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import warnings

import jax
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError
from purejaxdrl.training.restored import restore_run
from purejaxdrl.training.run_files import RunLock


@pytest.fixture(scope="module")
def dqn_on_two_devices(tmp_path_factory):
    """A DQN run trained on 2 devices: its replay buffer is kept in 2 shards."""
    tmp = tmp_path_factory.mktemp("runs")
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "dqn").config,
        {
            "total_steps": 16 * 4 * 20,
            "num_envs": 16,
            "num_logs": 1,
            "devices": 2,
            "run_dir": str(tmp / "runs"),
            "dqn": {"min_replay": 256},
        },
    )
    return pjd.train(config, write_files=True)


@pytest.mark.timeout(600)
def test_a_run_of_two_devices_exports_and_evaluates_on_one(dqn_on_two_devices):
    result, out = dqn_on_two_devices, dqn_on_two_devices.run_dir.parent.parent / "pol"
    # A fresh process: one CPU device (the 8 fake ones are this process's).
    script = (
        "import jax; from purejaxdrl import cli\n"
        "assert jax.device_count() == 1, jax.devices()\n"
        f"cli.main(['export', {str(result.run_dir)!r}, '--out', {str(out)!r}])\n"
        f"cli.main(['eval', {str(result.run_dir)!r}, '--episodes', '2'])\n"
    )
    # Without any fake device count (a test in this worker may have left one).
    flags = os.environ.get("XLA_FLAGS", "").split()
    flags = [f for f in flags if "device_count" not in f]
    env = {**os.environ, "XLA_FLAGS": " ".join(flags), "JAX_PLATFORMS": "cpu"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=500,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"dqn on CartPole-v1, update {result.updates}: mean return" in done.stdout
    # The parameters the run ended with, as trained on two devices.
    policy = pjd.load_policy(out)
    for x, y in zip(
        jax.tree.leaves(policy.params),
        jax.tree.leaves(result.state.agent.params),
        strict=True,
    ):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_a_folder_of_runs_names_the_run_inside(dqn_on_two_devices, tmp_path):
    run = dqn_on_two_devices.run_dir
    with pytest.raises(ConfigError) as e:
        restore_run(run.parent, "export")
    assert str(e.value) == (
        f"{str(run.parent)!r} is a folder of runs (train --run-dir makes one run "
        f"inside it), not a run; it holds one run, {str(run)!r}: pass that."
    )
    for name in ("a", "b"):  # b, made last, is the newest
        (tmp_path / name).mkdir()
        shutil.copy(run / "config.yaml", tmp_path / name)
    with pytest.raises(ConfigError, match="it holds 2 runs, the newest '.*b'"):
        restore_run(tmp_path, "evaluate")


@pytest.mark.parametrize(
    ("meta", "what"), [("sweep.yaml", "sweep"), ("pbt.yaml", "PBT")]
)
def test_a_sweeps_file_points_at_its_policy_folder(tmp_path, meta, what):
    (tmp_path / meta).write_text("{}")
    (tmp_path / "runs.csv").write_text("")
    with pytest.raises(ConfigError) as e:
        restore_run(tmp_path / "runs.csv", "evaluate")
    policy = tmp_path / "policy"
    assert str(e.value) == (
        f"{str(tmp_path / 'runs.csv')!r} is a file of a {what} directory, not a "
        f"run; its best policy is in {str(policy)!r} (`purejaxdrl eval {policy}` "
        "plays it)."
    )


def test_a_file_points_at_its_folder_only_where_that_is_a_run(
    tmp_path, monkeypatch, capsys
):
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    for name in ("config.yaml", "summary.json", "metrics.jsonl"):
        (run / name).write_text("{}")
        with pytest.raises(ConfigError) as e:
            restore_run(run / name, "evaluate")
        assert str(e.value) == (
            f"{str(run / name)!r} is a file, not a run directory; pass the folder "
            f"that holds it, {str(run)!r}."
        )
    # A preset beside no run: its folder ('.') is no run either.
    monkeypatch.chdir(tmp_path)
    pathlib.Path("my.yaml").write_text("description: mine\n")
    pathlib.Path("notes.txt").write_text("")
    with pytest.raises(ConfigError) as e:
        restore_run("my.yaml", "evaluate")
    assert str(e.value) == (
        "'my.yaml' is a file, not a run directory, and its folder is no run either "
        "(a preset file trains with `purejaxdrl train --env my.yaml`); pass a "
        "folder made by `purejaxdrl train` (under runs/ by default)."
    )
    with pytest.raises(ConfigError, match="^'notes.txt' is a file, not a run dire"):
        restore_run("notes.txt", "export")
    from purejaxdrl import cli

    assert cli.main(["eval", "my.yaml"]) == 2
    assert "pass the folder" not in capsys.readouterr().err


def test_a_run_still_training_before_its_first_checkpoint_says_to_wait(
    dqn_on_two_devices, tmp_path
):
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    shutil.copy(dqn_on_two_devices.run_dir / "config.yaml", run)
    with pytest.raises(ConfigError) as e:
        restore_run(run, "export")
    assert str(e.value) == (
        f"{str(run)!r} has no checkpoint to export; train or resume the run first."
    )
    # As `train` holds it while it runs.
    with RunLock(run), pytest.raises(ConfigError) as e:
        restore_run(run, "evaluate")
    assert f"{str(run)!r} has no checkpoint to evaluate yet: it is still " in str(
        e.value
    )
    assert str(e.value).endswith(
        "saves its first checkpoint after 1 chunk(s) of updates (checkpoint.every); "
        "wait for it, then retry."
    ), e.value


@pytest.mark.timeout(600)
def test_python_resumes_a_replay_run_left_to_auto_on_its_saved_count(
    dqn_on_two_devices, tmp_path
):
    # The command line did; train(resume=) asked for devices=2 instead.
    run_dir = tmp_path / "run"
    shutil.copytree(dqn_on_two_devices.run_dir, run_dir)
    total = 16 * 4 * 22  # 2 updates more than the fixture's
    changes = {"devices": 0, "total_steps": total}
    config, _ = pjd.resume_config(run_dir, changes, allow_changes=True)
    assert jax.local_device_count() == 8  # conftest's fake devices
    result = pjd.train(config, resume=run_dir, console=False, allow_changes=True)
    assert result.updates == dqn_on_two_devices.updates + 2
    assert (
        "resuming on 2 of 8 cpu devices: this dqn run keeps its replay buffer in "
        "2 shards, one per device, and resumes only on as many."
    ) in result.messages


@pytest.fixture(scope="module")
def ppo_with_two_checkpoints(tmp_path_factory):
    """A PPO run of 4 updates in 2 chunks: checkpoints at updates 2 and 4.

    The preset's run that tests/sweeps/test_sweep.py trains alone (and
    tests/cli/test_bad_input.py trains): its programs are compiled once in
    the session's cache."""
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "ppo").config,
        {"total_steps": 4 * 512, "num_logs": 2, "devices": 1,
         "checkpoint": {"wait": True},  # both saves written, however slow
         "run_dir": str(tmp_path_factory.mktemp("runs"))},
    )  # fmt: skip
    return pjd.train(config, write_files=True, console=False)


@pytest.mark.timeout(600)
def test_eval_and_export_say_which_newer_checkpoint_they_skipped(
    ppo_with_two_checkpoints, tmp_path, capsys
):
    run = tmp_path / "run"
    shutil.copytree(ppo_with_two_checkpoints.run_dir, run)
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["2", "4"]
    (run / "checkpoints" / "4" / "purejaxdrl.sha256").write_text("not json")
    line = "checkpoint at update 4 skipped: its manifest is unreadable"
    with pytest.warns(pjd.SetupWarning) as caught:
        out = pjd.export_policy(run, tmp_path / "policy")
    assert [str(w.message) for w in caught] == [f"{line}; exporting update 2"]
    assert caught[0].filename == __file__  # the caller's line, not the library's
    assert json.loads((out / "policy.json").read_text())["updates"] == 2
    # The command says it on stderr, one line, as it shows any SetupWarning.
    from purejaxdrl import cli

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = _to_stderr  # as Python shows it, not pytest
        assert cli.main(["eval", str(run), "--episodes", "1"]) == 0
    said = capsys.readouterr()
    assert said.err == f"purejaxdrl: warning: {line}; evaluating update 2\n"
    assert "update 2: mean return" in said.out


def test_the_skipped_checkpoint_warning_names_the_first_frame_outside_purejaxdrl():
    # Called from no user's file (`python -c`, code exec'd by a tool): the
    # warning is the calling "<string>"'s, not a frame further out.
    from purejaxdrl.training import restored

    code = compile("say(['checkpoint 4 skipped'], 'export', 2)", "<string>", "exec")
    with pytest.warns(pjd.SetupWarning) as caught:
        exec(code, {"say": restored._say_skipped})
    assert str(caught[0].message) == "checkpoint 4 skipped; exporting update 2"
    assert caught[0].filename == "<string>"


def _to_stderr(message, category, filename, lineno, file=None, line=None):
    """Python's own showwarning: the formatted warning on stderr."""
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def test_logging_guide_names_every_key_a_ppo_run_logs_besides_its_losses(
    ppo_with_two_checkpoints,
):
    # The run's own keys (not the algorithm's losses), each described there.
    run = ppo_with_two_checkpoints.run_dir
    records = [json.loads(line) for line in (run / "metrics.jsonl").open()]
    own = {
        "env_steps", "updates", "time", "steps_per_second", "devices",
        "steps_per_second_per_device", "eta_seconds", "episode/count",
        "episode/mean_length", "episode/mean_return",
    }  # fmt: skip
    assert all(own <= set(r) for r in records), records
    guide = pathlib.Path(__file__).parents[2] / "docs" / "guide" / "logging.md"
    text = guide.read_text()
    evaluated = [
        "eval/mean_return", "eval/mean_length", "eval/episodes", "eval/cut",
        "eval/seconds",
    ]  # fmt: skip
    for key in [*own, *evaluated]:
        assert f"`{key}`" in text, key


@pytest.fixture(scope="module")
def ppo_keeping_its_best(tmp_path_factory):
    """8 chunks of one update, keeping the newest checkpoint and the best."""
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "ppo").config,
        {"num_envs": 4, "unroll_length": 8, "total_steps": 4 * 8 * 8,
         "num_logs": 8, "devices": 1, "ppo": {"num_minibatches": 2},
         "checkpoint": {"keep": 1, "keep_best": True, "wait": True},
         "run_dir": str(tmp_path_factory.mktemp("runs"))},
    )  # fmt: skip
    return pjd.train(config, write_files=True, console=False)


@pytest.mark.timeout(600)
def test_eval_and_export_play_the_best_checkpoint_or_a_given_update(
    ppo_keeping_its_best, tmp_path, capsys
):
    from purejaxdrl import cli

    result, run = ppo_keeping_its_best, ppo_keeping_its_best.run_dir
    # The best training return of the chunks (every save was written).
    ranked = [
        (r["episode/mean_return"], r["updates"])
        for r in result.history
        if np.isfinite(r.get("episode/mean_return", np.nan))
    ]
    best = max(ranked)[1]
    saved = sorted(int(p.name) for p in (run / "checkpoints").iterdir())
    assert saved == sorted({best, result.updates}), (saved, ranked)
    assert best != result.updates, ranked  # else this run shows nothing
    out = pjd.export_policy(run, tmp_path / "best", step="best")
    assert json.loads((out / "policy.json").read_text())["updates"] == best
    latest = pjd.load_policy(pjd.export_policy(run, tmp_path / "latest"))
    assert latest.spec["updates"] == result.updates
    kernels = [
        jax.tree.leaves(pjd.load_policy(out).params),
        jax.tree.leaves(latest.params),
    ]
    assert any(not np.array_equal(x, y) for x, y in zip(*kernels, strict=True))
    for choice, update in (("best", best), (str(result.updates), result.updates)):
        assert (
            cli.main(["eval", str(run), "--episodes", "1", "--checkpoint", choice]) == 0
        )
        assert f"update {update}: mean return" in capsys.readouterr().out
    assert cli.main(["export", str(run), "--out", str(tmp_path / "b2"),
                     "--checkpoint", "best"]) == 0  # fmt: skip
    assert pjd.load_policy(tmp_path / "b2").spec["updates"] == best
    # An update with no checkpoint, and a word that is no choice: one line each.
    gone = next(u for u in range(1, result.updates) if u not in saved)
    assert cli.main(["eval", str(run), "--checkpoint", str(gone)]) == 2
    assert capsys.readouterr().err == (
        f"purejaxdrl: error: {str(run)!r} has checkpoints at updates "
        f"{', '.join(map(str, saved))}, none at update {gone} (checkpoint.keep "
        "keeps the newest 1); pass one of those, 'best' or 'latest' as "
        "--checkpoint N (step=N in Python).\n"
    )
    assert cli.main(["eval", str(run), "--checkpoint", "newest"]) == 2
    assert "checkpoint 'newest' is not 'latest', 'best' or an update count" in (
        capsys.readouterr().err
    )
    # An exported policy holds one update: it has no checkpoint to choose.
    assert cli.main(["eval", str(out), "--checkpoint", "best"]) == 2
    assert "is an exported policy, which holds one update" in capsys.readouterr().err
    # A damaged best checkpoint is refused, not swapped for another.
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    (copy / "checkpoints" / str(best) / "purejaxdrl.sha256").write_text("no")
    with pytest.raises(ConfigError) as e:
        restore_run(copy, "evaluate", "best")
    assert str(e.value) == (
        f"{str(copy)!r}'s checkpoint at update {best} cannot be read to "
        "evaluate: its manifest is unreadable; pass another of its checkpoints "
        f"(updates {', '.join(str(s) for s in saved if s != best)}) or 'latest'."
    )


def test_best_needs_a_run_that_kept_its_best(ppo_with_two_checkpoints):
    run = ppo_with_two_checkpoints.run_dir
    with pytest.raises(ConfigError) as e:
        restore_run(run, "export", "best")
    assert str(e.value) == (
        f"{str(run)!r} has checkpoints at updates 2, 4 and kept no best one (it "
        "trained with checkpoint.keep_best false); pass one of those or "
        "'latest', or train with --checkpoint.keep-best true "
        "(checkpoint.keep_best=True in Python)."
    )
    _, _, restored = restore_run(run, "export", 2)
    assert restored.step == 2 and restored.skipped == []
    # Not a chunk's end with a save due (by its schedule, 2 chunks of 2
    # updates each), before the oldest kept or between two: never saved, not
    # pruned by checkpoint.keep.
    for update in (1, 3):
        with pytest.raises(ConfigError) as e:
            restore_run(run, "export", str(update))
        assert str(e.value) == (
            f"{str(run)!r} has checkpoints at updates 2, 4, none at update "
            f"{update} (saves were due at updates 2, 4); pass one of those or "
            "'latest' as --checkpoint N (step=N in Python)."
        )
    with pytest.raises(
        ConfigError, match=r"none at update 5 \(it is past the newest\)"
    ):
        restore_run(run, "export", "5")


def test_a_run_whose_checkpoints_are_all_damaged_says_what_a_resume_would(
    ppo_with_two_checkpoints, tmp_path
):
    # A resume refuses them too (it trains from update 0 only when told to):
    # "resume the run first" would send the user in a circle.
    run = tmp_path / "run"
    shutil.copytree(ppo_with_two_checkpoints.run_dir, run)
    for step in ("2", "4"):
        (run / "checkpoints" / step / "purejaxdrl.sha256").write_text("not json")
    with pytest.raises(ConfigError) as e:
        restore_run(run, "evaluate")
    assert str(e.value) == (
        f"{str(run)!r} has no checkpoint to evaluate (checkpoint at update 4 "
        "skipped: its manifest is unreadable; checkpoint at update 2 skipped: its "
        "manifest is unreadable); restore them from a backup, or, to train from "
        f"update 0 instead, move {run / 'checkpoints'} elsewhere and resume the "
        f"run (purejaxdrl train --resume {run})."
    )


def test_a_missing_update_is_named_pruned_never_due_or_replaced():
    from purejaxdrl.training.restored import _why_missing

    # 8 updates in 4 chunks of 2, a save due after every second chunk: at 4, 8.
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "ppo").config,
        {"num_envs": 4, "unroll_length": 8, "total_steps": 4 * 8 * 8,
         "num_logs": 4, "checkpoint": {"every": 2, "keep": 1}},
    )  # fmt: skip
    assert config.num_updates == 8
    assert _why_missing(4, [8], config) == "checkpoint.keep keeps the newest 1"
    for never in (2, 6):
        assert _why_missing(never, [8], config) == "saves were due at updates 4, 8"
    assert _why_missing(9, [8], config) == "it is past the newest"
    # Due and newer than checkpoint.keep's oldest, but not there: replaced.
    kept = pjd.apply_overrides(config, {"checkpoint": {"keep": 2}})
    assert "a due save replaces one still waiting" in _why_missing(4, [8], kept)


def test_a_missing_update_after_a_cadence_change_blames_the_change():
    """After `--num-logs` changed on a resume, the planned saves are the new
    schedule's: the hint must not list them as where saves were due."""
    from purejaxdrl.training.restored import _why_missing

    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "ppo").config,
        {"num_envs": 4, "unroll_length": 8, "total_steps": 4 * 8 * 8,
         "num_logs": 4, "checkpoint": {"every": 2, "keep": 3}},
    )  # fmt: skip
    # Saved at 3 under an earlier cadence, then at 4 and 8 under this one.
    why = _why_missing(2, [3, 4, 8], config)
    assert why == (
        "its saves follow more than one schedule (--num-logs or the budget "
        "changed on a resume)"
    )
    assert _why_missing(2, [4, 8], config) == "saves were due at updates 4, 8"
