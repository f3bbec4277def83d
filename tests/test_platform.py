"""Compile modes: PUREJAXDRL_COMPILE=fast changes compile and run time, not results."""

import os

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import _platform
from purejaxdrl._platform import compiler_options
from tests.helpers import flat


def _train(monkeypatch, mode: str):
    monkeypatch.setenv("PUREJAXDRL_COMPILE", mode)
    config = pjd.load_preset("cartpole", "ppo").config
    budget = {"total_steps": 2 * config.steps_per_update, "num_logs": 1, "devices": 1}
    return pjd.train(pjd.apply_overrides(config, budget), console=False)


def test_fast_compiles_train_the_same_parameters(monkeypatch):
    optimized = _train(monkeypatch, "optimized")
    fast = _train(monkeypatch, "fast")
    # Other LLVM and XLA:CPU kernels may round differently; 2 updates of 4
    # epochs x 4 minibatches of Adam keep that far below a learning step.
    np.testing.assert_allclose(
        flat(optimized.state.agent.params),
        flat(fast.state.agent.params),
        atol=1e-5,
        rtol=0,
    )


def test_modes_set_cpu_options_only(monkeypatch):
    monkeypatch.setenv("PUREJAXDRL_COMPILE", "fast")
    for platform in ("gpu", "tpu", "cuda", "rocm"):  # XLA:CPU's options only
        assert compiler_options(platform) is None
    fast = compiler_options("cpu")
    monkeypatch.setenv("PUREJAXDRL_COMPILE", "optimized")
    optimized = compiler_options("cpu")
    assert fast["xla_backend_optimization_level"] < 3
    assert optimized["xla_backend_optimization_level"] == 3
    # Initialisation runs once: compiled for compile time in either mode.
    assert (
        compiler_options("cpu", runs_once=True)["xla_backend_optimization_level"] == 0
    )


def test_every_cpu_program_keeps_the_scheduler_workaround(monkeypatch):
    # XLA reads XLA_FLAGS when JAX starts; a notebook that ran JAX before
    # importing purejaxdrl has a backend without the workaround, so the
    # library's programs carry it in their own options, in every mode.
    monkeypatch.setattr(_platform, "_user_chose_scheduler", False)
    for mode in ("fast", "optimized"):
        monkeypatch.setenv("PUREJAXDRL_COMPILE", mode)
        for once in (False, True):
            options = compiler_options("cpu", runs_once=once)
            assert options["xla_cpu_enable_concurrency_optimized_scheduler"] is False


def test_a_users_own_scheduler_setting_is_kept(monkeypatch):
    # XLA_FLAGS naming the flag when purejaxdrl is imported is the user's
    # choice: neither XLA_FLAGS nor the programs' options override it.
    monkeypatch.setattr(_platform, "_user_chose_scheduler", False)
    monkeypatch.setenv("XLA_FLAGS", f"{_platform._CPU_SCHEDULER_FLAG}=true")
    _platform.configure_xla_flags()
    assert os.environ["XLA_FLAGS"] == f"{_platform._CPU_SCHEDULER_FLAG}=true"
    assert _platform._SCHEDULER not in compiler_options("cpu")
    assert _platform._SCHEDULER not in compiler_options("cpu", runs_once=True)


@pytest.mark.parametrize("given", [None, "--xla_foo=1"])
def test_the_scheduler_is_turned_off_where_the_user_chose_nothing(monkeypatch, given):
    # The workaround for the JAX 0.10.x CPU deadlock reaches every jax.jit of
    # the process (the user's own, JAX's) through XLA_FLAGS: off, after the
    # user's other flags, kept as they were.
    monkeypatch.setattr(_platform, "_user_chose_scheduler", False)
    if given is None:
        monkeypatch.delenv("XLA_FLAGS", raising=False)
    else:
        monkeypatch.setenv("XLA_FLAGS", given)
    _platform.configure_xla_flags()
    off = f"{_platform._CPU_SCHEDULER_FLAG}=false"
    assert os.environ["XLA_FLAGS"] == (off if given is None else f"{given} {off}")
    assert _platform._user_chose_scheduler is False
