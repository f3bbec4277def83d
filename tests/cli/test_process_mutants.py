"""A process's flags, its port check and the second signal, checked in-process.

Gaps that mutation testing found: the port range's ends, a negative process
id, the example a bad coordinator is given, a port held on another local
address or only closing, the flags' defaults, and what the second-signal
watcher does with other signals and with the wakeup file it replaced.
"""

import argparse
import contextlib
import dataclasses
import os
import signal
import socket
import threading
import time
import types

import pytest

from purejaxdrl.cli import second_signal
from purejaxdrl.cli.process_config import (
    DEFAULT_INIT_TIMEOUT,
    DistributedConfig,
    check_before_joining,
    check_flags,
    check_port_free,
)
from purejaxdrl.cli.process_flags import add_process_flags


def _config(coordinator: str = "h:1", count: int = 2, index: int = 0):
    return DistributedConfig(
        coordinator=coordinator, num_processes=count, process_id=index
    )


def test_a_run_is_multi_process_when_any_of_its_flags_is_given():
    assert not DistributedConfig().enabled
    assert DistributedConfig(auto=True).enabled
    assert DistributedConfig(process_id=0).enabled
    check_flags(DistributedConfig(auto=True))  # the cluster names the rest


@pytest.mark.parametrize("port", [1, 65535])
def test_the_ports_ends_are_accepted(port):
    check_flags(_config(f"h:{port}"))


@pytest.mark.parametrize("coordinator", ["h:0", "h:65536", "h:-1"])
def test_a_port_outside_1_to_65535_is_refused(coordinator):
    with pytest.raises(ValueError, match="a port from 1 to 65535"):
        check_flags(_config(coordinator))


def test_a_coordinator_without_its_host_keeps_its_port_in_the_example():
    with pytest.raises(
        ValueError, match=r"--coordinator HOSTNAME_OF_PROCESS_0:5678\.$"
    ):
        check_flags(_config(":5678"))


def test_an_ipv6_host_needs_brackets():
    # `::1` split at its last colon read as host ':' and port 1.
    with pytest.raises(ValueError, match=r"e\.g\. --coordinator \[::1\]:1234\.$"):
        check_flags(_config("::1"))
    check_flags(_config("[::1]:1234"))


def test_an_init_timeout_below_one_second_is_refused():
    with pytest.raises(ValueError, match=r"--init-timeout 0 must be >= 1"):
        check_flags(DistributedConfig(auto=True, init_timeout=0))
    check_flags(dataclasses.replace(_config(), init_timeout=1))


def test_a_negative_process_id_is_refused():
    with pytest.raises(ValueError, match=r"--process-id -1 must be in \[0, 2\)"):
        check_flags(_config(index=-1))
    check_flags(_config(index=1))


def test_a_port_held_on_another_local_address_is_in_use():
    # JAX binds every address: a program listening on one of them only
    # (127.0.0.2 is loopback too on Linux) holds the port as well.
    with socket.socket() as held:
        try:
            held.bind(("127.0.0.2", 0))
        except OSError:
            pytest.skip("no 127.0.0.2 on this host")
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(ValueError, match=f"port {port} is in use on this host"):
            check_port_free(f"127.0.0.1:{port}")


def test_only_process_0_needs_the_port_free():
    # Process 0 hosts the coordination service; the others connect to it.
    with socket.socket() as held:
        held.bind(("0.0.0.0", 0))
        held.listen()
        port = held.getsockname()[1]
        check_before_joining(_config(f"127.0.0.1:{port}", index=1))
        with pytest.raises(ValueError, match=f"port {port} is in use"):
            check_before_joining(_config(f"127.0.0.1:{port}", index=0))


def test_a_port_whose_connections_are_only_closing_is_free():
    # A run that just ended leaves its accepted connections in TIME_WAIT
    # (its server, gRPC's, binds with SO_REUSEADDR, as here).
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("0.0.0.0", 0))
        listener.listen()
        port = listener.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = listener.accept()
        accepted.close()  # this side closes first: its port waits in TIME_WAIT
        client.recv(1)
        client.close()
    for _ in range(20):  # until the close is through (at once on loopback)
        with contextlib.suppress(ValueError):
            return check_port_free(f"127.0.0.1:{port}")
        time.sleep(0.05)
    check_port_free(f"127.0.0.1:{port}")


def test_the_process_flags_default_to_one_process():
    parser = argparse.ArgumentParser()
    add_process_flags(parser)
    args = parser.parse_args([])
    named = (args.coordinator, args.num_processes, args.process_id)
    assert named == (None, None, None) and args.distributed_auto is False
    assert args.init_timeout == DEFAULT_INIT_TIMEOUT
    args = parser.parse_args(["--process-id", "1", "--num-processes", "3"])
    assert (args.process_id, args.num_processes) == (1, 3)


def _watched(monkeypatch, signals: list[tuple[float, int]]) -> list[int]:
    """The signals `_watch` ends the process for, given (time, signal) pairs."""
    ended = []
    clock = iter([t for t, _ in signals])
    monkeypatch.setattr(
        second_signal, "time", types.SimpleNamespace(monotonic=lambda: next(clock))
    )
    monkeypatch.setattr(second_signal, "_end", lambda s, saves: ended.append(s))
    read, write = os.pipe()
    os.write(write, bytes(s for _, s in signals))
    os.close(write)
    second_signal._watch(read, True)
    return ended


def test_only_a_second_sigint_or_sigterm_ends_the_process(monkeypatch):
    usr1, term, sigint = signal.SIGUSR1, signal.SIGTERM, signal.SIGINT
    assert _watched(monkeypatch, [(0.0, usr1), (5.0, usr1)]) == []
    assert _watched(monkeypatch, [(0.0, usr1), (5.0, term)]) == []
    assert _watched(monkeypatch, [(0.0, term), (0.5, term), (5.0, sigint)]) == [sigint]


def test_the_end_says_so_at_once_then_gives_the_main_thread_its_grace(monkeypatch):
    # Said before the grace, once: a stuck main thread never speaks, and one
    # whose stop ends the process first leaves the line that said it might.
    done = []
    monkeypatch.setattr(
        second_signal,
        "time",
        types.SimpleNamespace(sleep=lambda s: done.append(("sleep", s))),
    )
    monkeypatch.setattr(
        second_signal, "os", types.SimpleNamespace(_exit=lambda s: done.append(s))
    )
    stderr = types.SimpleNamespace(write=done.append, flush=lambda: None)
    monkeypatch.setattr(second_signal, "sys", types.SimpleNamespace(stderr=stderr))
    said = threading.Event()  # not this test process's own
    monkeypatch.setattr(second_signal, "SECOND_SIGNAL_SAID", said)
    second_signal._end(signal.SIGTERM, True)
    line = (
        "purejaxdrl: SIGTERM received again: ending this process in 2 s, without "
        "saving, unless the stop under way has saved its checkpoint by then\n"
    )
    assert done == [line, ("sleep", second_signal.GRACE), 128 + signal.SIGTERM]
    assert second_signal.GRACE == 2
    assert said.is_set()  # the first signal's handler says nothing after it
    done.clear()
    second_signal._end(signal.SIGINT, False)  # a run without files saves nothing
    assert done[0] == (
        "purejaxdrl: SIGINT received again: ending this process in 2 s, unless "
        "the stop under way has ended it by then\n"
    )


def _wakeup_pipe() -> tuple[int, int]:
    read, write = os.pipe()
    os.set_blocking(write, False)
    return read, write


def _watchers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "purejaxdrl-second-signal"}


@pytest.mark.parametrize("replaced", [False, True])
def test_the_wakeup_file_is_given_back_and_the_watcher_ends(replaced):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal.set_wakeup_fd works in the main thread only")
    before, other = _wakeup_pipe(), _wakeup_pipe()
    previous, running = signal.set_wakeup_fd(before[1]), _watchers()
    try:
        with second_signal.EndOnSecondSignal():
            (watcher,) = _watchers() - running
            if replaced:  # another took the wakeup file since: it keeps it
                signal.set_wakeup_fd(other[1])
        watcher.join(timeout=5)
        assert not watcher.is_alive()
        expected = other[1] if replaced else before[1]
        assert signal.set_wakeup_fd(-1) == expected
    finally:
        signal.set_wakeup_fd(previous)
        for fd in (*before, *other):
            os.close(fd)
