"""A resume keeps the device-seconds of the sessions before it (their devices)."""

import json
import shutil

import pytest

import purejaxdrl as pjd
from purejaxdrl.training.checkpoint import _newest_whole


def _meta(run_dir) -> dict:
    """The newest checkpoint's meta, as saved_devices reads it (orbax's JSON)."""
    newest = _newest_whole((run_dir / "checkpoints").absolute())
    return json.loads((newest / "meta" / "metadata").read_text())


@pytest.mark.timeout(600)
def test_a_resume_on_one_device_adds_its_seconds_to_two_devices_seconds(tmp_path):
    # Session 1 trains on 2 devices for S1 s: 2 x S1 device-seconds. Resumed on
    # 1 device up to S2 s in all, the run has 2 S1 + (S2 - S1) x 1; a resume
    # that dropped the saved count would count session 1 as on 1 device (S2).
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {
            "total_steps": 4 * 512,
            "num_logs": 2,
            "devices": 2,
            "checkpoint": {"wait": True},
            "run_dir": str(tmp_path / "runs"),
        },
    )
    first = pjd.train(config, write_files=True, console=False)
    run_dir = tmp_path / "run"
    shutil.copytree(first.run_dir, run_dir)
    before = _meta(run_dir)
    assert before["devices"] == 2
    assert before["device_seconds"] == pytest.approx(2 * before["train_seconds"])
    changes = {"devices": 1, "total_steps": config.total_steps * 2}
    again, _ = pjd.resume_config(run_dir, changes, allow_changes=True)
    pjd.train(again, resume=run_dir, console=False, allow_changes=True)
    after = _meta(run_dir)
    session = after["train_seconds"] - before["train_seconds"]
    assert after["devices"] == 1 and session > 0
    want = before["device_seconds"] + session * 1
    assert after["device_seconds"] == pytest.approx(want, rel=1e-9)
