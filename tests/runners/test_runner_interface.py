"""Both runners provide the whole `Runner` interface the run's recipe is written to."""

import inspect

import pytest

import purejaxdrl as pjd
from purejaxdrl.runners.anakin import AnakinRunner
from purejaxdrl.runners.base import Runner
from purejaxdrl.runners.sebulba import SebulbaRunner


def _declared():
    """The Protocol's members: its annotated attributes and its methods."""
    methods = {
        name
        for name, value in vars(Runner).items()
        if inspect.isfunction(value) and not name.startswith("_")
    }
    return set(Runner.__annotations__), methods


def test_the_protocol_declares_init_and_chunk():
    _, methods = _declared()
    assert {"init", "chunk", "lower", "session", "close"} <= methods


def _check(runner):
    attributes, methods = _declared()
    for name in attributes:
        assert hasattr(runner, name), f"{type(runner).__name__} lacks {name}"
    for name in methods:
        member = getattr(runner, name, None)
        assert callable(member), f"{type(runner).__name__} lacks {name}()"


def test_the_device_env_runner_provides_every_member():
    config = pjd.apply_overrides(
        pjd.TrainConfig(), {"num_envs": 4, "unroll_length": 4, "devices": 1}
    )
    runner = pjd.training.make_experiment(config).runner
    assert isinstance(runner, AnakinRunner)
    _check(runner)


def test_the_host_env_runner_provides_every_member():
    pytest.importorskip("gymnasium")
    config = pjd.load_preset("cartpole_envpool", "impala").config
    config = pjd.apply_overrides(
        config,
        {"env": {"id": "gymnasium:CartPole-v1"}, "num_envs": 4, "devices": 1},
    )
    runner = pjd.training.make_experiment(config).runner
    try:
        assert isinstance(runner, SebulbaRunner)
        _check(runner)
    finally:
        runner.close()
