"""The worker processes of an async Gymnasium pool: they end when the run ends.

A Gymnasium `AsyncVectorEnv` steps each environment in a worker process. The
run must never wait on one for ever, and must leave none behind:

- Workers start with SIGINT and SIGTERM ignored (`ignoring_stop_signals`): a
  terminal's Ctrl-C, `timeout`, `kill -- -PGID` and SLURM signal the whole
  process group, and workers that died of it broke the run's step (a
  traceback, and no final checkpoint). This process stops on the signal and
  closes them. Each worker (`worker`) then restores SIGTERM's default, so that
  Gymnasium's `terminate()` and multiprocessing's exit handler end it.
- A worker dies with the process that made it: on Linux the kernel sends it
  SIGKILL when that process (strictly, the thread that started it) ends, however
  it ends, SIGKILL included (`prctl(PR_SET_PDEATHSIG)`). Elsewhere a thread of
  the worker's polls for its owner each second; it cannot run while the
  environment holds the GIL, which the kernel's signal does not need.
- `close` gives a step under way `CLOSE_TIMEOUT_S` (Gymnasium's close), and a
  watchdog SIGKILLs every worker still alive `CLOSE_TIMEOUT_S` later: a worker
  stuck in its environment's `step` (or one that handles SIGTERM itself) never
  holds the close.
- A worker that died (a crash in native code, the out-of-memory killer, an
  `os._exit`) is reported as such, with its exit code or signal
  (`worker_deaths`), not as Gymnasium's bare EOFError.
"""

import contextlib
import ctypes
import functools
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

# Seconds an async pool's workers get to finish a step and close; as many again
# before the ones still alive are killed.
CLOSE_TIMEOUT_S = 5.0

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

# How long a death report waits for the dead worker to be reaped: its pipe
# reads EOF as its files close, its exit code comes once it has fully exited
# (over a second later, for a process descheduled on a loaded machine).
REAP_WAIT_S = 5.0

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


class WorkerDied(RuntimeError):
    """A worker process of an async Gymnasium pool ended in the middle of a call."""


@contextlib.contextmanager
def ignoring_stop_signals() -> Iterator[None]:
    """SIGINT and SIGTERM ignored while an async pool starts its workers.

    The workers inherit the ignored signals (`worker` restores SIGTERM's
    default); this process restores its handlers. Signal handlers can only be
    set in the main thread: elsewhere, nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.signal(sig, signal.SIG_IGN) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def worker_for(owner: int) -> Callable[..., None]:
    """The `worker` of an AsyncVectorEnv made by process `owner` (picklable)."""
    return functools.partial(worker, owner)


def worker(owner: int, *args: Any) -> None:
    """Gymnasium's async worker, made to end with the run (`args`: Gymnasium's).

    SIGINT stays ignored (Ctrl-C is the run's to handle); SIGTERM ends it; it
    dies with process `owner` (`die_with`).
    """
    from gymnasium.vector.async_vector_env import _async_worker

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with(owner)
    _async_worker(*args)


def die_with(owner: int) -> None:
    """Ends this process when process `owner` ends (see the module's notes)."""
    if not _kernel_kills_orphans():
        threading.Thread(target=_watch, args=(owner,), daemon=True).start()
    # The owner may have died before the kernel was asked to signal its end.
    if not alive(owner):
        os._exit(1)


def _kernel_kills_orphans() -> bool:
    """Asks Linux for SIGKILL when this process's parent ends; whether it took."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):  # no libc, or no prctl in it
        return False


def _watch(owner: int) -> None:
    while alive(owner):
        time.sleep(1.0)
    os._exit(1)


def alive(pid: int) -> bool:
    """Whether process `pid` exists (a zombie too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's: it exists
        return True
    return True


def close_pool(vec: Any) -> None:
    """Closes async vector env `vec`: never hangs, and leaves no worker alive.

    Gymnasium's close waits `CLOSE_TIMEOUT_S` for a step under way, then
    terminates the workers and joins them without a timeout; a watchdog kills
    the ones still alive `CLOSE_TIMEOUT_S` after that. Where Gymnasium's close
    fails (EOFError, reading a dead worker's pipe) the workers are killed, the
    pipes closed, and the pool marked closed (else its `__del__` retries).
    """
    pool = vec.unwrapped
    watchdog = threading.Timer(2 * CLOSE_TIMEOUT_S, kill_workers, (pool,))
    watchdog.daemon = True
    watchdog.start()
    try:
        vec.close(timeout=CLOSE_TIMEOUT_S)
    except Exception:
        kill_workers(pool)
        for pipe in pool.parent_pipes:
            if pipe is not None:
                pipe.close()
        pool.closed = True
    finally:
        watchdog.cancel()
        # A watchdog that fired may have reaped a worker (waitpid) and not yet
        # stored its exit code: Gymnasium's join then saw ECHILD, and until the
        # watchdog ends, the worker's `exitcode` reads None.
        watchdog.join()


def kill_workers(pool: Any) -> None:
    """SIGKILLs every live worker of `pool` and joins each (bounded)."""
    for process in pool.processes:
        if process.is_alive():
            process.kill()
    for process in pool.processes:
        process.join(CLOSE_TIMEOUT_S)


@contextlib.contextmanager
def worker_deaths(pool: Any, env_name: str, method: str) -> Iterator[None]:
    """Turns a dead worker's EOFError / broken pipe inside `method` into WorkerDied.

    The message names the worker, its process id and its exit code or signal.
    """
    try:
        yield
    except (EOFError, BrokenPipeError, ConnectionResetError) as error:
        raise WorkerDied(death_report(pool, env_name, method, error)) from None


def death_report(pool: Any, env_name: str, method: str, error: BaseException) -> str:
    """One line saying which of `pool`'s workers died during `method`, and how."""
    # The pipe reads EOF as the process exits: it can be reaped a moment later.
    deadline = time.monotonic() + REAP_WAIT_S
    while True:
        dead = [(i, p) for i, p in enumerate(pool.processes) if p.exitcode is not None]
        if dead or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    if not dead:
        return (
            f"{env_name}: a worker process's pipe broke during {method} "
            f"({type(error).__name__}: {error}); its worker processes look alive"
        )
    said = ", ".join(
        f"{i} (pid {p.pid}, {exit_status(p.exitcode)})" for i, p in dead[:3]
    )
    more = f" and {len(dead) - 3} more" if len(dead) > 3 else ""
    return (
        f"{env_name}'s worker process{'es' if len(dead) > 1 else ''} {said}{more} "
        f"died during {method}: its environment crashed in native code or exited, "
        "or the out-of-memory killer ended it"
    )


def exit_status(code: int) -> str:
    """'exit code 3', or 'killed by SIGKILL' for multiprocessing's exitcode -9."""
    if code >= 0:
        return f"exit code {code}"
    try:
        return f"killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"
