"""A second SIGTERM ends a process of a multi-process run, even one stuck in C.

A Python handler runs only when the main thread returns to Python: a process
waiting in a collective (processes that resolved different runs) ignored
every SIGTERM, and only SIGKILL ended it. Here libc's `system` stands in for
the collective: it blocks the main thread in C and retries when a signal
interrupts it, as gloo's wait does. Each process holds the signals as the
CLI's `held_stop_signals` does (`held_signals`), the chunk loop's handler
inside.
"""

import os
import pathlib
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

from purejaxdrl.training.stop_words import SAME_SIGNAL

_HOLD = """
import sys, time
from purejaxdrl.cli.second_signal import held_signals
from purejaxdrl.training.faults import StopSignals

main = sys.argv[1] == "main"
with held_signals(main=main, saves=True), StopSignals(peer=not main) as loop:
"""
# The main thread stuck in C while a shell command runs (argv[2]).
_STUCK = (
    _HOLD
    + """
    import ctypes
    print("stuck", flush=True)
    # Not our stdout / stderr: `communicate` would wait for the command's end.
    ctypes.CDLL(None).system(f"exec {sys.argv[2]} >/dev/null 2>&1".encode())
print("returned", loop.requested, flush=True)
"""
)
# The main thread in Python: asked to stop, it "saves" until told on stdin.
_SAVING = (
    _HOLD
    + """
    print("ready", flush=True)
    while loop.requested is None:
        time.sleep(0.01)
    print("saving", flush=True)
    sys.stdin.readline()
print("saved", flush=True)
"""
)
_FIRST = (
    "purejaxdrl: SIGTERM received: saving a checkpoint once the chunks under way "
    "finish (one, or two where the next is queued; on host environments, the "
    "update under way), then stopping\n"
)
_AGAIN = (
    "purejaxdrl: SIGTERM received again: ending this process in 2 s, without "
    "saving, unless the stop under way has saved its checkpoint by then\n"
)


def _start(script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


# Signals this far apart by the watcher thread's clock, which reads each one
# when it wakes (late, on a loaded machine), are two, not one sent twice.
_APART_S = SAME_SIGNAL + 1.0


def _stuck(command: str) -> subprocess.Popen:
    """Process 0, its main thread in libc's `system` running `command`."""
    proc = _start(_STUCK, "main", command)
    assert proc.stdout.readline() == "stuck\n"
    # In C once `system` has started its shell: a signal sent before (a fixed
    # sleep on a loaded machine) could find the main thread still in Python.
    children = pathlib.Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    deadline = time.monotonic() + 30
    while not children.read_text().split():
        assert time.monotonic() < deadline, "it never entered system()"
        time.sleep(0.01)
    return proc


def _lines(stream) -> queue.Queue:
    """`stream`'s lines as they come, read by a thread; None at its end."""
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def _said(lines: queue.Queue, seconds: float = 20) -> str:
    """The next line, or "" where none comes within `seconds` (or ever)."""
    try:
        return lines.get(timeout=seconds) or ""
    except queue.Empty:
        return ""


def _rest(lines: queue.Queue) -> str:
    """The lines still to come from a process that has ended."""
    return "".join(iter(lambda: _said(lines), ""))


@pytest.mark.timeout(60)
def test_a_second_sigterm_ends_a_process_stuck_in_c():
    proc = _stuck("sleep 30")
    try:
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)  # the handler cannot run: nothing happens
        time.sleep(_APART_S)
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=15)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert time.monotonic() - started < 10
    assert err == _AGAIN  # the first's handler never ran


@pytest.mark.timeout(60)
def test_a_first_signal_handled_after_the_second_was_said_says_nothing():
    # The main thread leaves C once the second signal was said, 2 s before the
    # end: the first's handler ran then and said "received: saving a
    # checkpoint ..." after "received again: ending ...".
    proc = _stuck("head -n 1")  # in C until a line comes on its stdin
    err_lines = _lines(proc.stderr)
    try:
        proc.send_signal(signal.SIGTERM)
        time.sleep(_APART_S)
        proc.send_signal(signal.SIGTERM)
        err = _said(err_lines)  # the second's line, said while still in C
        proc.stdin.write("\n")  # out of C: the first's handler runs
        proc.stdin.flush()
        proc.wait(timeout=15)
        err += _rest(err_lines)
    finally:
        proc.kill()
    assert proc.returncode in (0, 128 + signal.SIGTERM), err
    assert err == _AGAIN


@pytest.mark.timeout(60)
def test_one_sigterm_sent_twice_at_once_is_held_as_one():
    # coreutils' `timeout` sends its signal to the process, then to its group.
    proc = _stuck("sleep 4")
    try:
        proc.send_signal(signal.SIGTERM)
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert out == "returned SIGTERM\n"
    assert err == _FIRST


def _signalled_twice(role: str, finish: bool) -> tuple[int, str, str]:
    """A process of many asked to stop, then signalled again while it saves.

    Returns its status, stdout and stderr; `finish`: its save ends once the
    second signal was said, within the grace (else never).
    """
    proc = _start(_SAVING, role)
    err_lines = _lines(proc.stderr)
    try:
        assert proc.stdout.readline() == "ready\n"
        proc.send_signal(signal.SIGTERM)
        assert proc.stdout.readline() == "saving\n"
        err = _said(err_lines)  # the first's line
        time.sleep(_APART_S)
        proc.send_signal(signal.SIGTERM)
        err += _said(err_lines)  # the second's
        if finish:
            proc.stdin.write("\n")
            proc.stdin.flush()
        proc.wait(timeout=20)  # stdin left open: an unfinished save goes on
        out, err = proc.stdout.read(), err + _rest(err_lines)
    finally:
        proc.kill()
    return proc.returncode, out, err


@pytest.mark.timeout(60)
def test_a_second_sigterm_while_saving_is_said_once_and_the_save_may_finish():
    # It repeated the first line ("saving a checkpoint ..."), word for word;
    # the process then ended without saving if the save took over 2 s more.
    status, out, err = _signalled_twice("main", finish=True)
    assert (status, out) == (0, "saved\n"), err
    assert err == _FIRST + _AGAIN


@pytest.mark.timeout(60)
def test_a_second_sigterm_ends_a_save_that_does_not_finish_within_the_grace():
    status, out, err = _signalled_twice("main", finish=False)
    assert (status, out) == (128 + signal.SIGTERM, ""), err
    assert err == _FIRST + _AGAIN


@pytest.mark.timeout(60)
def test_a_process_other_than_0_says_it_stops_with_the_others():
    # It said nothing and exited 0, as a process never asked to stop does.
    proc = _start(_SAVING, "peer")
    try:
        assert proc.stdout.readline() == "ready\n"
        proc.send_signal(signal.SIGTERM)
        assert proc.stdout.readline() == "saving\n"
        out, err = proc.communicate("\n", timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert err == (
        "purejaxdrl: SIGTERM received: stopping with the other processes once the "
        "chunks under way finish (one, or two where the next is queued; on host "
        "environments, the update under way); process 0 says when the checkpoint "
        "is saved and prints the resume command\n"
    )
