"""Wall and CPU time at every chunk's end, as both sides of `bench_brax.py` time.

`ChunkClock` (a purejaxdrl logger, and brax's progress callback's stamp),
and `clock_note`: where ours' clock and TrainResult's steps/s disagree.
"""

from __future__ import annotations

import time
from typing import Any

from harness import TINY_NOTE

Result = dict[str, float]


class ChunkClock:
    """Wall and CPU time stamped at the end of every chunk (a purejaxdrl Logger).

    CPU time is the process's (all threads): on a shared machine it is less
    disturbed by other processes than wall time, so it is reported beside it.
    """

    def __init__(self) -> None:
        self.stamps: list[tuple[float, float]] = []

    def tick(self) -> None:
        self.stamps.append((time.perf_counter(), time.process_time()))

    def write(self, record: dict[str, Any]) -> None:
        del record
        self.tick()

    def close(self) -> None:
        pass

    def rates(self, total_steps: int) -> Result:
        """Steps per wall second and per CPU second over chunks 2..n (equal)."""
        (wall_0, cpu_0), (wall_n, cpu_n) = self.stamps[0], self.stamps[-1]
        steps = total_steps * (len(self.stamps) - 1) / len(self.stamps)
        return {
            "steps_per_s": steps / (wall_n - wall_0),
            "cpu_steps_per_s": steps / (cpu_n - cpu_0),
        }


# How far the chunk clock's steps/s may stray from TrainResult's before a row
# says so: the clock stamps each chunk's record when the host reads it, and a
# record read a chunk late would count two chunks' steps over one's time.
CLOCK_TOLERANCE = 0.10


def clock_note(medians: Result, tiny: bool = False) -> str:
    """A warning where ours' chunk clock and `own_steps_per_s` disagree.

    At `--tiny` sizes the first chunk's first-call costs dominate
    `own_steps_per_s`, so the two always disagree: the note says the figures
    are a code-path check instead of raising the alarm.
    """
    own = medians.get("own_steps_per_s")
    if not own:
        return ""
    if tiny:
        return TINY_NOTE
    off = medians["steps_per_s"] / own - 1.0
    if abs(off) <= CLOCK_TOLERANCE:
        return ""
    return f"CLOCK DISAGREES: chunk clock {off:+.0%} vs own_steps_per_s"
