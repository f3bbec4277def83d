"""Where a sweep's runs go: the (sweep, data) mesh shape and batches that fit."""

import dataclasses
import math
from collections.abc import Callable

import jax

from purejaxdrl.agents.registry import algorithm
from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways
from purejaxdrl.parallel import devices_to_use, split_share
from purejaxdrl.runners.anakin import RunnerState
from purejaxdrl.training.config import TrainConfig, run_shape
from purejaxdrl.training.experiment import (
    check_fits,
    make_networks,
    zero_observation,
)
from purejaxdrl.training.memory import config_run_bytes, device_bytes
from purejaxdrl.training.run_env import make_env


@dataclasses.dataclass(frozen=True)
class Layout:
    """How a group of runs is placed.

    Runs are split over the `sweep` mesh axis; when there are fewer runs than
    devices, each run also spreads its environments over a `data` axis. Before
    compiling, the memory one run needs on a device is estimated from the
    shapes of its state and rollout; if all runs together do not fit, they
    train in sequential batches of equal size (one compiled program for all).

    Attributes:
      sweep: devices on the `sweep` axis (runs split over them).
      data: devices on the `data` axis (each run's environments split over them).
      batch_size: runs trained together (a multiple of `sweep`; the last batch
        is padded with copies of its last run, whose results are dropped).
      num_batches: sequential batches.
      run_bytes: estimated bytes one run needs per device.
      device_bytes: bytes a sweep may use per device.

    """

    sweep: int
    data: int
    batch_size: int
    num_batches: int
    run_bytes: int
    device_bytes: int

    @property
    def runs_per_device(self) -> int:
        """Runs vmapped together on each device."""
        return self.batch_size // self.sweep


def mesh_shape(
    num_runs: int,
    devices: int,
    num_envs: int,
    env_multiple: int = 1,
    splits: Callable[[int], bool] | None = None,
) -> tuple[int, int]:
    """(sweep, data) devices for `num_runs` runs on `devices` devices.

    With at least as many runs as devices, every device trains its own runs.
    With fewer, the sweep axis takes the largest divisor of `devices` not above
    `num_runs`, and each run is data-parallel over as many of the rest as split
    its `num_envs` evenly, in multiples of `env_multiple` per device (the
    algorithm's `Algorithm.env_multiple`), and that `splits(data)` accepts (a
    replay's sizes must split too).
    """
    if num_runs >= devices:
        return devices, 1
    sweep = max(d for d in range(1, devices + 1) if devices % d == 0 and d <= num_runs)
    data = devices // sweep

    def fits(n: int) -> bool:
        even = split_share(num_envs, n, env_multiple) is not None
        return even and (splits is None or splits(n))

    while data > 1 and not fits(data):
        data -= 1
    return sweep, data


def runs_per_device(available: int, per_run: int) -> int:
    """How many runs of `per_run` bytes fit `available`: at least one is tried."""
    return max(1, available // max(per_run, 1))


def batches(num_runs: int, sweep: int, per_run: int, available: int) -> tuple[int, int]:
    """(batch size, number of batches) so that each batch fits `available`.

    Batches are equal in size (a multiple of `sweep`) so that they share one
    compiled program; at least one run per device is always tried.
    """
    fit = runs_per_device(available, per_run)
    per_device = math.ceil(num_runs / sweep)
    num_batches = math.ceil(per_device / fit)
    per_device = math.ceil(per_device / num_batches)
    return per_device * sweep, num_batches


def group_mesh_shape(
    num_runs: int, config: TrainConfig, what: str = "runs"
) -> tuple[int, int]:
    """(sweep, data) devices for `num_runs` runs of `config`'s static group.

    `mesh_shape` over the config's devices (all local ones by default), with
    its algorithm's multiple of environments per device and replay sizes that
    split over the data devices. An explicit `config.devices` is held to the
    rules `train` holds it to: at most the local devices (`devices_to_use`'s
    error), and every one of them used (`what`: the runs' name in the error).

    Raises:
      ConfigError: an explicit device count above the local one, or one
        that the runs leave some of idle, naming the counts that fit.

    """
    local = jax.local_device_count()
    devices = devices_to_use(config.devices or None, [local], jax.default_backend())
    record = algorithm(config.algo)
    section = config.algo_config
    multiple = record.env_multiple(section, run_shape(config))

    splits = None
    if record.keeps_replay(section):
        env, env_params = make_env(config)
        _, learner_network = make_networks(config, env, env_params)
        observation = zero_observation(env, env_params)

        def splits(data: int) -> bool:
            try:
                check_fits(config, learner_network, observation, data)
            except (ValueError, ConfigError):
                return False
            return True

    def shape(n: int) -> tuple[int, int]:
        return mesh_shape(num_runs, n, config.num_envs, multiple, splits)

    sweep, data = shape(devices)
    if config.devices and sweep * data < devices:
        fit = next(n for n in range(devices - 1, 0, -1) if math.prod(shape(n)) == n)
        runs = f"{num_runs} {what} train" if num_runs > 1 else f"1 {what[:-1]} trains"
        raise ConfigError(
            f"devices={devices} leaves {devices - sweep * data} of them idle: "
            f"{runs} on {sweep} x {data} (sweep x data) devices, as "
            f"{_unsplit(config, devices // sweep, multiple)}; pass "
            f"{both_ways('--devices', 'devices', fit)}, or leave --devices out "
            "(devices=0 in Python) to take all that fit."
        )
    return sweep, data


def _unsplit(config: TrainConfig, data: int, multiple: int) -> str:
    """What of each run does not split over `data` devices."""
    envs = f"each one's num_envs={config.num_envs} does not split over {data} devices"
    if config.num_envs % data:
        return envs
    if split_share(config.num_envs, data, multiple) is None:
        return f"{envs} in multiples of {multiple}"
    return f"each one's replay does not split over {data} devices"


def group_layout(
    num_runs: int,
    shape: tuple[int, int],
    state_shapes: RunnerState,
    config: TrainConfig,
    device_memory: int | None = None,
    specs: RunnerState | None = None,
) -> tuple[Layout, str]:
    """How `num_runs` runs of `config`'s static group fit on a (sweep, data) mesh.

    Args:
      num_runs: the group's runs.
      shape: the mesh's (sweep, data) devices (`group_mesh_shape`).
      state_shapes: `jax.eval_shape` of one run's RunnerState.
      config: any run of the group.
      device_memory: bytes per device the sweep may use, or None for the
        estimate from the device (or host) memory (`device_bytes`).
      specs: the sweep state's PartitionSpecs (`compiled.state_specs`), for
        replay shards split over `data`; None for a replicated learner.

    Returns:
      (the Layout, where the figure of the available memory comes from).

    """
    per_run = config_run_bytes(state_shapes, config, shape[1], specs)
    if device_memory is None:
        available, source = device_bytes()
    else:
        available, source = device_memory, "device_memory"
    size, num_batches = batches(num_runs, shape[0], per_run, available)
    return Layout(*shape, size, num_batches, per_run, available), source
