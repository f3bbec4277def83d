"""How the learner of a host-env run waits for its actors, and stops waiting.

A host environment can block for ever (a simulator that hangs, a worker stuck
in a C extension): the learner's wait for a batch (`next_batch`) says so in one
line after `STALL_NOTICE_S`, raises an actor's error, and honours a stop
request (SIGINT / SIGTERM) within `STOP_WAIT_S` even when no batch comes: the
run then stops with the updates it finished, saved as any stop saves them.
A run of several processes cannot stop one process's learner alone (the
others wait for it in their collectives): there the wait goes on, and a second
Ctrl-C aborts. The actor threads are daemons: one stuck in its environments
never holds the process's exit (`JOIN_S`, `ABORT_JOIN_S`).
"""

import queue
import sys
import time
from collections.abc import Callable

import jax

from purejaxdrl.config import ConfigError
from purejaxdrl.env.host.base import NonFiniteStepError
from purejaxdrl.runners.actor import Actor
from purejaxdrl.runners.base import EnvError, NonFiniteError
from purejaxdrl.runners.trajectories import Batch

# Seconds without a batch before one line says which actor waits on what.
STALL_NOTICE_S = 60.0
# Seconds a stop request waits for the batch of the update under way; then the
# run stops with the updates done (an environment may never return).
STOP_WAIT_S = 5.0
# Seconds the actors get to finish their step when the run ends, and after an
# error, a second Ctrl-C or an `Abandoned` wait; an actor still in its
# environments after them is left behind (a daemon thread).
JOIN_S, ABORT_JOIN_S = 10.0, 2.0


class HostEnvError(EnvError):
    """An actor's environments or policy (its message says which) raised.

    Its cause is their own error. Exported as `purejaxdrl.HostEnvError`; the
    two kinds below are also what Python code catches for the same errors of
    a device environment (`except pjd.ConfigError`, `except pjd.NonFiniteError`).
    """


class HostConfigError(HostEnvError, ConfigError):
    """A user's environment broke Gymnasium's API in its step: bad input."""


class HostNonFiniteError(HostEnvError, NonFiniteError):
    """A host environment returned a NaN or infinite observation or reward."""


def actor_error(j: int, actor: Actor) -> HostEnvError:
    """Actor j's error, as the kind of HostEnvError its cause is."""
    e = actor.error
    kind = HostEnvError
    if isinstance(e, ConfigError):
        kind = HostConfigError
    elif isinstance(e, NonFiniteStepError):
        kind = HostNonFiniteError
    return kind(f"actor {j}'s {actor.doing} raised {type(e).__name__}: {e}")


class Abandoned(Exception):
    """A stop was requested and the update under way got no batch: it ends."""


def next_batch(
    i: int,
    q: queue.Queue,
    actors: list[Actor],
    update: int,
    stop: Callable[[], bool] | None,
) -> Batch:
    """Actor i's next batch from `q`, for `update` (0-based: as many are done).

    Args:
      i: the actor whose queue `q` is.
      q: its queue of batches.
      actors: every actor of this process (any one's error is raised).
      update: the update the batch is for.
      stop: () -> whether this process was asked to stop; None: never.

    Raises:
      HostEnvError: an actor's environments or policy raised (a
        HostConfigError or HostNonFiniteError for those causes).
      Abandoned: a stop was requested (one process) and no batch came within
        `STOP_WAIT_S`; one line has said so.

    """
    since, stop_since, noticed = time.monotonic(), None, False
    while True:
        for j, actor in enumerate(actors):
            if actor.error is not None:
                raise actor_error(j, actor) from actor.error
        try:
            return q.get(timeout=0.1)
        except queue.Empty:
            pass
        now = time.monotonic()
        if not noticed and now - since >= STALL_NOTICE_S:
            noticed = True
            say(stall_notice(i, actors[i], now - since, update))
        if stop is None or jax.process_count() > 1 or not stop():
            continue
        stop_since = stop_since or now
        if now - stop_since >= STOP_WAIT_S:
            env, where = _where(actors[i])
            say(
                f"stopping: {env} has not returned a batch for {now - since:.0f} s "
                f"(actor {i} is in {where}); the run ends {_updates_done(update)}"
            )
            raise Abandoned


def stall_notice(i: int, actor: Actor, waited: float, update: int) -> str:
    """The line said when actor i has given no batch for `waited` seconds."""
    env, where = _where(actor)
    if jax.process_count() > 1:  # the processes' learners stop together
        then = "a run of several processes waits for it; Ctrl-C twice aborts it"
    else:
        then = f"Ctrl-C stops the run {_updates_done(update)}"
    blocked = f"; {env} may be blocked" if actor.doing == "environments" else ""
    head = f"no batch from actor {i} for {waited:.0f} s"
    return f"{head}: it is in {where}{blocked} ({then})"


def _updates_done(update: int) -> str:
    """`with the 1,234 updates done` (1: `update`), or `before its first update`."""
    if update == 0:
        return "before its first update"
    return f"with the {update:,} update{'' if update == 1 else 's'} done"


def _where(actor: Actor) -> tuple[str, str]:
    """The actor's environments' name, and what the actor is doing, in words."""
    env = getattr(actor.env, "name", type(actor.env).__name__)
    if actor.doing == "environments":
        return env, f"{env}'s step"
    if actor.doing == "policy" and not actor.first_call_seconds:
        return env, "its policy's first call, which compiles it"
    return env, f"its {actor.doing}"


def say(line: str) -> None:
    """Prints `line` to stderr as the run's other notices are printed."""
    print(f"purejaxdrl: {line}", file=sys.stderr, flush=True)
