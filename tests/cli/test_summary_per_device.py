"""The summary's per-device speed after a resume on another device count."""

import types

import pytest

import purejaxdrl as pjd
from purejaxdrl.cli.train import summary


def _result(devices: int, history: list[dict]) -> types.SimpleNamespace:
    return types.SimpleNamespace(
        mean_return=480.0, eval_return=float("nan"), stopped_by=None,
        run_dir=None, updates=120, num_devices=devices, env_steps=61440,
        compile_seconds=1.0, steps_per_second=102347.0, history=history,
        steps_per_second_per_device=44311.0,
    )  # fmt: skip


@pytest.fixture(scope="module")
def config():
    return pjd.load_preset("cartpole").config


def _speed(text: str) -> str:
    (line,) = [x for x in text.splitlines() if x.startswith("  steps/s")]
    return line


def test_a_run_on_one_device_count_says_per_device(config):
    result = _result(4, [{"updates": 60, "devices": 4}, {"updates": 120}])
    assert _speed(summary(config, None, result, wall=2.0)) == (
        "  steps/s            102,347 (compile excluded), 44,311 per device"
    )


def test_a_resume_on_another_device_count_says_per_device_second(config):
    # Saved on 4 devices, resumed on 1: "44,311 per device" on 1 device read
    # as if it should equal the 102,347 total; it is steps per device-second
    # over both sessions.
    history = [{"updates": 60, "devices": 4}, {"updates": 120, "devices": 1}]
    assert _speed(summary(config, None, _result(1, history), wall=2.0)) == (
        "  steps/s            102,347 (compile excluded), 44,311 per "
        "device-second over all sessions (on 1 and 4 devices)"
    )
    history.insert(0, {"updates": 30, "devices": 2})
    assert _speed(summary(config, None, _result(1, history), wall=2.0)).endswith(
        "(on 1, 2 and 4 devices)"
    )
