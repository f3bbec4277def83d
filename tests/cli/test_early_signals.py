"""A signal in a `purejaxdrl train`'s first seconds stops it, with its line.

The hold began in `train()`: a Ctrl-C while the command read its flags or
imported JAX landed in a gc callback, was dropped, and the run trained to its
end; a SIGTERM ended it with status 143 and no line (reviews/ck17.md #1).
Each signal here is sent from a gc callback at a fixed point of the
command's setup: no timing race.
"""

import signal

import pytest

from purejaxdrl.cli.early_signals import EarlySignals
from tests.helpers import assert_signal_stops_the_command_untouched

pytestmark = pytest.mark.timeout(300)


# add_process_flags: before JAX is imported; _fresh: while the config is built.
@pytest.mark.parametrize(
    "name, where",
    [("SIGINT", "add_process_flags"), ("SIGTERM", "add_process_flags"),
     ("SIGINT", "_fresh"), ("SIGTERM", "_fresh")],
)  # fmt: skip
def test_a_signal_while_the_command_starts_stops_it_untrained(tmp_path, name, where):
    assert_signal_stops_the_command_untouched(
        tmp_path / "runs", "purejaxdrl.cli.train", name, where, ["train"]
    )


# `EarlySignals` in process, no command: a signal held by `cli.main`'s hold
# while the command's module loads is taken over by the command's own hold
# (nested take-over) and handed on once; a second SIGINT aborts.
@pytest.fixture
def received():
    got = []
    before = signal.signal(signal.SIGTERM, lambda signum, frame: got.append(signum))
    yield got
    signal.signal(signal.SIGTERM, before)


def test_a_signal_held_by_the_outer_hold_is_handed_over_once_by_the_inner(received):
    with EarlySignals():  # cli.main's, while the command's module loads
        signal.raise_signal(signal.SIGTERM)
        assert received == []  # held, not acted on
        with EarlySignals() as inner:  # the command's own: takes the record over
            assert inner.signum == signal.SIGTERM
            inner.hand_over()
    # Handed to the handler installed before either hold, exactly once.
    assert received == [signal.SIGTERM]


def test_a_second_sigint_before_hand_over_aborts():
    with EarlySignals() as early:
        signal.raise_signal(signal.SIGINT)
        assert early.signum == signal.SIGINT
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
