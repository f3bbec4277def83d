"""What one run needs in memory on each device, and what a device has.

`sweep` plans its batches of runs with these figures; `train` says a replay
learner's and refuses a run whose replay cannot fit, before compiling, in
one line (`check_replay_fits`), rather than in XLA's RESOURCE_EXHAUSTED.
"""

import math
import os
from typing import Any

import jax
import numpy as np
from jax.sharding import PartitionSpec as P

from purejaxdrl.agents.registry import algorithm
from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import field_example
from purejaxdrl.parallel import DATA_AXIS
from purejaxdrl.runners.anakin import RunnerState
from purejaxdrl.training.config import run_shape

# Rollout buffers live alongside their copies in the update (PPO's shuffled
# minibatches, activations kept for the backward pass, gradients): budget three.
ROLLOUT_COPIES = 3
# Of a device's memory, the share a sweep may plan to use. On CPU, host RAM is
# shared with the program itself and with every other (fake) CPU device.
ACCELERATOR_SHARE = 0.75
HOST_SHARE = 0.5


def free_bytes(device: jax.Device | None = None) -> tuple[int, str]:
    """(bytes free for one program on `device`, where the figure comes from).

    The backend's `memory_stats` where it gives them (its limit less what is
    in use); else, on CPU, host RAM shared by the local (fake) devices.
    """
    device = device or jax.local_devices()[0]
    stats = device.memory_stats() if hasattr(device, "memory_stats") else None
    if stats and stats.get("bytes_limit"):
        used = stats.get("bytes_in_use", 0)
        return int(stats["bytes_limit"] - used), "device memory"
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return ram // max(1, jax.local_device_count()), "host memory"


def device_bytes(device: jax.Device | None = None) -> tuple[int, str]:
    """(bytes a sweep may plan to use on `device`, where the figure comes from)."""
    free, source = free_bytes(device)
    share = ACCELERATOR_SHARE if source == "device memory" else HOST_SHARE
    return int(free * share), source


def run_bytes(
    state_shapes: RunnerState,
    *,
    specs: RunnerState | None = None,
    data: int,
    unroll_length: int,
    num_envs: int,
    obs_shape: tuple[int, ...],
) -> int:
    """Estimated bytes one run needs on each device it spans.

    Args:
      state_shapes: `jax.eval_shape` of one run's RunnerState (its leaves'
        shapes and dtypes; per-environment leaves are split over `data`).
      specs: the sweep's PartitionSpecs (a prefix of the state): agent leaves
        whose spec names `data` (replay shards) are split over it too; None
        for a replicated learner state.
      data: devices on the data axis.
      unroll_length: T.
      num_envs: the run's global number of environments.
      obs_shape: one observation's shape.

    Returns:
      State bytes plus ROLLOUT_COPIES x the rollout: T x B/data steps, each two
      float32 observations (the observation and the final one) and eight
      scalars.

    """
    agent_spec = P() if specs is None else specs.agent

    def agent_bytes(spec: P, subtree: object) -> int:
        return state_bytes(subtree) // (data if DATA_AXIS in spec else 1)

    split = jax.tree.map(
        agent_bytes, agent_spec, state_shapes.agent, is_leaf=lambda x: isinstance(x, P)
    )
    state = (
        sum(jax.tree.leaves(split))
        + state_bytes(state_shapes._replace(agent=(), actor=()))
        + state_bytes(state_shapes.actor) // data
    )
    local_envs = num_envs // data
    step = 2 * 4 * math.prod(obs_shape) + 8 * 4
    return int(state + ROLLOUT_COPIES * unroll_length * local_envs * step)


def state_bytes(tree: object) -> int:
    """The bytes of a tree of shapes and dtypes (a typed key: two uint32 words)."""

    def size(x: jax.ShapeDtypeStruct) -> int:
        if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
            return math.prod(x.shape) * 8  # two uint32 words per key
        return math.prod(x.shape) * np.dtype(x.dtype).itemsize

    return sum(size(x) for x in jax.tree.leaves(tree))


def gib(n: float) -> str:
    """Bytes as `1.50 GiB`, `12.0 MiB` below one GiB, `1 KiB` below 0.1 MiB.

    A small `--device-memory` budget (1KB) reads as itself, not "0.0 MiB".
    """
    if n >= 2**30:
        return f"{n / 2**30:.2f} GiB"
    if n >= 0.1 * 2**20:
        return f"{n / 2**20:.1f} MiB"
    if n >= 2**10:
        return f"{n / 2**10:.3g} KiB"
    return f"{n:.0f} byte{'s' * (round(n) != 1)}"


def config_run_bytes(
    state_shapes: RunnerState, config: Any, data: int, specs: Any = None
) -> int:
    """`run_bytes` of a run of `config` whose state has `state_shapes`.

    Dict observations (an asymmetric critic's) count as their entries.
    """
    obs = state_shapes.actor.timestep.observation
    return run_bytes(
        state_shapes,
        specs=specs,
        data=data,
        unroll_length=config.unroll_length,
        num_envs=config.num_envs,
        obs_shape=(sum(math.prod(x.shape[1:]) for x in jax.tree.leaves(obs)),),
    )


# The section fields that size a replay, by the items they count: DQN's, SAC's
# and R2D2's `buffer_size`, IMPALA's `replay_size` (trajectories).
SIZE_FIELDS = ("buffer_size", "replay_size")


def check_replay_fits(config: Any, abstract: RunnerState, data: int) -> str:
    """The memory line of a replay learner's run, or a refusal if it cannot fit.

    `abstract` is the runner's abstract state, its leaves carrying their
    shardings: the agent's leaves split over `data` are its replay shards.
    The run's estimate (`config_run_bytes`, as a sweep's) is held to the
    whole free memory of a device (`free_bytes`, not a sweep's share of it).
    Returns "" for a run that keeps no replay.

    Raises:
      ConfigError: naming the replay's size, the bytes it needs and the fix.

    """
    record, section = algorithm(config.algo), config.algo_config
    if not record.keeps_replay(section) or not isinstance(abstract, RunnerState):
        return ""
    specs = jax.tree.map(lambda x: x.sharding.spec, abstract)
    need = config_run_bytes(abstract, config, data, specs)
    split = [
        state_bytes(x) // data
        for x in jax.tree.leaves(abstract.agent)
        if DATA_AXIS in x.sharding.spec
    ]
    replay, (free, source) = sum(split), free_bytes()
    field = next((f for f in SIZE_FIELDS if hasattr(section, f)), None)
    size = getattr(section, field) if field else 0
    unit = (
        record.replay_items(section, run_shape(config))[1]
        if record.replay_items
        else "items"
    )
    shown = f"{size:,} {unit} " if field else ""
    if need <= free:
        return (
            f"{config.algo}: one run needs ~{gib(need)} per device, its replay of "
            f"{shown}~{gib(replay)} of it, of the {gib(free)} of {source} a "
            "device has."
        )
    path = f"{config.algo}.{field}"
    per_item = replay * data / max(size, 1)
    raise ConfigError(
        (f"{path}={size} needs" if field else f"{config.algo}'s replay needs")
        + f" ~{gib(need)} on each device"
        + (f" (~{per_item:.0f} B per {unit.removesuffix('s')})" if field else "")
        + f", more than the {gib(free)} of {source} a device has; lower it, e.g. "
        + (
            field_example(path, _fitting(need, replay, per_item, data, config))
            if field
            else field_example("num_envs", max(1, config.num_envs // 2))
        )
        + _more_devices(need, replay, data, free)
        + "."
    )


def _fitting(need: int, replay: int, per_item: float, data: int, config: Any) -> int:
    """A replay size that a sweep's share of the memory holds (`device_bytes`).

    Rounded to two digits and to a multiple of the devices and environments,
    which it splits over.
    """
    room = device_bytes()[0] - (need - replay)
    fits = max(int(room / max(per_item, 1)), 1)
    step = math.lcm(data * config.num_envs, 10 ** max(len(str(fits)) - 2, 0))
    return max(fits // step * step, data * config.num_envs)


def _more_devices(need: int, replay: int, data: int, free: int) -> str:
    """`, or split it over --devices N`, where all N local devices would hold it."""
    local = jax.local_device_count()
    spread = replay * data / local + need - replay
    if data < local and spread <= free:
        return f", or split it over {field_example('devices', local)}"
    return ""


def out_of_memory(error: BaseException) -> str | None:
    """XLA's RESOURCE_EXHAUSTED (or Python's MemoryError), said briefly; else None.

    What a command turns into one line naming its fix (`eval --episodes`,
    `train`'s sizes), in place of a long traceback that names neither.
    """
    said = " ".join(str(error).split())[:200] or type(error).__name__
    if isinstance(error, MemoryError):
        return said
    # RESOURCE_EXHAUSTED names a full disk too (a checkpoint's write): not this.
    exhausted = "RESOURCE_EXHAUSTED" in said and "memory" in said.lower()
    return said if isinstance(error, jax.errors.JaxRuntimeError) and exhausted else None


def out_of_memory_refusal(config: Any, said: str) -> ConfigError:
    """The one line for a run of `config` that ran out of memory (`out_of_memory`).

    A replay learner's buffer is the first fix, then the environments.
    """
    fixes = [field_example("num_envs", max(1, config.num_envs // 2))]
    section = config.algo_config
    if algorithm(config.algo).keeps_replay(section):
        size = max(1, section.buffer_size // 10)
        fixes.insert(0, field_example(f"{config.algo}.buffer_size", size))
    return ConfigError(
        f"out of memory ({said}); the run's state and rollout do not fit the "
        f"device; lower what it holds, e.g. {' or '.join(fixes)}."
    )
