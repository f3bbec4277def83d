"""Where a population goes: its mesh and programs, refused if it does not fit."""

import math
import time
from typing import NamedTuple

import jax

from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways
from purejaxdrl.parallel import make_sweep_mesh
from purejaxdrl.sweeps import layout as sweep_layout
from purejaxdrl.sweeps.compiled import Programs, make_programs
from purejaxdrl.sweeps.messages import gib, layout_lines, recorded_mesh, size_flag
from purejaxdrl.sweeps.pbt.lineage import PBTResult
from purejaxdrl.sweeps.pbt.operators import least_population
from purejaxdrl.training.config import TrainConfig


class Fitted(NamedTuple):
    """A population laid out: its programs, mesh, padded size, layout lines.

    `started`: when building them began (`time.perf_counter`).
    """

    programs: Programs
    mesh: jax.sharding.Mesh
    size: int
    lines: list[str]
    started: float


def fit_population(
    result: PBTResult, cfg: TrainConfig, device_memory: int | None
) -> Fitted:
    """Lays the population out on the devices; records the mesh in `result`.

    Raises:
      ConfigError: the recorded mesh (a resumed run's) needs more devices
        than are visible, an explicit device count does not fit (as a
        sweep's: `group_mesh_shape`), or the members do not fit in memory
        together. Sweeps train such runs in batches one after another, but
        a ready step compares and copies every member at the same update,
        so PBT would have to swap members' states through the host at each
        one: refused.

    """
    started, n = time.perf_counter(), result.population
    note, resumed = None, result.mesh is not None
    if resumed:  # a resume keeps the mesh its checkpoints hold
        shape, note = recorded_mesh(result.run_dir, "PBT run", tuple(result.mesh))
    else:
        shape = sweep_layout.group_mesh_shape(n, cfg, "members")
    mesh = make_sweep_mesh(*shape)
    programs = make_programs(cfg, mesh)
    layout, source = sweep_layout.group_layout(
        n, shape, programs.state_shapes, cfg, device_memory, programs.specs
    )
    if layout.num_batches > 1:
        raise ConfigError(_unfit(result, layout, source, resumed))
    lines = layout_lines("", n, layout, source, jax.default_backend())
    lines = [
        line.replace("sweep:", "pbt:", 1).replace(" run", " member") for line in lines
    ]
    lines = [f"pbt: {note}", *lines] if note else lines
    result.mesh = shape
    return Fitted(programs, mesh, layout.batch_size, lines, started)


def _unfit(
    result: PBTResult, layout: sweep_layout.Layout, source: str, resumed: bool
) -> str:
    """Why a population that does not fit is refused, and the ways to fit it.

    A budget the caller set (`device_memory`) is the first way; a smaller
    population only where it still exploits (one member per quantile). A
    resume changes neither the population, its settings nor the recorded
    mesh: only the budget (rd21 #5).
    """
    n = result.population
    need = layout.run_bytes * math.ceil(n / layout.sweep)
    fit = layout.device_bytes // max(layout.run_bytes, 1) * layout.sweep
    head = (
        f"population={n} needs ~{gib(need)} per device, more than the "
        f"{gib(layout.device_bytes)} of {source} available, and PBT needs every "
        "member in memory at each ready step: "
    )
    budget = f"{size_flag(need)} (device_memory={need} in Python)"
    if resumed and source == "device_memory":
        return f"{head}resume with --device-memory {budget}, or without it."
    if resumed:
        return (
            f"{head}resume it where each device has that much free (its "
            "population, settings and mesh are its checkpoints')."
        )
    ways = [f"raise --device-memory to {budget}"] if source == "device_memory" else []
    if fit >= least_population(result.config.quantile):
        ways.append(f"pass {both_ways('--population', 'population', fit)}")
    ways.append(
        "lower --num-envs (num_envs in Python) or the replay size, or use more devices"
    )
    return f"{head}{', '.join(ways[:-1])}{', or ' if len(ways) > 1 else ''}{ways[-1]}."
