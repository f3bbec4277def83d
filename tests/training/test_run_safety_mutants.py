"""Stopping safely and the save queue: what mutation testing found unchecked.

Each test fails under a mutant of faults.py or save_queue.py that the other
tests let pass (reviews/mutants6_M6A.md).
"""

import os
import signal
import threading
import time
import types
import weakref

import numpy as np
import pytest

from purejaxdrl import signal_holds
from purejaxdrl.training import faults
from purejaxdrl.training.faults import (
    StopSignals,
    agreed_stop,
    failure_reason,
    first_non_finite,
    read_failure,
    saves_held_advice,
)
from purejaxdrl.training.save_queue import Save, SaveQueue, SaveWriter

pytestmark = pytest.mark.timeout(60)


def _send(signum: int) -> None:
    os.kill(os.getpid(), signum)
    time.sleep(0.05)  # Python runs the handler at the next bytecode


def test_a_second_ctrl_c_aborts_and_a_second_sigterm_does_not():
    # A cluster may send its pre-emption notice again: still one request to
    # stop after the chunk. Ctrl-C again is the user's "now".
    with StopSignals(announce=False) as stop:
        _send(signal.SIGTERM)
        try:
            _send(signal.SIGTERM)
        except KeyboardInterrupt:
            pytest.fail("a second SIGTERM aborted the run, unsaved")
        assert stop.requested == "SIGTERM"
        with pytest.raises(KeyboardInterrupt):
            _send(signal.SIGINT)


@pytest.mark.parametrize("handler", [None, signal.SIG_DFL])
def test_a_ctrl_c_handed_back_to_a_handler_python_did_not_set_interrupts(handler):
    # `signal.signal` returns None for a handler installed outside Python: a
    # Ctrl-C after the loop's hold must act as the default one, not vanish.
    with pytest.raises(KeyboardInterrupt):
        signal_holds.pass_on(signal.SIGINT, None, handler)


@pytest.mark.parametrize(
    ("own", "peer", "stops", "requested"),
    [
        (None, 1.0, True, "a peer's signal"),
        ("SIGTERM", 0.0, True, "SIGTERM"),
        (None, 0.0, False, None),
    ],
)
def test_every_process_stops_when_any_one_was_asked(
    own, peer, stops, requested, monkeypatch
):
    # Two processes: this one's row, then its peer's (asked to stop: 1).
    monkeypatch.setattr(faults.jax, "process_count", lambda: 2)
    monkeypatch.setattr(
        faults, "gather_rows", lambda row: np.stack([np.float32(row), [peer]])
    )
    stop = StopSignals(announce=False)
    stop.requested = own
    assert agreed_stop(stop) is stops
    assert stop.requested == requested


def test_an_infinite_metric_stops_the_run_as_a_nan_does():
    metrics = {"loss/total": np.array([1.0, np.inf, np.nan])}
    assert first_non_finite(metrics) == ("loss/total", 1, np.inf)
    assert first_non_finite({"grad_norm": np.array([-np.inf])}) == (
        "grad_norm",
        0,
        -np.inf,
    )


def test_a_write_error_raised_while_handling_the_os_error_says_its_reason():
    # Raised during the OSError's handling (its __context__), not `from` it.
    try:
        try:
            raise OSError(30, "Read-only file system", "/runs/a/checkpoints/8")
        except OSError:
            raise ValueError("orbax: " + "context " * 100)  # noqa: B904
    except ValueError as e:
        error = e
    expected = "Read-only file system (/runs/a/checkpoints/8)"
    assert failure_reason(error) == expected
    assert read_failure(error) == expected


def test_a_read_error_without_text_is_named_by_its_type():
    assert read_failure(ValueError()) == "ValueError"
    assert read_failure(KeyError()) == "KeyError"


def _checkpoint(every: int, wait: bool):
    return types.SimpleNamespace(every=every, wait=wait)


def test_saves_held_advice_needs_a_second_and_a_quarter_of_the_time():
    checkpoint = _checkpoint(2, False)
    assert saves_held_advice(0.5, 1.0, checkpoint, 1) is None  # half, under 1 s
    assert saves_held_advice(2.0, 100.0, checkpoint, 1) is None  # 2 s of 100
    assert saves_held_advice(3.0, 6.0, checkpoint, 1) == (
        "checkpoint saves held training for 3.0 s of its 6.0 s (a save every 2 "
        "chunk(s)); pass --checkpoint.every 20 (checkpoint.every=20 in Python) "
        "to save less often, 0 only at the end and on Ctrl-C."
    )


def test_saves_held_advice_names_checkpoint_wait_only_where_it_is_the_cause():
    drop = "pass --checkpoint.wait false"
    assert drop in saves_held_advice(3.0, 6.0, _checkpoint(2, True), 1)
    assert drop not in saves_held_advice(3.0, 6.0, _checkpoint(2, True), 2)
    assert drop not in saves_held_advice(3.0, 6.0, _checkpoint(2, False), 1)


def _save(step: int, metric: float | None = None, skippable: bool = True) -> Save:
    return Save(step, {}, {}, metric, skippable)


def test_a_save_not_skippable_waits_its_turn_and_is_written():
    queue = SaveQueue()
    queue.put(_save(1, skippable=False))
    assert queue.get().step == 1  # being written
    queue.put(_save(2, skippable=False))  # waits
    third = threading.Thread(target=queue.put, args=(_save(3, skippable=False),))
    third.start()
    third.join(timeout=0.5)
    assert third.is_alive()  # blocked while 2 waits, not replacing it
    queue.done()
    assert queue.get().step == 2
    third.join(timeout=10)
    queue.done()
    assert queue.get().step == 3 and queue.replaced == 0


def test_an_idle_writers_saves_are_not_dropped_as_replaceable():
    queue = SaveQueue()
    queue.put(_save(1))
    assert queue.drop_replaceable(1) == 1  # nothing is being written
    assert queue.get().step == 1


def test_drop_replaceable_keeps_a_save_not_skippable():
    queue = SaveQueue()
    queue.put(_save(1))
    queue.get()
    queue.put(_save(2, skippable=False))
    assert queue.drop_replaceable(2) == 2
    queue.done()
    assert queue.get().step == 2 and queue.replaced == 0


def test_a_dropped_newest_save_leaves_the_one_being_written_the_newest():
    queue = SaveQueue()
    queue.put(_save(1))
    queue.get()  # 1 is being written
    queue.put(_save(2))
    assert queue.drop_replaceable(2) == 1
    assert queue.replaced == 1


def test_a_dropped_newest_save_leaves_the_pinned_best_waiting():
    # What keep_best is for: update 1 is being written, 2 (the best return
    # so far) waits, pinned, and 3 (a lower return) waits. Dropping 3 must
    # keep 2 queued, and the newest save still to be written is 2, not 1.
    queue = SaveQueue(keep_best=True)
    queue.put(_save(1, metric=1.0))
    assert queue.get().step == 1
    queue.put(_save(2, metric=10.0))
    queue.put(_save(3, metric=5.0))
    assert queue.drop_replaceable(3) == 2
    queue.done()
    assert queue.get().step == 2


@pytest.mark.parametrize(
    ("keep_best", "returns"),
    [
        (False, (1.0, 10.0, 5.0)),  # without keep_best, a high return is no reason
        # The checkpointer keeps one best: the old best would be written, then
        # deleted once the better one is; meanwhile its state copy is held.
        (True, (1.0, 10.0, 20.0)),
        # CartPole's return stays at its cap, 500: a save that ties the best
        # is no better, and keeping it beside the newest writes it needlessly.
        (True, (500.0, 500.0, 400.0)),
    ],
    ids=["no-keep-best", "a-better-one-follows", "a-tie-with-the-best"],
)
def test_a_waiting_save_is_replaced_unless_it_is_the_best(keep_best, returns):
    queue = SaveQueue(keep_best=keep_best)
    queue.put(_save(1, returns[0]))
    queue.get()  # 1 is being written
    queue.put(_save(2, returns[1]))
    queue.put(_save(3, returns[2]))
    queue.done()
    assert queue.get().step == 3 and queue.replaced == 1


def test_a_best_save_taken_for_writing_is_not_held_after_it():
    queue = SaveQueue(keep_best=True)
    arrays = np.zeros(4)
    held = weakref.ref(arrays)
    queue.put(Save(1, {"w": arrays}, {}, 1.0, True))
    del arrays
    save = queue.get()
    queue.done()
    del save
    assert held() is None  # its device copy of the state is freed


def test_join_waits_for_the_save_being_written():
    written, started, release = [], threading.Event(), threading.Event()

    def write(save: Save) -> None:
        started.set()
        release.wait(timeout=10)
        written.append(save.step)

    writer = SaveWriter(write)
    writer.put(_save(1))
    assert started.wait(timeout=10)
    threading.Timer(0.2, release.set).start()
    writer.join()
    assert written == [1]
    writer.close()
