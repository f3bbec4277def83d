"""`SignalHold`: the part every SIGINT / SIGTERM hold shares."""

import signal

import pytest

from purejaxdrl.cli.early_signals import EarlySignals
from purejaxdrl.signal_holds import pass_on
from purejaxdrl.training.faults import StopSignals


def test_a_signal_passed_on_to_an_ignoring_handler_is_ignored():
    pass_on(signal.SIGINT, None, signal.SIG_IGN)  # no KeyboardInterrupt
    pass_on(signal.SIGTERM, None, signal.SIG_IGN)  # the process goes on


def test_a_signal_passed_on_to_a_callable_handler_calls_it():
    seen = []
    pass_on(signal.SIGTERM, None, lambda signum, frame: seen.append(signum))
    assert seen == [signal.SIGTERM]


def test_a_hold_of_another_kind_is_not_taken_over():
    # A run's StopSignals inside the command's EarlySignals: the command's
    # record reaches the run only through `hand_over`, as a signal.
    with EarlySignals() as early:
        signal.raise_signal(signal.SIGTERM)
        with StopSignals(announce=False) as stop:
            assert stop.requested is None and not early._handed_over
            early.hand_over()
            assert stop.requested == "SIGTERM"


def test_a_stop_inside_a_stop_takes_its_request_over_and_hands_back_on_exit():
    with StopSignals(announce=False) as outer:
        signal.raise_signal(signal.SIGTERM)
        with StopSignals(announce=False) as inner:
            assert inner.requested == "SIGTERM" and outer._handed_over
        # The inner one has exited: a Ctrl-C reaching the handed-over outer
        # one acts as the handler before it (Python's: an interrupt).
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
