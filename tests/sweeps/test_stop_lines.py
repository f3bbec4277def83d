"""Sweep and PBT stop lines leave out host environments, which they refuse."""

import signal

import pytest

import purejaxdrl as pjd
from purejaxdrl.sweeps.pbt.population import pbt
from purejaxdrl.sweeps.program import sweep


@pytest.mark.timeout(300)
def test_a_sweeps_sigint_line_says_nothing_of_host_environments(tmp_path, capfd):
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"total_steps": 1024 * 4, "num_envs": 8, "num_logs": 4, "devices": 1,
         "run_dir": str(tmp_path)},
    )  # fmt: skip

    def interrupt(line: str) -> None:
        if "update 1 of 4" in line:
            signal.raise_signal(signal.SIGINT)

    with pytest.raises(pjd.SweepStopped):
        sweep(config, seeds=1, write_files=True, notify=interrupt)
    err = capfd.readouterr().err
    assert "purejaxdrl: SIGINT received: " in err
    assert "host environments" not in err


@pytest.mark.timeout(300)
def test_a_pbt_runs_sigint_line_says_nothing_of_host_environments(tmp_path, capfd):
    config = pjd.load_preset("cartpole").config
    base = pjd.apply_overrides(
        config,
        {"total_steps": config.steps_per_update * 4, "num_logs": 4, "devices": 4,
         "run_dir": str(tmp_path)},
    )  # fmt: skip

    def interrupt(line: str) -> None:
        if "update 1 of 4" in line:
            signal.raise_signal(signal.SIGINT)

    with pytest.raises(pjd.SweepStopped):
        pbt(base, explore={"learning_rate": ("loguniform", 1e-4, 1e-3)},
            population=4, ready=1, write_files=True, notify=interrupt)  # fmt: skip
    err = capfd.readouterr().err
    assert "purejaxdrl: SIGINT received: " in err
    assert "host environments" not in err
