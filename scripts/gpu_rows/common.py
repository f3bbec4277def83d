"""What the GPU suite's rows share: estimates, notes, profiling.

`ESTIMATES`: the seconds each row needs at full size, which the budget
checks; `tiny_note`: a toy-size ratio's note; `trace_dir` and
`add_device_time`: where `--profile` traces a row, and the lines saying
where each contender's device time went.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable

from harness import TINY_NOTE, Report, slug

# Rough seconds each row needs on one H100/H200 at full size (compiles
# included): a row starts only if the budget has this much left.
ESTIMATES = {
    "ppo_cartpole": 120,
    "brax_ant": 150,
    "apex_dqn": 40,
    "breakout_minatar": 40,
    "cnn_learners": 20,
    "recurrent": 60,
    # CartpoleBalance took 179 s on an H200 (2026-11-28): 47 s of compile per
    # run of ours, which the persistent cache did not shorten, and brax's.
    "playground": 180,
    # Within the playground row, not yet measured beside brax: our Go1 run
    # compiled for 141 s on an H200; brax's compile is assumed alike.
    "go1": 360,
}


def tiny_note(args: argparse.Namespace) -> str:
    # A ratio at toy sizes compares first-call costs, not throughput.
    return TINY_NOTE if args.tiny else ""


def trace_dir(args: argparse.Namespace, row: str) -> str | None:
    # With --profile, where interleave traces this row's contenders.
    return os.path.join(args.profile, slug(row)) if args.profile else None


def add_device_time(
    report: Report, args: argparse.Namespace, row: str, names: Iterable[str]
) -> None:
    """With --profile, a line per contender: where its device's time went."""
    if not args.profile:
        return
    import device_time

    for name in names:
        directory = os.path.join(args.profile, slug(row), slug(name))
        try:
            figures, note = device_time.read(directory)
        except (FileNotFoundError, ValueError) as e:
            report.skip(row, f"{name}'s device time: {e}")
            continue
        report.add(row, f"{name}: device time", [figures], note)
