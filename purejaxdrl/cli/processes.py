"""The processes of a multi-process run: joining, agreeing, stopping.

`purejaxdrl train --coordinator ... --num-processes N --process-id I` starts
one process per host; they join through `jax.distributed` before JAX starts a
backend, check that they resolved the same run, and stop together, each with
one line, when one fails: JAX's own coordination service would otherwise
abort the survivors with a C++ stack dump.
"""

import atexit
import contextlib
import os
import sys
import threading
import time
from typing import Any, NoReturn

import jax

from purejaxdrl.cli.process_config import DistributedConfig, check_before_joining
from purejaxdrl.coordination import client as coordination_client

EXIT_PEER_FAILURE = 1
# Seconds a process gives its own error to surface after process 0 has said it
# is leaving, before its watchdog ends it: within `_leave_last`'s wait.
_PEER_GRACE = 3.0
# Stops this process's heartbeat thread (set by `_start_watchdog`).
_stop_watching: list = []


def initialize_distributed(config: DistributedConfig) -> bool:
    """Starts `jax.distributed` for a multi-process run; a no-op for one process.

    Must run before anything touches a JAX backend. On CPU it selects gloo for
    cross-process collectives. A process that cannot join within
    `config.init_timeout` seconds exits with one line (status 1).

    Returns:
      Whether this process joined a multi-process run.

    Raises:
      ValueError: when only some of coordinator / num_processes / process_id
        are given, or they are out of range or malformed, or process 0's
        port is in use on this host.

    """
    if not config.enabled:
        return False
    check_before_joining(config)
    # Only the CPU client reads this; asking for the backend here would start it
    # before `initialize`, which must come first.
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    # JAX's pre-emption notifier would take SIGTERM for itself and tell
    # purejaxdrl nothing: a run signalled before its loop trained its whole
    # budget. `train` holds SIGINT / SIGTERM itself from here on.
    jax.config.update("jax_enable_preemption_service", False)
    # JAX aborts with a C++ stack dump when the join times out: this timer,
    # set to fire first, ends the process with one line instead.
    timer = threading.Timer(config.init_timeout, _exit_unjoined, (config,))
    timer.daemon = True
    timer.start()
    try:
        jax.distributed.initialize(
            coordinator_address=config.coordinator,
            num_processes=config.num_processes,
            process_id=config.process_id,
            heartbeat_timeout_seconds=config.heartbeat_timeout,
            initialization_timeout=config.init_timeout + 30,
        )
    except (ValueError, RuntimeError) as e:
        if not config.auto:
            raise
        raise ValueError(
            "--distributed-auto found no cluster (SLURM, Cloud TPU or Open MPI; "
            f"JAX: {' '.join(str(e).split())[:200]}); run under srun / on a TPU VM, or "
            "pass --coordinator HOST:PORT --num-processes N --process-id I."
        ) from None
    finally:  # joined, or raised: either way not stuck
        timer.cancel()
    _start_watchdog(0.75 * config.heartbeat_timeout)
    if not config.auto:
        _check_process_count(config.num_processes, config.init_timeout)
    return True


def _check_process_count(count: int, timeout: float) -> None:
    """Raises a ValueError on every process whose --num-processes is not 0's.

    JAX joins a process whose id is below process 0's count whatever its own
    count says (it then trained, its flag never reported). Each process
    publishes its count; process 0 reads every peer's, the others read 0's.
    """
    state, ms = _state(), int(timeout * 1000)
    me = state.process_id
    state.client.key_value_set(f"purejaxdrl/num_processes/{me}", str(count))
    peers = range(1, count) if me == 0 else [0]
    for peer in peers:
        theirs = state.client.blocking_key_value_get(
            f"purejaxdrl/num_processes/{peer}", ms
        )
        if int(theirs) != count:
            other, zeros = (peer, count) if me == 0 else (me, int(theirs))
            raise ValueError(
                f"process {other} was given --num-processes "
                f"{count if me else theirs} but process 0 --num-processes "
                f"{zeros}; give every process the same --num-processes."
            )


def held_stop_signals(hold: bool, saves: bool = True) -> Any:
    """SIGINT / SIGTERM as a request to stop, from joining on, if `hold`.

    JAX's pre-emption notifier is off (`initialize_distributed`): a signal
    while the run restores or compiles (minutes on an accelerator) would kill
    this process alone. The chunk loop's handler takes the request over and
    every process stops before the first chunk, with a checkpoint if `saves`
    (a run without files stops unsaved). A second signal ends the process
    even while it waits in a collective (`EndOnSecondSignal`), where no
    Python handler runs.
    """
    if not hold:
        return contextlib.nullcontext()
    from purejaxdrl.cli.second_signal import held_signals

    return held_signals(main=_state().process_id == 0, saves=saves)


def _state() -> Any:
    """jax.distributed's state (no backend start: only the client's)."""
    from jax._src import distributed as jax_distributed  # not public

    return jax_distributed.global_state


def _exit_unjoined(config: DistributedConfig) -> NoReturn:
    """Ends a process that the others did not join in time, with one line."""
    if config.auto:
        who, where = "this process", "the coordinator JAX detected"
    else:
        who = f"process {config.process_id} of {config.num_processes}"
        where = f"coordinator {config.coordinator}"
    sys.stderr.write(
        f"purejaxdrl: error: {who} could not join the run at {where} within "
        f"{config.init_timeout} s: check that every process was started with the "
        "same --coordinator and --num-processes and its own --process-id, that "
        "process 0 runs on that host and its port is reachable, or raise "
        "--init-timeout if the processes start far apart.\n"
    )
    sys.stderr.flush()
    os._exit(EXIT_PEER_FAILURE)


def joined() -> bool:
    """Whether this process has joined a multi-process run (`jax.distributed`)."""
    return coordination_client() is not None


def reports_stops() -> bool:
    """Whether this process says how a stop ended: process 0, or one alone.

    A peer said so in its signal's line (`process 0 says where they stopped`).
    """
    return not joined() or _state().process_id == 0


def exit_if_joined(status: int) -> None:
    """Ends a process of a multi-process run at once that stops with `status`.

    A process that stops early (bad flags, a failed run) would otherwise wait
    in jax.distributed's shutdown barrier for processes that are still
    training, then abort with a C++ stack dump; its peers see it gone and stop
    with one line of their own.
    """
    if status and joined():
        sys.stdout.flush()
        sys.stderr.flush()
        _leave_last()
        os._exit(status)


def _leave_last(wait: float = 6.0) -> None:
    """Says this process is leaving; process 0 first waits for its peers to leave.

    Process 0 hosts the coordination service: a peer still running when it
    exits is aborted by JAX's error poller (a C++ stack dump, status 134). So
    0 waits up to `wait` seconds for the others to say they are leaving: those
    stopping too (the same bad flag on every host) with their own line, the
    rest told by their watchdog, which sees 0's key (`_PEER_GRACE`).
    """
    state = _state()
    try:
        state.client.key_value_set(f"purejaxdrl/left/{state.process_id}", "1")
        if state.process_id != 0:
            return
        deadline = time.monotonic() + wait
        for peer in range(1, state.num_processes):
            left = max(1, int((deadline - time.monotonic()) * 1000))
            state.client.blocking_key_value_get(f"purejaxdrl/left/{peer}", left)
        time.sleep(0.2)  # from their key to their exit
    except Exception:  # a peer that stays (or the store failing): leave now
        return


def leave_together() -> None:
    """Leaves the run cleanly; every process must call it (all stop here).

    For a stop that every process reaches at the same point (configs that
    differ): each waits in jax.distributed's shutdown barrier for the others,
    then disconnects. Exiting at once instead races process 0, which hosts the
    coordination service: a peer still printing its line when 0 exited was
    aborted by JAX's error poller (a C++ stack dump, status 134).
    """
    while _stop_watching:
        _stop_watching.pop()()
    jax.distributed.shutdown()


def exit_on_peer_failure(detail: object) -> NoReturn:
    """Ends this process with one line when the run has lost a process.

    `os._exit`, not `sys.exit`: interpreter shutdown would wait on the dead peer
    in jax.distributed's shutdown barrier, then abort with a C++ stack dump.
    """
    detail = " ".join(str(detail).split())[:300]
    me, opened = jax.process_index(), sys.modules.get("purejaxdrl.training.opened_run")
    resume = opened.resume_after_failure() if opened and me == 0 else ""  # no run: ""
    sys.stderr.write(
        f"purejaxdrl: error: process {me} of {jax.process_count()} stopped "
        "because the run failed elsewhere (a process died or became "
        f"unreachable): {detail}{resume}\n"
    )
    sys.stderr.flush()
    os._exit(EXIT_PEER_FAILURE)


def _start_watchdog(timeout: float, interval: float = 1.0) -> None:
    """Watches the other processes' heartbeats; exits with one line if one stops.

    A dead peer otherwise surfaces as a failed collective (the CLI reports
    it) or, when none notices, as JAX's coordination service aborting this
    process with a C++ stack dump after `heartbeat_timeout`; this thread
    notices first (after `timeout`, 3/4 of that). Each process counts up a key
    in the service's store: a count that stops, or a store that stops
    answering (process 0 hosts it), means the run has failed.

    It stops at exit before JAX's handler shuts the client down: a beat sent
    into that shutdown fails (CANCELLED), which would fail a finished run.
    """
    client = coordination_client()
    if client is None:
        return
    me, count = jax.process_index(), jax.process_count()
    stop = threading.Event()

    def watch() -> None:
        seen: dict[int, tuple[str | None, float]] = {}
        beat, zero_left = 0, None
        while not stop.is_set():
            beat += 1
            now = time.monotonic()
            try:
                client.key_value_set(
                    f"purejaxdrl/alive/{me}", str(beat), allow_overwrite=True
                )
                if me and _found(client, "purejaxdrl/left/0"):
                    zero_left = zero_left or now
                    if now - zero_left >= _PEER_GRACE:  # 0 waits for this key
                        client.key_value_set(f"purejaxdrl/left/{me}", "1")
                        exit_on_peer_failure("process 0 stopped; its output says why")
                for peer in range(count):
                    if peer == me:
                        continue
                    value = _found(client, f"purejaxdrl/alive/{peer}")  # None: not yet
                    last, since = seen.get(peer, (None, now))
                    if value != last:
                        seen[peer] = (value, now)
                    elif now - since > timeout:
                        exit_on_peer_failure(
                            f"process {peer} sent no heartbeat for {timeout:.0f} s"
                        )
            except Exception as e:  # the store itself is gone: process 0 died
                if stop.is_set():  # no: this process is shutting down
                    return
                exit_on_peer_failure(f"coordination service unreachable: {e}")
            stop.wait(interval)

    thread = threading.Thread(target=watch, name="purejaxdrl-watchdog", daemon=True)

    def stop_watching() -> None:
        stop.set()
        thread.join(timeout=10)

    # atexit runs last-registered first, so this runs before the shutdown that
    # JAX registered when it was imported.
    atexit.register(stop_watching)
    _stop_watching.append(stop_watching)
    thread.start()


def _found(client: Any, key: str) -> str | None:
    """`key`'s value in the coordination service's store; None if not set yet."""
    try:
        return client.key_value_try_get(key)
    except jax.errors.JaxRuntimeError as e:
        if "NOT_FOUND" not in str(e):
            raise
        return None
