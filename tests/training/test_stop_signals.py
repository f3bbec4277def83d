"""StopSignals: SIGINT / SIGTERM held as a request to stop, and handed over."""

import os
import signal
import time
import types

import pytest

from purejaxdrl.training import faults
from purejaxdrl.training.faults import StopSignals
from purejaxdrl.training.stop_words import SAME_SIGNAL, again, ctrl_c


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


_WHEN = (
    "once the chunks under way finish (one, or two where the next is queued; on "
    "host environments, the update under way)"
)


def test_a_repeated_sigterm_says_the_stop_goes_on_in_a_line_of_its_own(
    capsys, monkeypatch
):
    # It repeated the first line word for word: a second request, a second save?
    # The handlers' clock is the test's: a stall between two sends (a loaded
    # machine) must not part the same signal sent twice.
    now = [0.0]
    monkeypatch.setattr(faults, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    with StopSignals() as stop:
        _send(signal.SIGTERM)
        now[0] += 0.05
        _send(signal.SIGTERM)  # the same signal sent twice (`timeout`): said once
        # Read apart: which of the two repeats is said matters, not only how
        # many lines there are (a window turned around says the wrong one).
        assert capsys.readouterr().err == (
            f"purejaxdrl: SIGTERM received: saving a checkpoint {_WHEN}, then "
            "stopping\n"
        )
        now[0] += SAME_SIGNAL
        _send(signal.SIGTERM)
    assert stop.requested == "SIGTERM"
    assert capsys.readouterr().err == (
        f"purejaxdrl: SIGTERM received again: already stopping {_WHEN}; Ctrl-C "
        "aborts without the stop's save; checkpoints already written are kept\n"
    )


def test_a_sweep_s_line_leaves_out_host_environments_which_it_refuses(capsys):
    with StopSignals(host_envs=False) as stop:
        _send(signal.SIGTERM)
        time.sleep(SAME_SIGNAL)
        _send(signal.SIGTERM)
    assert stop.requested == "SIGTERM"
    when = "once the chunks under way finish (one, or two where the next is queued)"
    assert capsys.readouterr().err == (
        f"purejaxdrl: SIGTERM received: saving a checkpoint {when}, then stopping\n"
        f"purejaxdrl: SIGTERM received again: already stopping {when}; Ctrl-C "
        "aborts without the stop's save; checkpoints already written are kept\n"
    )


def test_an_abort_is_said_to_skip_only_the_stop_s_save():
    # "aborts without saving" read as if no checkpoint existed; the periodic
    # ones already written are kept, and the line nests no brackets.
    kept = "without the stop's save; checkpoints already written are kept"
    assert ctrl_c("SIGINT", saves=True, second_ends=False) == (
        f" (Ctrl-C again aborts {kept})"
    )
    assert ctrl_c("SIGINT", saves=False, second_ends=False) == " (Ctrl-C again aborts)"
    assert again("SIGTERM", before_training=True, saves=True) == (
        "purejaxdrl: SIGTERM received again: already stopping before the first "
        f"chunk; Ctrl-C aborts {kept}"
    )
    assert again("SIGTERM", before_training=True, saves=False).endswith(
        "chunk; Ctrl-C aborts"
    )


def test_in_a_notebook_the_line_says_interrupt_again_not_ctrl_c(monkeypatch):
    # A Jupyter kernel has no Ctrl-C key: its Interrupt sends SIGINT (nb21 #2).
    from purejaxdrl.training import stop_words

    monkeypatch.setattr(stop_words, "in_notebook", lambda: True)
    assert ctrl_c("SIGINT", saves=False, second_ends=False) == (
        " (interrupt again aborts)"
    )


def test_a_second_signal_left_to_end_on_second_signal_is_not_said_here(capsys):
    # A process of many: EndOnSecondSignal says the repeat and ends the process.
    with StopSignals(second_ends=True) as stop:
        _send(signal.SIGINT)
        time.sleep(SAME_SIGNAL)
        _send(signal.SIGINT)  # no KeyboardInterrupt
        _send(signal.SIGTERM)
    assert stop.requested == "SIGINT"
    assert capsys.readouterr().err == (
        f"purejaxdrl: SIGINT received: saving a checkpoint {_WHEN}, then stopping "
        "(Ctrl-C again, a second or more later, ends this process within 2 s)\n"
    )


def test_a_signal_after_a_peers_agreed_stop_is_this_process_s_first(capsys):
    # The request a peer's signal set (agreed_stop) is no signal of this one's.
    with StopSignals(peer=True, saves=False) as stop:
        stop.requested = "a peer's signal"
        _send(signal.SIGINT)  # no KeyboardInterrupt: its first
    assert stop.requested == "SIGINT"
    assert capsys.readouterr().err == (
        "purejaxdrl: SIGINT received: stopping with the other processes "
        f"{_WHEN}; nothing is saved; process 0 says where they stopped (Ctrl-C "
        "again aborts)\n"
    )
