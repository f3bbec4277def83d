"""StopSignals: SIGINT / SIGTERM held as a request to stop, and handed over."""

import os
import signal
import time

import pytest

from purejaxdrl.training.faults import StopSignals


def _send(signum: int) -> None:
    os.kill(os.getpid(), signum)
    time.sleep(0.05)  # Python runs the handler at the next bytecode


def test_a_signal_before_the_loop_is_handed_over_to_it():
    with StopSignals(announce=False, before_training=True) as held:
        _send(signal.SIGTERM)
        with StopSignals(announce=False) as loop:
            assert loop.requested == "SIGTERM"
    assert held.requested == "SIGTERM"


def test_a_ctrl_c_after_the_loop_ended_interrupts_as_before_the_hold(capsys):
    # The held handler came back when the loop's exited: a Ctrl-C during the
    # final save, export or summary said "saving a checkpoint before the first
    # chunk" and was swallowed.
    with StopSignals(before_training=True) as held:
        with StopSignals(announce=False) as loop:
            _send(signal.SIGINT)
            assert loop.requested == "SIGINT"
        with pytest.raises(KeyboardInterrupt):
            _send(signal.SIGINT)
    assert held.requested is None
    assert "before the first chunk" not in capsys.readouterr().err


def test_a_sigterm_after_the_loop_ended_reaches_the_handler_held_before():
    heard = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: heard.append(signum))
    try:
        with StopSignals(announce=False, before_training=True) as held:
            with StopSignals(announce=False):
                pass
            _send(signal.SIGTERM)
        assert heard == [signal.SIGTERM] and held.requested is None
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_run_without_files_says_it_stops_without_saving(capsys):
    with StopSignals(before_training=True, saves=False) as held:
        _send(signal.SIGINT)
    assert held.requested == "SIGINT"
    assert capsys.readouterr().err == (
        "purejaxdrl: SIGINT received: stopping before the first chunk (Ctrl-C "
        "again aborts)\n"
    )
