"""The GPU suite's rows of ours alone: replay, MinAtar, CNN torsos, recurrence.

apex_dqn (`bench_apex.py`), breakout_minatar (the preset as a sweep),
cnn_learners (`bench_networks.py`) and recurrent (`bench_recurrent.py`).
"""

from __future__ import annotations

import argparse

import jax
import numpy as np
from harness import TINY, Budget, Report, interleave

import purejaxdrl as pjd

from .common import add_device_time, tiny_note, trace_dir


def row_apex_dqn(report: Report, args: argparse.Namespace, budget: Budget) -> None:
    """Ape-X's gradient steps/s against DQN's, same replay and batch sizes."""
    import bench_apex

    sizes = bench_apex.TINY_SIZES if args.tiny else {}
    total = sizes.get("total_steps", 400_000)
    buffer = sizes.get("buffer_size", 1_000_000)
    configs = bench_apex.configs(total, buffer, sizes.get("batch_size", 256))
    runs = bench_apex.measure(configs, args.repeats)
    row = f"Ape-X / DQN CartPole, replay {buffer:,}, {total:,} steps"
    apex = report.add(row, "apex", runs["apex"])
    dqn = report.add(row, "dqn", runs["dqn"])
    ratio = apex.medians()["grad_steps_per_s"] / dqn.medians()["grad_steps_per_s"]
    note = tiny_note(args)
    report.add(row, "ratio apex / dqn", [{"grad_steps_per_s": ratio}], note)


def row_breakout_minatar(
    report: Report, args: argparse.Namespace, budget: Budget
) -> None:
    """The Breakout-MinAtar PPO preset, seeds vmapped, at two env counts."""
    preset = pjd.load_preset("breakout_minatar", "ppo").config
    for num_envs in [4] if args.tiny else [64, 1024]:
        if not budget.allows(15):
            report.skip("breakout_minatar", f"{num_envs} envs: out of budget")
            continue
        unroll = 8 if args.tiny else preset.unroll_length
        updates = 2 if args.tiny else max(16, 2**21 // (num_envs * unroll))
        config = pjd.apply_overrides(
            preset,
            {
                "num_envs": num_envs,
                "unroll_length": unroll,
                "total_steps": num_envs * unroll * updates,
                "num_logs": 2,
                "devices": 1,
            },
        )

        def ours(repeat: int, config: pjd.TrainConfig = config) -> dict[str, float]:
            base = pjd.apply_overrides(config, {"seed": repeat * args.seeds})
            result = pjd.sweep(
                base, seeds=args.seeds, target_return=None, console=False
            )
            return {
                "steps_per_s": result.env_steps / result.train_seconds,
                "compile_s": result.compile_seconds,
                "return": float(np.nanmean(result.final_return)),
            }

        row = f"breakout_minatar PPO {num_envs} envs x {args.seeds} seeds"
        runs = interleave({"ours": ours}, args.repeats, trace_dir(args, row))
        steps = f"{config.total_steps:,} steps"
        report.add(row, "purejaxdrl sweep", runs["ours"], steps)
        add_device_time(report, args, row, runs)


def row_cnn_learners(report: Report, args: argparse.Namespace, budget: Budget) -> None:
    """Nature CNN and IMPALA ResNet: forward and training throughput."""
    import bench_networks

    batch = 8 if args.tiny else 256
    lowering = "im2col" if jax.default_backend() == "cpu" else "lax.conv"
    # At toy size the Nature CNN alone: the ResNet's gradient programs take a
    # minute of CPU to compile, and bench_networks.py --tiny (its own test)
    # runs them; this keeps the whole suite's --tiny within 2 minutes.
    for torso in ("nature",) if args.tiny else ("nature", "impala_resnet"):
        figures = bench_networks.measure(torso, lowering, batch, args.repeats)
        # One figures dict, each the fastest of the repeats: no spread to show.
        report.add(
            f"{torso} torso, batch {batch}, {lowering}",
            torso,
            [figures],
            f"best of {args.repeats}",
        )


def row_recurrent(report: Report, args: argparse.Namespace, budget: Budget) -> None:
    """Recurrent cores against feed-forward PPO on masked CartPole."""
    import bench_recurrent

    # At toy size, one core beside its baseline: the code path, not the table
    # (bench_recurrent.py --tiny's programs).
    only = ["ff + core-size layer", "core gru"] if args.tiny else None
    sizes = TINY if args.tiny else {"total_steps": 2_000_000, "num_envs": 512}
    runs = bench_recurrent.part_cores("cartpole_masked", "ppo", 1, sizes, only)
    row = (
        f"cartpole_masked PPO {sizes['num_envs']} envs, {sizes['total_steps']:,} steps"
    )
    # One run per core (seed 0), one after another: not the header's repeats.
    note = tiny_note(args) or "one run per core (seed 0), not repeated"
    bench_recurrent.add_with_ratios(report, row, runs, ["ff + core-size layer"], note)
