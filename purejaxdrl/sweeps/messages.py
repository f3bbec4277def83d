"""The lines a sweep reports: its plan, its layout, its progress, divergences."""

import math
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways
from purejaxdrl.observe.numbers import return_text
from purejaxdrl.parallel import fake_devices_setting
from purejaxdrl.sweeps.layout import Layout
from purejaxdrl.sweeps.spec import SweepPlan
from purejaxdrl.training.memory import gib


def recorded_mesh(
    directory: Any, what: str, saved: tuple[int, int]
) -> tuple[tuple[int, int], str | None]:
    """The (sweep, data) mesh a sweep or PBT run laid out on `saved` resumes on.

    Its checkpoints hold that layout, so it resumes on the first sweep x data
    local devices, however many more are visible (as `train` resumes a run
    that chose its devices on its saved count), with a line that says so
    where there are more (None otherwise).

    Raises:
      ConfigError: fewer local devices than that, naming how to show more.

    """
    devices, local = saved[0] * saved[1], jax.local_device_count()
    if devices == local:
        return saved, None
    if devices < local:
        return saved, (
            f"resuming on {devices} of {local} {jax.default_backend()} devices: "
            f"the {what}'s checkpoints hold its {saved[0]} x {saved[1]} (sweep x "
            "data) layout."
        )
    fake = fake_devices_setting(devices).strip()
    cpu = f"on CPU: {fake} before the command; " if fake else ""
    visible = ",".join(map(str, range(devices)))
    raise ConfigError(
        f"{directory}: this {what} was laid out on {saved[0]} x {saved[1]} (sweep "
        f"x data) devices and this process sees {local}; its checkpoints hold that "
        f"layout, so resume it where at least {devices} local devices are "
        f"visible ({cpu}on GPUs: CUDA_VISIBLE_DEVICES naming {devices}, e.g. "
        f"CUDA_VISIBLE_DEVICES={visible}); nothing was changed."
    )


def size_flag(n: float) -> str:
    """At least `n` bytes as `--device-memory` reads them: `3MiB`, `40KiB`."""
    if n >= 2**20:
        return f"{math.ceil(n / 2**20)}MiB"
    return f"{math.ceil(n / 2**10)}KiB"


def plan_lines(plan: SweepPlan, num_programs: int) -> list[str]:
    """How many runs a sweep trains, and in how many compiled programs."""
    base = plan.base
    lines = [
        f"sweep: {len(plan.settings)} setting(s) x {len(plan.seeds)} seed(s) = "
        f"{plan.num_runs} runs of {base.algo} on {base.env.id}"
    ]
    if num_programs > 1:
        static = [f.path for f in plan.fields if not f.dynamic]
        verb = "changes" if len(static) == 1 else "change"
        lines.append(
            f"sweep: {', '.join(static)} {verb} shapes or loop counts, so the "
            f"runs form {num_programs} compiled programs, trained one after another"
        )
    if (line := budget_line(plan)) is not None:
        lines.append(line)
    return lines


def budget_line(plan: SweepPlan) -> str | None:
    """One line when the settings train different env steps, else None.

    Each setting trains total_steps // steps_per_update whole updates, so a
    static field that changes steps_per_update (num_envs, unroll_length)
    changes the steps a setting trains by up to one update's: the summary
    then ranks runs of different lengths. A swept `total_steps` means to.
    """
    steps = [c.num_updates * c.steps_per_update for c in plan.configs]
    if len(set(steps)) < 2 or any(f.path == "total_steps" for f in plan.fields):
        return None
    common = math.lcm(*(c.steps_per_update for c in plan.configs))
    alike = -(-plan.base.total_steps // common) * common  # the next multiple
    return (
        f"sweep: the settings train {min(steps):,} to {max(steps):,} env steps "
        "(total_steps rounds down to whole updates of num_envs x unroll_length), "
        "so the summary compares runs of different lengths; "
        f"{both_ways('--total-steps', 'total_steps', alike)}, a multiple of every "
        "setting's steps per update, trains them alike"
    )


def layout_lines(
    label: str, num_runs: int, layout: Layout, source: str, backend: str
) -> list[str]:
    """Where a group of runs trains, and in how many batches.

    Args:
      label: the group's prefix (`program 2 of 3: `), or "".
      num_runs: the group's runs.
      layout: their Layout.
      source: where the figure of the memory a sweep may use comes from.
      backend: the devices' platform (`cpu`, `gpu`).

    Returns:
      One line, and a second one when the runs train in several batches.

    """
    plural = "s" * (num_runs != 1)
    lines = [
        f"sweep: {label}{num_runs} run{plural} on {layout.sweep} x {layout.data} "
        f"(sweep x data) {backend} device(s), {layout.runs_per_device} per device"
    ]
    budget = f"the {gib(layout.device_bytes)} of {source} a sweep may use"
    if layout.run_bytes > layout.device_bytes:
        # Trained anyway, unlike PBT's population that does not fit: PBT
        # refuses because it cannot split what must share memory, while a
        # sweep's smallest batch is one run, what `purejaxdrl train` trains
        # with no budget at all (and the estimate counts its rollout thrice).
        batches = (
            f", in {layout.num_batches} batches of {layout.batch_size}, one "
            "after another"
            if layout.num_batches > 1
            else ""
        )
        lines.append(
            f"sweep: one run needs ~{gib(layout.run_bytes)} per device, more "
            f"than {budget}; training one run per device at a time anyway (no "
            f"batch is smaller){batches}"
        )
    elif layout.num_batches > 1:
        need = gib(layout.run_bytes * num_runs / layout.sweep)
        lines.append(
            f"sweep: {num_runs} runs need ~{need} per device "
            f"({gib(layout.run_bytes)} each), more than {budget}; training "
            f"them in {layout.num_batches} batches of {layout.batch_size}, one "
            "after another"
        )
    return lines


def progress_line(
    returns: Sequence[float],
    ends_at: int,
    num_updates: int,
    steps_per_second: float,
    diverged: Sequence[bool] = (),
) -> str:
    """A batch's progress after a chunk.

    Args:
      returns: each run's mean return in the chunk (NaN: no episode ended).
      ends_at: updates done.
      num_updates: updates of a whole run.
      steps_per_second: environment steps of the batch's runs per second.
      diverged: per run, whether it has diverged (a metric went non-finite);
        () where none has.

    Returns:
      The mean and the best return over the runs that ended an episode and
      have not diverged (non-finite parameters still act and end episodes,
      which the summary does not count), how many diverged, and the speed.

    """
    bad = list(diverged) or [False] * len(returns)
    finite = [r for r, b in zip(returns, bad, strict=True) if not (b or math.isnan(r))]
    shown = (
        f"mean return over runs {return_text(np.mean(finite))} "
        f"(best {return_text(max(finite))})"
        if finite
        else "no episode ended yet"
    )
    if bad and all(bad):
        shown = f"all {len(bad)} runs diverged"
    elif any(bad):
        shown += f" ({sum(bad)} diverged)"
    return (
        f"sweep: update {ends_at:,} of {num_updates:,}: {shown}, "
        f"{steps_per_second:,.0f} steps/s"
    )


def diverged_line(plan: SweepPlan, run: int, at: int) -> str:
    """Which run went non-finite (its setting and seed), and at which update."""
    setting, seed = plan.run(run)
    values = ", ".join(f"{k}={v}" for k, v in plan.settings[setting].items())
    described = f"{values}, seed {seed}" if values else f"seed {seed}"
    return f"sweep: run {run} ({described}) diverged at update {at:,}"
