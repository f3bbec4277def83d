"""How a run's updates split into compiled chunks, and what a chunk reports.

`pipelined` orders the host's work on the chunks: each is read after the
next one is dispatched (the chunk loop's, and sweeps').
"""

import math
from collections.abc import Callable, Iterable
from typing import TypeVar

import numpy as np

from purejaxdrl.runners.base import ENV_METRIC
from purejaxdrl.training.config import TrainConfig

T = TypeVar("T")


def budget_note(config: TrainConfig) -> str | None:
    """What `config.total_steps` becomes when rounding changes it by over 1%.

    A run trains `num_updates` whole updates of num_envs x unroll_length steps
    (chunks split those updates, so they round nothing further). A rounding
    within 1% (a preset's 500,000 CartPole steps train 499,712) is no surprise
    worth a run's first line: the progress line and summary show the steps.
    """
    steps = config.num_updates * config.steps_per_update
    if abs(steps - config.total_steps) <= 0.01 * config.total_steps:
        return None
    return (
        f"total_steps {config.total_steps:,} rounded to {steps:,} (whole updates "
        f"of num_envs x unroll_length = {config.num_envs} x {config.unroll_length} "
        f"= {config.steps_per_update:,} steps; --total-steps "
        f"{steps + config.steps_per_update:,} trains one update more)"
    )


def eval_note(config: TrainConfig) -> str | None:
    """Why a run asked to evaluate every N chunks will not, else None.

    `eval.episodes` 0 turns evaluation off, so a config may well carry an
    `eval.every` with it; said, not refused.
    """
    if not config.eval.every or config.eval.episodes:
        return None
    return (
        f"eval.every={config.eval.every} with eval.episodes=0: no evaluation "
        "will run; pass e.g. --eval.episodes 16 to evaluate"
    )


def chunk_lengths(num_updates: int, num_logs: int) -> list[int]:
    """Splits `num_updates` into about `num_logs` chunks of equal length.

    Prefers a length that divides `num_updates` (one compiled program); otherwise
    the last chunk has another length and is compiled separately: the
    remainder on its own if it is at least half a chunk, else added to the
    last chunk, so that no chunk is a stub of a few updates whose few ended
    episodes would make the run's final return noise (ant's 50M steps of
    2048 x 10 are 2,441 updates: 19 chunks of 122 and one of 123, not 20 and
    one of 1).
    """
    target = max(1, num_updates // max(1, num_logs))
    # In pairs up to the square root: a billion updates list in milliseconds.
    root = range(1, math.isqrt(num_updates) + 1)
    divisors = sorted({d for i in root if num_updates % i == 0
                       for d in (i, num_updates // i)})  # fmt: skip
    best = min(divisors, key=lambda d: abs(math.log(d / target)))
    # `target` is floored: a small one (59 // 20 = 2) would accept a divisor
    # (1) giving far more than twice num_logs chunks (59); the count keeps the
    # N/2 to 2N promise of `--num-logs`.
    if 0.5 <= best / target <= 2.0 and num_updates // best <= 2 * max(1, num_logs):
        return [best] * (num_updates // best)
    lengths = [target] * (num_updates // target)
    rest = num_updates % target
    if 2 * rest >= target:
        lengths.append(rest)
    else:
        lengths[-1] += rest
    return lengths


def is_due(index: int, last_index: int, every: int) -> bool:
    """Whether chunk `index` is followed by an evaluation or a checkpoint.

    They come every `every` chunks (never when 0) and after the last chunk.
    """
    return index == last_index or bool(every and (index + 1) % every == 0)


def save_updates(config: TrainConfig) -> list[int]:
    """The update counts after which a run of `config` saves a checkpoint.

    As planned from its start: a resume whose budget or logging changed
    splits the rest afresh (`chunk_schedule`), and `checkpoint.keep_best`
    keeps one more, among these.
    """
    ends = np.cumsum(chunk_lengths(config.num_updates, config.num_logs))
    last, every = len(ends) - 1, config.checkpoint.every
    return [int(end) for i, end in enumerate(ends) if is_due(i, last, every)]


def chunk_schedule(config: TrainConfig, done: int) -> list[tuple[int, int]]:
    """(chunk index, length) of the chunks left after `done` updates.

    A resumed run continues the same schedule (same chunk lengths, so the same
    compiled programs, so bitwise the same updates). If `done` is not a chunk
    boundary of it (`--num-logs` changed, or the budget with --override), the
    rest is split afresh.
    """
    lengths = chunk_lengths(config.num_updates, config.num_logs)
    ends = np.cumsum([0, *lengths])
    if done in ends:
        first = int(np.searchsorted(ends, done))
        return list(enumerate(lengths))[first:]
    left = config.num_updates - done
    if left <= 0:
        return []
    logs = max(1, round(config.num_logs * left / config.num_updates))
    first = int(np.searchsorted(ends, done))
    return [(first + i, n) for i, n in enumerate(chunk_lengths(left, logs))]


# Counts that only grow: a chunk reports where they ended, not their mean
# (the mean of a counter over a chunk of n updates lags it by ~n/2 updates).
COUNTERS = ("learner/grad_steps", "replay/size")
# Per-update maxima: a chunk reports the largest (their mean would hide the one
# update that lagged far behind among many that did not).
MAXIMA = ("lag/max",)
# A gradient step's metrics (prefixes), which a replay learner reads as 0
# until its buffer holds `min_replay` items: a chunk means them over the
# updates that learned (`learner/grad_steps` > 0 after them: once begun,
# learning goes on), and a chunk in which none did leaves them out.
LEARNED = ("loss/", "td/", "q/", "entropy")


def pipelined(
    dispatched: Iterable[T], read: Callable[[T], None], *, ahead: bool = True
) -> None:
    """Reads each dispatched item after the next one is dispatched.

    So the device runs item k+1 while the host reads item k's results (and
    logs, evaluates, checkpoints). `dispatched` dispatches an item each time
    it is advanced and may stop early; `ahead=False` reads each at once (for
    work that is done when dispatching returns).
    """
    pending = None
    for queued in dispatched:
        if pending is not None:
            read(pending)
        pending = queued
        if not ahead:
            read(pending)
            pending = None
    if pending is not None:
        read(pending)


def summarize_chunk(metrics: dict[str, np.ndarray]) -> dict[str, float]:
    """A chunk's per-update metrics in one record.

    Means over the chunk, except `COUNTERS` (their last value), `MAXIMA`
    (their largest value), a replay learner's `LEARNED` metrics (means over
    the updates that learned; absent before any did) and episode statistics
    (means over the episodes ended, from their sums): the return and length
    as `episode/mean_return`, `episode/mean_length`, and each of the
    environment's own metrics' episode sums as `env/<name>`.
    """
    learned = None
    if "learner/grad_steps" in metrics:
        learned = np.asarray(metrics["learner/grad_steps"]) > 0
    out = {}
    for k, v in metrics.items():
        if k.startswith("episode/"):
            continue
        if learned is not None and k.startswith(LEARNED):
            if not learned.any():
                continue
            v = np.asarray(v)[learned]
        out[k] = float(_reduce(k, v))
    if "episode/count" in metrics:
        count = float(np.sum(metrics["episode/count"]))
        out["episode/count"] = count
        for key, sums in metrics.items():
            if key.startswith("episode/") and key.endswith("_sum"):
                total = float(np.sum(sums))
                out[_mean_name(key)] = total / count if count else math.nan
    return out


def _reduce(key: str, values: np.ndarray) -> np.ndarray:
    """A non-episode metric's value over a chunk: last, largest or mean."""
    if key in COUNTERS:
        return values[-1]
    if key in MAXIMA:
        return np.max(values)
    return np.mean(values)


def _mean_name(sum_key: str) -> str:
    """The record's name for the mean of an episode sum.

    `episode/return_sum` -> `episode/mean_return`;
    `episode/env/reward/upright_sum` -> `env/reward/upright`.
    """
    name = sum_key.removesuffix("_sum")
    if name.startswith(ENV_METRIC):
        return "env/" + name.removeprefix(ENV_METRIC)
    return "episode/mean_" + name.removeprefix("episode/")
