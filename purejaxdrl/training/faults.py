"""How a run stops safely: on SIGINT / SIGTERM, and on non-finite values.

Host-side only: signal handlers and checks of the metrics a chunk returned.
"""

import os
import re
import signal
import sys
import threading
import time
import types
from collections.abc import Callable, Mapping
from typing import Any

import jax
import numpy as np

from purejaxdrl.coordination import gather_rows
from purejaxdrl.runners.anakin import NON_FINITE
from purejaxdrl.runners.base import NonFiniteError as NonFiniteError
from purejaxdrl.signal_holds import SignalHold
from purejaxdrl.training import stop_words
from purejaxdrl.training.opened_run import (
    full_disk_advice,
    resume_advice,
    resume_command_for,
)
from purejaxdrl.training.stop_words import SAME_SIGNAL

# Set by `cli.second_signal` once it has said that a second signal ends this
# process. A main thread stuck in C++ for a while runs the first signal's
# handler only after that line: its own line, said then, would follow the
# "received again" one and promise a checkpoint the end may cut off.
SECOND_SIGNAL_SAID = threading.Event()


class StopSignals(SignalHold):
    """Turns SIGINT and SIGTERM into a request to stop after the current chunk.

    A cluster pre-empts a job with SIGTERM; Ctrl-C sends SIGINT. Either sets
    `requested` (the host loop saves a checkpoint, unless not `saves`, and
    returns) and says so in one line on stderr, if `announce`. A repeat of
    this process's signal says one line of its own (or nothing: the same
    SIGTERM sent twice within `SAME_SIGNAL` s); a repeated SIGINT aborts at
    once. Where `second_ends`, a repeat is left to
    `cli.second_signal.EndOnSecondSignal`, which says what it does and ends
    the process. Handlers are installed only from the main thread (Python's
    rule) and the previous ones are restored on exit. One entered inside
    another takes over its request (and its `second_ends`): a signal that
    came while the run was still compiling (`before_training`) stops it
    before its first chunk; handed over, the outer one no longer holds
    signals: after the inner one exits (the final save, export, summary)
    they act as before it entered.

    Args:
      announce: say each signal's line on stderr.
      before_training: entered before the chunk loop (its line says the run
        stops before the first chunk).
      saves: a stop saves a checkpoint (False: a run without files).
      peer: this is a process other than 0 of a run of many: its line says
        it stops with the others, and that process 0 reports.
      second_ends: a second signal is `EndOnSecondSignal`'s (a run of many
        processes, from the CLI): a repeat neither prints nor aborts here.
      host_envs: the run may step host environments (its line says they
        finish the update under way); False for a sweep or PBT run.

    """

    def __init__(
        self,
        announce: bool = True,
        before_training: bool = False,
        saves: bool = True,
        peer: bool = False,
        second_ends: bool = False,
        host_envs: bool = True,
    ):
        super().__init__()
        self.requested: str | None = None
        self._announce = announce
        # False: a run without files stops unsaved, and so does any run before
        # its first update (nothing trained: `train` saves nothing then).
        self._saves = saves and not before_training
        self._before = before_training
        self._peer = peer
        self._second_ends = second_ends
        self._host_envs = host_envs
        # When this process got its first signal (time.monotonic()); None:
        # none yet (`requested` may be a peer's signal, agreed).
        self._first_at: float | None = None

    def _held(self, signum: int, frame: types.FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self._first_at is not None:
            self._repeat(signum, name)
            return
        self._first_at = time.monotonic()
        self.requested = name
        if self._announce and not SECOND_SIGNAL_SAID.is_set():
            said = stop_words.first(
                name, self._before, self._saves, self._peer, self._host_envs
            )
            _say(said + stop_words.ctrl_c(name, self._saves, self._second_ends))

    def _repeat(self, signum: int, name: str) -> None:
        """A signal after this process's first: one line, or an abort."""
        if self._second_ends:
            return  # EndOnSecondSignal says what it does, and does it
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        if time.monotonic() - self._first_at < SAME_SIGNAL:
            return  # one SIGTERM sent twice (`timeout`): said already
        if self._announce:
            # Nothing changes: the stop asked for goes on (the first line
            # again would read as a second request, or a second save).
            _say(stop_words.again(name, self._before, self._saves, self._host_envs))

    def _take_over(self, outer: SignalHold) -> bool:
        """Takes over an outer StopSignals' request (and its `second_ends`)."""
        if not isinstance(outer, StopSignals):
            return False
        self.requested = self.requested or outer.requested
        self._first_at = self._first_at or outer._first_at
        self._second_ends = self._second_ends or outer._second_ends
        return True


def agreed_stop(stop: StopSignals) -> bool:
    """Whether any process was asked to stop (all must stop at the same chunk).

    Gathered over one device per process (`coordination.gather_rows`):
    `multihost_utils.process_allgather` needs as many devices in every
    process, and hosts may have more or fewer (each then trains on the fewest).
    """
    if jax.process_count() == 1:
        return stop.requested is not None
    anyone = bool(gather_rows(np.float32([stop.requested is not None])).max())
    if anyone and stop.requested is None:
        stop.requested = "a peer's signal"
    return anyone


def _say(line: str) -> None:
    """Writes `line` on stderr at once (a handler's: the run may end soon)."""
    print(line, file=sys.stderr, flush=True)


_ENV_OUTPUTS = ("observation", "reward", "final_observation")


def non_finite_entries(name: str, values: Any, xp: Any = np) -> Any | None:
    """Which of metric `name`'s `values` say a run went non-finite; None: not judged.

    A learner's metric is bad where NaN or infinite; a count of the
    environment's non-finite outputs (`non_finite/<output>`) where positive;
    an episode sum (`episode/...`) is never judged. `xp` is NumPy on the host
    (`first_non_finite`) or jax.numpy on the device (PBT's ready step).
    """
    if name.startswith("episode/"):
        return None
    return values > 0 if name.startswith(NON_FINITE) else ~xp.isfinite(values)


def first_non_finite(
    metrics: Mapping[str, np.ndarray],
) -> tuple[str, int, float] | None:
    """The first metric (by update) that is NaN or infinite, if any.

    A device runner's count of what its environments returned non-finite
    (`non_finite/<output>`, `runners.anakin.NON_FINITE`) is bad when
    positive, and comes first at its update: the environment's NaN is why the
    learner's metrics went NaN there too.

    Args:
      metrics: a chunk's metrics, each float [length] (one value per update);
        episode sums (`episode/...`) are skipped.

    Returns:
      (name, index of the update within the chunk, value), or None.

    """
    worst, first = None, None
    for name, values in metrics.items():
        values = np.atleast_1d(np.asarray(values))
        found = non_finite_entries(name, values)
        if found is None:
            continue
        output = name.removeprefix(NON_FINITE) if name.startswith(NON_FINITE) else ""
        bad = np.flatnonzero(found)
        # At one update: the environment's outputs first, in the order it
        # makes them (a NaN observation is its final observation too).
        rank = _ENV_OUTPUTS.index(output) if output in _ENV_OUTPUTS else 3
        if bad.size and (first is None or (bad[0], rank) < first):
            first = (bad[0], rank)
            worst = (name, int(bad[0]), float(values[bad[0]]))
    return worst


def non_finite_message(
    bad: tuple[str, int, float], update: int, env_id: str, last_good: Callable
) -> str:
    """The one line a run stops with on `first_non_finite`'s finding `bad`.

    An environment's non-finite output is said to be the environment's, with
    how to find it (as host environments' `env.host.base.check_finite` says);
    a learner's value is said to be the learner's.

    Args:
      bad: (name, index, value) from `first_non_finite`.
      update: the update it happened at (counted from the run's start).
      env_id: the run's `env.id`.
      last_good: `ChunkLoop.last_good`: given the end of the resume command,
        where the last good checkpoint is and how to resume it.

    """
    name, _, value = bad
    if not name.startswith(NON_FINITE):
        where = last_good(" --override` and a lower learning rate")
        return (
            f"update {update:,}: {name} is {value}; the run stopped instead "
            f"of training on non-finite values; {where}."
        )
    output = name.removeprefix(NON_FINITE).replace("_", " ")
    entries = f"{value:,.0f} {'entry' if value == 1 else 'entries'}"
    return (
        f"update {update:,}: environment {env_id} returned a non-finite "
        f"{output} ({entries} in the update's unroll); the environment, not the "
        f"learner, went non-finite: find where it computes its {output} (a "
        "division by zero, say) and return finite values; the run stopped "
        f"rather than train on it; {last_good('` once it is fixed')}."
    )


def _chain(error: BaseException) -> list[BaseException]:
    """`error` and the errors it was raised from or during, outermost first."""
    chain: list[BaseException] = []
    while error is not None and error not in chain:
        chain.append(error)
        error = error.__cause__ or error.__context__
    return chain


def _os_reason(chain: list[BaseException]) -> str | None:
    """The operating system's reason in `chain`: an OSError's, or TensorStore's code.

    TensorStore raises ValueErrors whose text ends in `[os_error_code='28']`.
    """
    for e in chain:
        if isinstance(e, OSError) and e.strerror:
            return f"{e.strerror} ({e.filename})" if e.filename else e.strerror
    for e in chain:
        if code := re.search(r"os_error_code='(\d+)'", str(e)):
            return os.strerror(int(code.group(1)))
    return None


def _disk_reason(error: BaseException) -> str | None:
    """The operating system's reason a write failed; None: it gave none.

    orbax wraps the OSError of a full disk or a read-only folder in its own
    errors, whose text (paths, tensorstore's context) can run to kilobytes.
    """
    chain = _chain(error)
    if reason := _os_reason(chain):
        return reason
    text = " ".join(str(chain[0]).split())
    for reason in ("No space left on device", "Read-only file system",
                   "Permission denied", "Disk quota exceeded"):  # fmt: skip
        if reason in text:
            return reason
    return None


def failure_reason(error: BaseException) -> str:
    """One line on why a write failed: the operating system's reason, if any."""
    return _disk_reason(error) or " ".join(str(_chain(error)[0]).split())[:300]


# XLA's status codes. A collective that lost its peer once reached Python as a
# ValueError ("UNKNOWN: Gloo all-reduce failed: ...", in CI); ours never start so.
_RUNTIME_STATUS = re.compile(
    r"(UNKNOWN|INTERNAL|UNAVAILABLE|ABORTED|CANCELLED|DEADLINE_EXCEEDED"
    r"|FAILED_PRECONDITION|DATA_LOSS|RESOURCE_EXHAUSTED): "
)


def runtime_failure(error: BaseException) -> bool:
    """Whether `error` is the runtime's (a failed computation), not a check's."""
    if isinstance(error, jax.errors.JaxRuntimeError):
        return True
    return bool(_RUNTIME_STATUS.match(str(error).lstrip()))


def lost_process(error: BaseException) -> BaseException | None:
    """The runtime's failure that `error` was raised from, in a run of processes.

    A save's barrier (orbax's, through JAX's coordination service) fails
    with `INTERNAL: Barrier failed because: ... Task 1 heartbeat timeout`
    when a process died while the run saved; its text is no disk's fault.
    None in a run of one process, or for any other error.
    """
    if jax.process_count() == 1:
        return None
    return next((e for e in _chain(error) if runtime_failure(e)), None)


def save_failure(directory: os.PathLike, error: BaseException) -> str:
    """The one line a run stops with when a save in `directory` failed.

    With the command that resumes the run, as a stopped run prints it, where
    the run (or sweep, or PBT run) that holds `directory` was opened in this
    process. Freeing space is the advice only where the operating system
    gave a reason (`_disk_reason`).
    """
    if (lost := lost_process(error)) is not None:
        command = resume_command_for(directory)
        again = (
            f"{command} (on every host, with its process flags)"
            if command
            else "--resume (and its --coordinator, --num-processes, --process-id flags)"
        )
        return (
            f"saving a checkpoint in {directory} failed because the run lost a "
            f"process: {' '.join(str(lost).split())[:300]}; the checkpoints "
            f"before it are kept: rerun every process with {again}."
        )
    if (disk := _disk_reason(error)) is not None:
        return (
            f"saving a checkpoint in {directory} failed: {disk}; "
            f"{full_disk_advice(directory)}"
        )
    # No disk's fault (orbax refused the state, say): freeing space is no fix.
    return (
        f"saving a checkpoint in {directory} failed: {failure_reason(error)}; "
        "the checkpoints before it are kept; the operating system reported no "
        "error, so this is likely a purejaxdrl bug: please report this line; "
        f"once it is fixed, {resume_advice(directory)}."
    )


def read_failure(error: BaseException) -> str:
    """One line on why a checkpoint that verified could not be read.

    The operating system's reason if any; else the error's text, with the last
    clause of the one it was raised from (TensorStore's: `Requested byte range
    [0, 106525) is not valid for value of size 1000`, a truncated file), each
    without TensorStore's `See full TensorStore details: <bound method ...>`
    tail (a pybind11 repr, nothing a user can act on); 200 characters at most.
    """
    chain = _chain(error)
    if reason := _os_reason(chain):
        return reason
    texts = [
        " ".join(str(e).split()).split(" See full TensorStore details")[0].strip()
        for e in chain
    ]
    text = texts[0].rstrip(".") or type(chain[0]).__name__
    root = texts[-1].rsplit(": ", 1)[-1] if len(chain) > 1 else ""
    if root and root not in text:
        text = f"{text}: {root}"
    return text[:200]


def saves_held_advice(
    waited: float,
    seconds: float,
    checkpoint: Any,
    processes: int,
    resumed: bool = False,
) -> str | None:
    """The line to say when waiting for checkpoint saves held training back.

    None unless the wait was much of the `seconds` trained. A single
    process's saves never wait (a newer save replaces one that waits) but
    with `checkpoint.wait`; a multi-process run saves in order on the loop's
    thread, each save holding training back (CartPole's quickstart once
    trained at a third of its speed); the steps/s shown would otherwise
    blame the learner. A resumed run's settings are in its config.yaml:
    the fix is a flag of the next `--resume` (`resumed`), not one to drop.
    """
    if waited < 1.0 or waited < 0.25 * seconds:
        return None
    every, verb = checkpoint.every, "resume with" if resumed else "pass"
    fix = f"--checkpoint.every {10 * every} (checkpoint.every={10 * every} in Python)"
    fix = f"{fix} to save less often"
    if checkpoint.wait and processes == 1:
        # The usual cause in one process: without it saves never wait.
        fix = (
            "--checkpoint.wait false (checkpoint.wait=False in Python: a save "
            "that falls due while one waits then replaces it), or "
            f"{'with ' if resumed else ''}{fix}"
        )
    return (
        f"checkpoint saves held training for {waited:.1f} s of its "
        f"{seconds:.1f} s (a save every {every} chunk(s)); {verb} {fix}, 0 only "
        "at the end and on Ctrl-C."
    )
