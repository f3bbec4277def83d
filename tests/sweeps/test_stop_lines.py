"""Sweep and PBT stop lines leave out host environments, which they refuse."""

import signal
from collections.abc import Callable

import pytest

import purejaxdrl as pjd
from purejaxdrl.sweeps.pbt.population import pbt
from purejaxdrl.sweeps.program import sweep


def _stop_line(run: Callable[[Callable[[str], None]], object], capfd) -> str:
    """The stderr of `run(notify)`, sent SIGINT as update 1 of 4 is reported."""

    def interrupt(line: str) -> None:
        if "update 1 of 4" in line:
            signal.raise_signal(signal.SIGINT)

    with pytest.raises(pjd.SweepStopped):
        run(interrupt)
    err = capfd.readouterr().err
    assert "purejaxdrl: SIGINT received: " in err
    return err


@pytest.mark.timeout(300)
def test_a_sweeps_sigint_line_says_nothing_of_host_environments(tmp_path, capfd):
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"total_steps": 1024 * 4, "num_envs": 8, "num_logs": 4, "devices": 1,
         "run_dir": str(tmp_path)},
    )  # fmt: skip
    err = _stop_line(
        lambda notify: sweep(config, seeds=1, write_files=True, notify=notify), capfd
    )
    assert "host environments" not in err


@pytest.mark.timeout(300)
def test_a_pbt_runs_sigint_line_says_nothing_of_host_environments(tmp_path, capfd):
    config = pjd.load_preset("cartpole").config
    base = pjd.apply_overrides(
        config,
        {"total_steps": config.steps_per_update * 4, "num_logs": 4, "devices": 4,
         "run_dir": str(tmp_path)},
    )  # fmt: skip
    explore = {"learning_rate": ("loguniform", 1e-4, 1e-3)}
    err = _stop_line(
        lambda notify: pbt(
            base, explore=explore, population=4, ready=1, write_files=True,
            notify=notify,
        ),
        capfd,
    )  # fmt: skip
    assert "host environments" not in err
