"""A second SIGTERM ends a process of a multi-process run, even one stuck in C.

A Python handler runs only when the main thread returns to Python: a process
waiting in a collective (processes that resolved different runs) ignored
every SIGTERM, and only SIGKILL ended it. Here libc's `system` stands in for
the collective: it blocks the main thread in C and retries when a signal
interrupts it, as gloo's wait does.
"""

import os
import signal
import subprocess
import sys
import time

import pytest

# The hold of `held_stop_signals`, then the main thread stuck in C for a while.
_STUCK = """
import ctypes, sys
from purejaxdrl.cli.second_signal import EndOnSecondSignal
from purejaxdrl.training.faults import StopSignals

with StopSignals(announce=False, before_training=True) as held, EndOnSecondSignal():
    print("stuck", flush=True)
    # Not our pipes: `communicate` would wait for this `sleep` to end.
    ctypes.CDLL(None).system(f"exec sleep {sys.argv[1]} >/dev/null 2>&1".encode())
print("returned", held.requested, flush=True)
"""


def _stuck(seconds: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", _STUCK, str(seconds)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline() == "stuck\n"
    time.sleep(0.3)  # into `system`
    return proc


@pytest.mark.timeout(60)
def test_a_second_sigterm_ends_a_process_stuck_in_c():
    proc = _stuck(30)
    try:
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)  # the handler cannot run: nothing happens
        time.sleep(1.5)
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=15)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert time.monotonic() - started < 10
    assert err == (
        "purejaxdrl: SIGTERM received again: ending this process now, without saving\n"
    )


@pytest.mark.timeout(60)
def test_one_sigterm_sent_twice_at_once_is_held_as_one():
    # coreutils' `timeout` sends its signal to the process, then to its group.
    proc = _stuck(4)
    try:
        proc.send_signal(signal.SIGTERM)
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert out == "returned SIGTERM\n"
