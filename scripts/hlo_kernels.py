"""Kernels per PPO update in the programs XLA compiles, ours beside PureJaxRL's.

At small environment counts a PPO update on a GPU is thousands of tiny
kernels, each launched by the host, so kernel counts bound what a GPU can do
there. This script compiles the CartPole PPO programs that `bench_gpu.py`
times (ours: a sweep's chunk of `--seeds` vmapped runs; PureJaxRL's `ppo.py`:
`jit(vmap(make_train))` over as many keys) and reads XLA's optimised HLO:

- every instruction that is not bookkeeping (tuples, parameters, constants,
  bitcasts) is one kernel: a fusion, a custom call, a copy, an unfused sort;
- loops multiply their body's kernels by their trip count, nested ones too,
  and the program's outermost loop is the loop over updates, so its body's
  total is the kernels of one update;
- a loop whose trip count XLA cannot know (data-dependent) is counted once
  and reported: on a GPU each of its iterations copies its condition to the
  host and waits for the device.

For `--target h200` it also counts what the host launches per update: XLA:GPU
captures runs of a loop body's kernels into command buffers (CUDA graphs),
each one launch, and launches the rest one by one (its thunk sequence, which
XLA dumps beside the HLO).

`--target h200` compiles for an NVIDIA H200 on a machine without one (XLA's
deviceless compilation through JAX's CUDA plugin). It needs the plugin for
this JAX in the environment, in a separate virtualenv since it brings about
5 GB of CUDA libraries: `pip install "jax[cuda12]==$(python -c 'import jax;
print(jax.__version__)')"`. The default, `--target cpu`, counts XLA:CPU's
thunks on this machine.

    python scripts/hlo_kernels.py --target h200 --purejaxrl DIR
    python scripts/hlo_kernels.py --num-envs 512 --scan-unroll 4 --show-loops
"""

from __future__ import annotations

import glob
import os
import pathlib
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# Nothing runs on a GPU here, even where there is one: programs run (to make
# a state's shapes) on the CPU, and JAX's CUDA plugin, when installed, only
# compiles for `--target h200`.
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from harness import TINY, Report, add_purejaxrl, parser, positive_int, run_main  # noqa: E402
from jax.sharding import NamedSharding, SingleDeviceSharding  # noqa: E402

import purejaxdrl as pjd  # noqa: E402

# NVIDIA H200 SXM as XLA's GPU compiler needs it (`stream_executor`'s
# GpuTargetConfigProto): what JAX reads from the device when there is one.
H200_TARGET = """
gpu_device_info {
  threads_per_block_limit: 1024 threads_per_warp: 32
  shared_memory_per_block: 49152 shared_memory_per_core: 233472
  threads_per_core_limit: 2048 core_count: 132 fpus_per_core: 128
  block_dim_limit_x: 2147483647 block_dim_limit_y: 65535 block_dim_limit_z: 65535
  memory_bandwidth: 4800000000000 l2_cache_size: 52428800 clock_rate_ghz: 1.98
  device_memory_size: 150000000000 shared_memory_per_block_optin: 232448
  cuda_compute_capability { major: 9 }
  registers_per_core_limit: 65536 registers_per_block_limit: 65536
}
platform_name: "CUDA"
dnn_version_info { major: 9 minor: 8 }
runtime_version { major: 12 minor: 8 patch: 0 }
device_description_str: "NVIDIA H200"
"""

# Instructions that launch nothing: data flow bookkeeping, or (while,
# conditional, call) structure whose computations are counted themselves.
BOOKKEEPING = {
    "parameter", "get-tuple-element", "tuple", "constant", "bitcast",
    "after-all", "opt-barrier", "partition-id", "replica-id",
    "while", "conditional", "call",
}  # fmt: skip
_HEADER = re.compile(r"^(?:ENTRY )?%?([\w.\-]+) \(.*\{$")
_OPCODE = re.compile(r"^(?:ROOT )?%?[\w.\-]+ = .*? ([a-z][a-z\-]*)\(")
_TRIPS = re.compile(r'known_trip_count":\{"n":"(\d+)"')  # a while's backend_config


@dataclass
class Loop:
    """A while loop of the program: its trip count and its body's kernels."""

    body: str
    trips: int | None  # None: data-dependent
    kernels: int  # the body's own, per iteration
    per_entry: int  # kernels each time the loop runs, nested loops included
    loops: list[Loop] = field(default_factory=list)


def computations(hlo: str) -> dict[str, list[str]]:
    """Each computation's instruction lines, by name."""
    comps: dict[str, list[str]] = {}
    current = None
    for line in hlo.splitlines():
        header = _HEADER.match(line)
        if header:
            current = comps.setdefault(header.group(1), [])
        elif line.startswith("}"):
            current = None
        elif current is not None and " = " in line:
            current.append(line.strip())
    return comps


def entry_name(hlo: str) -> str:
    """The name of the program's entry computation."""
    match = re.search(r"^ENTRY %?([\w.\-]+)", hlo, re.MULTILINE)
    if match is None:
        raise ValueError("no ENTRY computation in the HLO text")
    return match.group(1)


def count(comps: dict[str, list[str]], name: str) -> tuple[int, int, list[Loop]]:
    """(own kernels, kernels per run with nested loops, its loops) of `name`."""
    own, total, loops = 0, 0, []
    for line in comps[name]:
        opcode = _OPCODE.match(line)
        if opcode and opcode.group(1) not in BOOKKEEPING:
            own += 1
        if " while(" in line:
            body = re.search(r"body=%?([\w.\-]+)", line).group(1)
            trips = _TRIPS.search(line)
            k, per_iteration, inner = count(comps, body)
            n = int(trips.group(1)) if trips else None
            loops.append(Loop(body, n, k, (n or 1) * per_iteration, inner))
            total += loops[-1].per_entry
        if " call(" in line:
            _, inner_total, inner = count(
                comps, re.search(r"to_apply=%?([\w.\-]+)", line).group(1)
            )
            total += inner_total
            loops.extend(inner)
        if " conditional(" in line:  # one branch runs: the dearest counts
            names = re.findall(
                r"(?:computations?=\{?|, )%?([\w.\-]+)",
                line.split("conditional(", 1)[1],
            )
            branches = [count(comps, b) for b in names if b in comps]
            _, inner_total, inner = max(branches, key=lambda b: b[1])
            total += inner_total
            loops.extend(inner)
    return own, own + total, loops


def walk(loops: list[Loop]) -> list[tuple[int, Loop]]:
    """Every loop with its nesting depth, outermost first."""
    out = []
    for loop in loops:
        out.append((0, loop))
        out.extend((d + 1, inner) for d, inner in walk(loop.loops))
    return out


def update_figures(hlo: str, show_loops: bool = False) -> dict[str, float]:
    """Kernels of one update (the outermost loop's body) and its loops."""
    _, _, loops = count(computations(hlo), entry_name(hlo))
    if not loops:
        raise ValueError("the program has no loop over updates")
    updates = max(loops, key=lambda loop: loop.per_entry)
    nested = walk(updates.loops)
    if show_loops:
        for depth, loop in nested:
            trips = "data-dependent" if loop.trips is None else f"x{loop.trips}"
            print(f"  {'  ' * depth}{loop.body}: {loop.kernels} kernels {trips}")
    per_update = updates.per_entry / (updates.trips or 1)
    return {
        "kernels_per_update": per_update,
        "update_body_kernels": updates.kernels,
        "loops": len(nested),
        "data_dependent_loops": sum(loop.trips is None for _, loop in nested),
    }


_THUNK = re.compile(r"^( *)(\d+): (k\w+)")


def launches(dump: str, hlo: str) -> tuple[float, int] | None:
    """(host launches per update, the data-dependent loops among them) of a
    GPU program, from the thunk sequence XLA dumped into `dump`; None without.

    A command buffer, a kernel, a copy: one launch each. A loop launches its
    body once per trip; a data-dependent one also its condition, whose value
    the host reads back (counted as one trip). The outermost loop is the
    loop over updates.
    """
    found = sorted(
        glob.glob(f"{dump}/*thunk_sequence_after_thunk_passes.txt")
        or glob.glob(f"{dump}/*thunk_sequence.txt"),
        key=os.path.getsize,
    )
    if not found:
        return None
    sequence = found[-1]
    prefix = sequence.rsplit(".thunk_sequence", 1)[0]
    meta = pathlib.Path(f"{prefix}.thunk_metadata.txt").read_text()
    names = dict(
        (int(i), n)
        for n, i in re.findall(r'profile_annotation: "([^"]+)"\s+thunk_id: (\d+)', meta)
    )
    trips = {
        name: _TRIPS.search(line)
        for name, line in re.findall(r"^\s*%?([\w.\-]+) = .* while\((.*)$", hlo, re.M)
    }
    rows = []  # (indent, kind, thunk id) and the condition / body markers
    for line in pathlib.Path(sequence).read_text().splitlines():
        thunk = _THUNK.match(line)
        if thunk:
            rows.append((len(thunk.group(1)), thunk.group(3), int(thunk.group(2))))
        elif line.strip() in ("condition:", "body:"):
            rows.append((len(line) - len(line.lstrip()), line.strip(), -1))

    def block(i: int, indent: int) -> tuple[list, int]:
        """Launch counts of one sequence of thunks: [(launches, loop or None)]."""
        out = []
        # A "condition:" marker sits at column 0 whatever its loop's depth.
        while i < len(rows) and (rows[i][0] >= indent or rows[i][1] == "condition:"):
            at, kind, thunk_id = rows[i]
            if at > indent or kind in ("condition:", "body:"):
                i += 1  # inside a command buffer: launched with it
            elif kind != "kWhile":
                out.append((1.0, None))
                i += 1
            else:
                cond, i = block(i + 2, rows[i + 2][0])
                body, i = block(i + 1, rows[i + 1][0])
                n = trips.get(names.get(thunk_id, ""))
                loop = {"trips": int(n.group(1)) if n else None, "body": body}
                per_trip = sum(k for k, _ in body) + (
                    0 if n else sum(k for k, _ in cond)
                )
                out.append((per_trip * (loop["trips"] or 1), loop))
        return out, i

    top, _ = block(0, rows[0][0])
    loops = [loop for _, loop in top if loop is not None]
    if not loops:
        return None
    updates = max(loops, key=lambda loop: sum(k for k, _ in loop["body"]))

    def dependent(body: list) -> int:
        inner = [loop for _, loop in body if loop is not None]
        return sum((loop["trips"] is None) + dependent(loop["body"]) for loop in inner)

    return sum(k for k, _ in updates["body"]), dependent(updates["body"])


def h200_device() -> jax.Device:
    """A compile-only NVIDIA H200 (needs JAX's CUDA plugin, not a GPU)."""
    from jax.experimental import topologies

    topology = topologies.get_topology_desc(
        platform="cuda", target_config=H200_TARGET, topology="1x1x1"
    )
    return topology.devices[0]


def ours_lowered(
    config: pjd.TrainConfig, seeds: int, target: jax.Device | None
) -> jax.stages.Lowered:
    """Our sweep's chunk of `seeds` runs (2 updates), lowered for `target`."""
    from purejaxdrl.parallel import DATA_AXIS, SWEEP_AXIS, make_sweep_mesh
    from purejaxdrl.rng import make_key
    from purejaxdrl.sweeps.compiled import make_programs, stack_hps
    from purejaxdrl.sweeps.layout import group_mesh_shape

    shape = group_mesh_shape(seeds, config)
    if target is None:
        mesh = make_sweep_mesh(*shape)
    else:
        mesh = jax.sharding.Mesh(
            np.array([target]).reshape(shape), (SWEEP_AXIS, DATA_AXIS)
        )
    programs = make_programs(config, mesh)
    configs = [pjd.apply_overrides(config, {"seed": s}) for s in range(seeds)]
    hps = stack_hps(configs)
    keys = jnp.stack([make_key(c.seed, c.rng_impl) for c in configs])

    def placed(spec: jax.P, tree: Any) -> Any:
        sharding = NamedSharding(mesh, spec)
        return jax.tree.map(
            lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding), tree
        )

    # The states' shapes alone (nothing runs), placed as the sweep lays them out.
    states = jax.tree.map(
        placed,
        programs.specs,
        jax.eval_shape(programs.init, hps, keys),
        is_leaf=lambda x: isinstance(x, jax.P),
    )
    return programs.chunk(2).lower(placed(jax.P(SWEEP_AXIS), hps), states)


def purejaxrl_lowered(
    path: str, config: pjd.TrainConfig, seeds: int, target: jax.Device | None
) -> jax.stages.Lowered:
    """PureJaxRL's `jit(vmap(make_train))` over `seeds` keys, lowered for `target`."""
    import bench_ppo

    ppo = bench_ppo.load_purejaxrl(path)
    train = jax.jit(jax.vmap(ppo.make_train(bench_ppo.purejaxrl_config(config))))
    device = target or jax.devices()[0]
    keys = jax.ShapeDtypeStruct(
        (seeds, 2), jnp.uint32, sharding=SingleDeviceSharding(device)
    )
    return train.lower(keys)


def figures(
    lowered: jax.stages.Lowered, on_gpu: bool, show_loops: bool
) -> dict[str, float]:
    """Compiles `lowered`; its kernels per update, and on a GPU its launches."""
    with tempfile.TemporaryDirectory() as dump:
        options = {"xla_dump_to": dump} if on_gpu else None
        hlo = lowered.compile(compiler_options=options).as_text()
        out = update_figures(hlo, show_loops)
        counted = launches(dump, hlo) if on_gpu else None
    if counted is not None:
        out["launches_per_update"] = counted[0]
    return out


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__, repeats=False)  # one run, nothing to repeat
    p.add_argument("--target", choices=["cpu", "h200"], default="cpu")
    add_purejaxrl(p)
    p.add_argument("--num-envs", type=positive_int, default=64)
    p.add_argument("--seeds", type=positive_int, default=8, help="vmapped runs")
    p.add_argument(
        "--scan-unroll",
        type=positive_int,
        default=None,
        help="ours; default: by target",
    )
    p.add_argument(
        "--show-loops", action="store_true", help="print each loop's kernels"
    )
    args = p.parse_args(argv)
    sizes = dict(TINY) if args.tiny else {
        "num_envs": args.num_envs, "unroll_length": 128, "num_logs": 1, "devices": 1,
    }  # fmt: skip
    sizes["total_steps"] = sizes["num_envs"] * sizes["unroll_length"] * 2
    if args.scan_unroll is not None:
        sizes["scan_unroll"] = args.scan_unroll
    import bench_ppo

    config = bench_ppo.algo_config("ppo", sizes)
    seeds = 2 if args.tiny else args.seeds
    target = None
    if args.target == "h200":
        try:
            target = h200_device()
        except Exception as e:  # no CUDA plugin, or one for another JAX
            p.error(
                f"--target h200 needs JAX's CUDA plugin for jax {jax.__version__} "
                f'({type(e).__name__}); pip install "jax[cuda12]=={jax.__version__}" '
                "in a separate virtualenv, or use --target cpu"
            )
    report = Report(f"Kernels per CartPole PPO update ({args.target})")
    row = f"ppo_cartpole {config.num_envs} envs x {seeds} seeds, {args.target}"
    sides: dict[str, Callable[[], jax.stages.Lowered]] = {
        "purejaxdrl sweep chunk": lambda: ours_lowered(config, seeds, target)
    }
    if args.purejaxrl:
        sides["PureJaxRL jit(vmap(make_train))"] = lambda: purejaxrl_lowered(
            args.purejaxrl, config, seeds, target
        )
    else:
        report.skip(row, "PureJaxRL side not run: no --purejaxrl given")
    note = "compiled for an NVIDIA H200 without one" if target else ""
    for name, lower in sides.items():
        if args.show_loops:
            print(f"{name}, loops of one update:")
        report.add(
            row, name, [figures(lower(), target is not None, args.show_loops)], note
        )
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
