"""A stop signal on a host-env run ends the chunk after the current update."""

import json
import signal

import jax
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.runners import sebulba
from purejaxdrl.training.restored import restore_run

pytest.importorskip("envpool")
pytestmark = pytest.mark.timeout(600)

UPDATES = 12


def _config(run_dir, num_logs):
    config = pjd.load_preset("cartpole_envpool", "impala").config
    return pjd.apply_overrides(
        config,
        {
            "devices": 1,
            "num_envs": 8,
            "total_steps": 8 * 16 * UPDATES,
            "num_logs": num_logs,
            "run_dir": str(run_dir),
            "host": {"deterministic": True},
        },
    )


def _params(state):
    return jax.tree.leaves(jax.device_get(state.agent.params))


def _records(run_dir):
    return [json.loads(x) for x in (run_dir / "metrics.jsonl").open()]


def test_sigint_mid_chunk_saves_after_the_current_update_and_resumes(
    tmp_path, monkeypatch
):
    # Straight through, checkpointed every 4 updates (3 chunks of 4).
    straight = pjd.train(_config(tmp_path / "a", 3), write_files=True, console=False)
    assert straight.updates == UPDATES and straight.stopped_by is None
    _, exp, at_4 = restore_run(straight.run_dir, "test", 4)
    exp.runner.close()

    # One chunk of 12 updates; Ctrl-C while update 2 (0-based) is read: the
    # stop is seen after update 3, so the run stops with 4 done, not 12.
    real = sebulba.host_metrics

    def interrupting(update, *args):
        if update == 2:
            signal.raise_signal(signal.SIGINT)
        return real(update, *args)

    monkeypatch.setattr(sebulba, "host_metrics", interrupting)
    config = _config(tmp_path / "b", 1)
    stopped = pjd.train(config, write_files=True, console=False)
    monkeypatch.setattr(sebulba, "host_metrics", real)
    assert stopped.stopped_by == "SIGINT" and stopped.updates == 4
    # Deterministic mode: the stopped state, and the checkpoint saved of it,
    # are the straight run's after its first 4 updates, bit for bit.
    _, exp, saved = restore_run(stopped.run_dir, "test", "latest")
    exp.runner.close()
    assert saved.step == 4
    for a, b, c in zip(
        _params(stopped.state), _params(saved.state), _params(at_4.state), strict=True
    ):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    assert [r["updates"] for r in _records(stopped.run_dir)] == [4]

    # The resume splits the 8 updates left afresh and runs them to the end.
    config, _ = pjd.resume_config(stopped.run_dir, {})
    resumed = pjd.train(config, resume=stopped.run_dir, console=False)
    assert resumed.updates == UPDATES and resumed.stopped_by is None
    assert [r["updates"] for r in _records(stopped.run_dir)] == [4, UPDATES]
