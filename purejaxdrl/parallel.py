"""Devices and meshes: where a run's arrays live.

One named mesh axis, `data`, spans every device of every process. The learner
state is replicated on it (`P()`); actors and replay shards are split over it
(`P("data")`). Algorithms see only the axis name. Sweeps add a `sweep` axis
beside `data`: the runs of a batched config are split over it, each run's
environments over `data`.

Many hosts use JAX's own multi-controller runtime: every process runs the same
program on a global mesh and steps its own environments; `jax.distributed`
carries the collectives (gloo on CPU, NCCL on GPU, ICI on TPU). How the
command line's processes join, agree and stop is `purejaxdrl.cli.processes`.
"""

from collections.abc import Sequence
from typing import Any

import jax
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways, field_example
from purejaxdrl.setup_warnings import warn_once

__all__ = [
    "make_mesh",
    "fewest_local_devices",
    "devices_to_use",
    "make_sweep_mesh",
    "varying",
    "manual_axes",
    "replicated",
    "data_sharded",
    "named_shardings",
    "per_device",
    "split_share",
    "env_multiple_message",
    "is_main_process",
    "fake_devices_setting",
    "resume_command",
]

DATA_AXIS = "data"
SWEEP_AXIS = "sweep"
PyTree = Any


def make_mesh(devices_per_process: int | None = None) -> Mesh:
    """A one-axis (`data`) mesh over the first N local devices of every process.

    Every process builds it from the global device list, so all build the same
    mesh even when their hosts have different device counts.

    Args:
      devices_per_process: how many of each process's local devices to use;
        None for as many as the process with the fewest has.

    Raises:
      ConfigError: when N is not in [1, the fewest devices of a process].

    """
    by_process = _devices_by_process()
    counts = [len(by_process.get(p, [])) for p in range(jax.process_count())]
    n = devices_to_use(devices_per_process, counts, jax.default_backend())
    devices = [d for p in range(len(counts)) for d in by_process[p][:n]]
    # Auto, not Explicit: sharding is decided inside the runner's shard_map; its
    # state then goes through any plain jitted or eager code (a notebook's).
    return jax.make_mesh(
        (len(devices),), (DATA_AXIS,), axis_types=(AxisType.Auto,), devices=devices
    )


def _devices_by_process() -> dict[int, list[Any]]:
    """Every process's devices (from the global list), each sorted by id."""
    by_process: dict[int, list[Any]] = {}
    for d in sorted(jax.devices(), key=lambda d: d.id):
        by_process.setdefault(d.process_index, []).append(d)
    return by_process


def fewest_local_devices() -> int:
    """The local device count of the process that has the fewest.

    Each process builds the mesh with this many (`make_mesh`), so automatic
    device choices start from it, not from this process's own count.
    """
    by_process = _devices_by_process()
    counts = [len(by_process.get(p, [])) for p in range(jax.process_count())]
    return _fewest(counts, jax.default_backend())


def _fewest(counts: Sequence[int], platform: str) -> int:
    """min(counts); process 0 says so once where the hosts differ."""
    fewest = min(counts)
    if fewest != max(counts) and jax.process_index() == 0:
        warn_once(
            f"the processes have {', '.join(map(str, counts))} {platform} "
            f"devices: each trains on {fewest}, the fewest, so that all build "
            "one mesh."
        )
    return fewest


def devices_to_use(requested: int | None, counts: Sequence[int], platform: str) -> int:
    """How many devices each process trains on: `requested`, or the fewest any has.

    Args:
      requested: the devices per process asked for (`--devices`); None: all
        that every process has.
      counts: each process's number of local devices, by process index.
      platform: their platform, for messages ("cpu", "gpu", "tpu").

    Raises:
      ConfigError: when `requested` is not in [1, min(counts)], naming the
        process with the fewest devices (one CPU process: and how to fake
        more, to test a multi-device run).

    """
    fewest = min(counts)
    if requested is not None and 1 <= requested <= fewest:
        return requested
    if requested is None:
        return _fewest(counts, platform)
    fake = ""
    if len(counts) == 1:
        where = "this process"
        if platform == "cpu" and requested > fewest:  # to test a multi-device run
            fake = (
                f"; or fake {requested} CPU devices to test with "
                f"JAX_NUM_CPU_DEVICES={requested} (or XLA_FLAGS="
                f"--xla_force_host_platform_device_count={requested})"
            )
    else:
        poorest = counts.index(fewest)
        where = f"process {poorest} (the processes have {', '.join(map(str, counts))})"
    # "1 or fewer" would offer 0: one device is the only count left then.
    bound = f"at most {_mesh_example(fewest)}" if fewest > 1 else _mesh_example(1)
    raise ConfigError(
        f"devices={requested} must be between 1 and the {fewest} local {platform} "
        f"devices of {where}; pass {bound}{fake}."
    )


def _mesh_example(n: int) -> str:
    """`--devices n (devices=n or make_mesh(n) in Python)`: both ways to ask.

    A device count reaches a run from the command line, from a config's
    `devices`, or as a mesh given to `make_experiment`.
    """
    return both_ways("--devices", "devices", n, f"{n} or make_mesh({n})")


def make_sweep_mesh(sweep: int, data: int) -> Mesh:
    """A 2-D (`sweep`, `data`) mesh over the first sweep x data local devices.

    Each row of `data` devices trains the same runs; rows hold different runs.

    Raises:
      ValueError: when sweep x data exceeds the local device count.

    """
    local = jax.local_devices()
    if sweep < 1 or data < 1 or sweep * data > len(local):
        raise ValueError(
            f"a sweep mesh of {sweep} x {data} devices does not fit the "
            f"{len(local)} local devices; pass sizes of at least 1 whose product "
            f"is at most {len(local)}."
        )
    devices = sorted(local, key=lambda d: d.id)[: sweep * data]
    return jax.make_mesh(
        (sweep, data),
        (SWEEP_AXIS, DATA_AXIS),
        axis_types=(AxisType.Auto, AxisType.Auto),
        devices=devices,
    )


def varying(tree: PyTree, axis_name: str | tuple[str, ...]) -> PyTree:
    """Marks every leaf of `tree` as varying over `axis_name` (inside shard_map).

    A value computed only from constants is invariant (the same on every device)
    even when it belongs to per-device state, e.g. a constant discount returned
    by an environment's `step`. A `lax.scan` carry must keep its type, so such
    leaves are cast to varying before they are carried. A tuple names several
    axes (a sweep's per-run state varies over `sweep` and `data`).
    """
    names = (axis_name,) if isinstance(axis_name, str) else axis_name

    def cast(x: jax.Array) -> jax.Array:
        missing = tuple(n for n in names if n not in jax.typeof(x).mat.varying)
        return jax.lax.pcast(x, missing, to="varying") if missing else x

    return jax.tree.map(cast, tree)


def manual_axes() -> tuple[str, ...]:
    """The mesh axes of the enclosing `shard_map` (empty outside one)."""
    return tuple(jax.sharding.get_abstract_mesh().manual_axes)


def replicated(mesh: Mesh) -> NamedSharding:
    """The sharding of learner state: a full copy on every device."""
    return NamedSharding(mesh, P())


def data_sharded(mesh: Mesh) -> NamedSharding:
    """The sharding of actor state: the leading (environment) axis split."""
    return NamedSharding(mesh, P(DATA_AXIS))


def named_shardings(mesh: Mesh, specs: PyTree) -> PyTree:
    """`specs`, a tree of PartitionSpecs, as NamedShardings on `mesh`.

    A PartitionSpec is a tuple, so a pytree node to `jax.tree.map`: each is
    taken whole here. A spec may stand for a whole subtree (as `jit`'s
    `out_shardings` allow); its NamedSharding then does too.
    """
    return jax.tree.map(
        lambda spec: NamedSharding(mesh, spec),
        specs,
        is_leaf=lambda x: isinstance(x, P),
    )


def per_device(total: int, mesh: Mesh, what: str = "num_envs") -> int:
    """`total / devices`, or a ConfigError (a ValueError) that says how to divide."""
    n, processes = mesh.shape[DATA_AXIS], jax.process_count()
    if total % n:
        lower, upper = total // n * n, (total // n + 1) * n
        options = f"{lower} or {upper}" if lower else f"{upper}"
        over = (
            f"the {n} devices of {processes} processes"
            if processes > 1
            else f"the number of devices ({n})"
        )
        # Only a count per process that the total divides over helps: with 2
        # processes, 7 environments fit no mesh at all.
        per = n // processes
        fits = [d for d in range(per - 1, 0, -1) if total % (d * processes) == 0]
        # Reached from the command line (--devices) and from Python (a
        # config's devices, or a mesh given to make_experiment / make_runner),
        # with no way to tell which here: both spellings.
        fewer = f", or {_mesh_example(fits[0])}" if fits else ""
        raise ConfigError(
            f"{what}={total} must be divisible by {over}; use "
            f"{field_example(what, options)}{fewer}."
        )
    return total // n


def split_share(num_envs: int, devices: int, multiple: int = 1) -> int | None:
    """Each device's environments, or None where they do not split as a run needs.

    `num_envs` over `devices` (every process's together) must split evenly,
    each device's share a multiple of `multiple` (an algorithm's
    `Algorithm.env_multiple`: PPO's minibatches take whole groups of them).
    The one statement of the rule: runs, device choices and sweeps ask it.
    """
    each, rest = divmod(num_envs, devices)
    return None if rest or each % multiple else each


def env_multiple_message(
    needs: str,
    num_envs: int,
    devices: int,
    multiple: int,
    *,
    flag: str = "--devices",
    python: str = "devices",
    also: str = "",
    requested: int = 1,
) -> str:
    """The one line that refuses a run whose devices' shares miss `multiple`.

    Args:
      needs: what asks for the multiple, and why: "ppo.num_minibatches=4
        with unroll_length=8", or a record's name.
      num_envs: the run's environments, over all `devices` (every process's).
      devices: the devices of every process together.
      multiple: what each device's environments must be a multiple of.
      flag: the option that sets devices per process (the host-env
        learner's: `--host.learner-devices`).
      python: `flag`'s config field (`host.learner_devices`).
      also: a further fix, ", or ..." (PPO's: a divisor of unroll_length).
      requested: the devices per process the run asks for, where `devices`
        is 1 before they are chosen (`RunShape.requested_devices`): the
        `num_envs` offered splits over them too, so following it trains.

    The fewer devices it offers are counted per process, as `flag` counts
    them, and fit every process's share.

    """
    step = multiple * devices
    more = -(-num_envs // step) * step
    if devices == 1:
        # Each of the devices asked for takes a multiple of its own.
        fit = -(-num_envs // (step * requested)) * step * requested
        each = f" on each of {both_ways(flag, python, requested)}"
        each = each if requested > 1 else ""
        return (
            f"{needs} needs num_envs divisible by {multiple}, got num_envs="
            f"{num_envs}; make num_envs a multiple of {multiple}{each}, e.g. "
            f"{both_ways('--num-envs', 'num_envs', fit)}{also}."
        )
    processes = jax.process_count()
    fewer = [
        d
        for d in range(devices // processes - 1, 0, -1)
        if split_share(num_envs, d * processes, multiple) is not None
    ]
    fewer_fix = f" or {both_ways(flag, python, fewer[0])}" if fewer else ""
    got = f"= {num_envs // devices} each"
    if num_envs % devices:
        got = "(an uneven split)"
    return (
        f"{needs} needs each device's environments to be a multiple of "
        f"{multiple}, got num_envs={num_envs} over {devices} devices {got}; "
        f"pass {both_ways('--num-envs', 'num_envs', more)}" + fewer_fix + f"{also}."
    )


def is_main_process() -> bool:
    """Whether this is process 0, the one that prints, logs and writes files."""
    return jax.process_index() == 0


def fake_devices_setting(devices: int) -> str:
    """`JAX_NUM_CPU_DEVICES=N ` where a run trained on N > 1 CPU devices; else "".

    CPU devices past the first are faked (`JAX_NUM_CPU_DEVICES`, or XLA_FLAGS'
    `--xla_force_host_platform_device_count`): a command run again without
    the setting sees one device, and a resume of a run on more is refused. A
    run on one device needs no setting, however many this process fakes.

    Args:
      devices: the run's devices over all processes (its mesh's size), or 0
        for all of this process's (a sweep's default, `devices=0`).

    """
    n = devices // jax.process_count() if devices else jax.local_device_count()
    if jax.default_backend() != "cpu" or n < 2:
        return ""
    return f"JAX_NUM_CPU_DEVICES={n} "


def resume_command(command: str, path: Any, flags: str = "", devices: int = 1) -> str:
    """`purejaxdrl COMMAND --resume PATH FLAGS`, as the run in `path` resumes.

    Every printed resume command is this one, so that a run on fake CPU
    devices starts with their setting (`fake_devices_setting`) and works as
    printed.

    Args:
      command: `train`, `sweep` or `pbt`.
      path: the run's directory.
      flags: what follows, with its leading space (` --logger wandb`).
      devices: the run's devices over all processes (its mesh's size), or 0
        for all of this process's (a sweep's or PBT run's `devices=0`).

    """
    setting = fake_devices_setting(devices)
    return f"{setting}purejaxdrl {command} --resume {path}{flags}"
