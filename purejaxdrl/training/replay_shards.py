"""A replay buffer's shards, one per device: the device count a resume takes.

A replay buffer is split into one shard per device, with its own FIFO
position: it cannot be re-split like the environments, so such a run resumes
only on the device count it was saved on (`check_replay_shards`), and one that
leaves the count to purejaxdrl takes that count (`replay_devices`).
"""

import dataclasses
import pathlib

import jax

from purejaxdrl.config import ConfigError
from purejaxdrl.training.checkpoint import saved_devices
from purejaxdrl.training.config import TrainConfig

__all__ = ["check_replay_shards", "replay_devices"]


def check_replay_shards(
    config: TrainConfig, run_dir: str | pathlib.Path, devices: int
) -> None:
    """Refuses to resume a run of per-device replay shards on `devices` others.

    Raises:
      ConfigError: the run's buffer was saved in another number of shards;
        the message says how to resume it (`_replay_fix`).

    """
    if not _replay_per_device(config):
        return
    saved = saved_devices(run_dir) or devices
    if saved != devices:
        shards = f"{saved} shard{'s' * (saved != 1)}"
        raise ConfigError(
            f"--resume {run_dir}: this {config.algo} run keeps a replay "
            f"buffer in {shards}, one per device, and resumes only on "
            f"{saved} device{'s' * (saved != 1)}, not {devices}; "
            f"{_replay_fix(saved)}."
        )


def _replay_per_device(config: TrainConfig) -> bool:
    """Whether the run keeps a replay buffer of one shard per device.

    Such a run resumes only on its saved device count. R2D2's replay is one
    shard per environment (`Algorithm.replay_per_env`): it re-splits as the
    environments do, on any count.
    """
    from purejaxdrl.agents.registry import algorithm

    record = algorithm(config.algo)
    return record.keeps_replay(config.algo_config) and not record.replay_per_env


def _replay_fix(saved: int) -> str:
    """How to resume a replay buffer of `saved` shards on `saved` devices."""
    processes, local = jax.process_count(), jax.local_device_count()
    if saved % processes:  # no --devices splits it over these processes
        one = "as one process: drop --coordinator, --num-processes and --process-id"
        if saved == 1:
            return f"resume it {one}"
        fit = [str(n) for n in range(1, saved + 1) if saved % n == 0]
        return (
            f"resume it on a number of processes that divides {saved} "
            f"({', '.join(fit[:-1])} or {fit[-1]}); {one}"
        )
    each, backend = saved // processes, jax.default_backend()
    if each <= local:
        return f"pass --devices {each} (devices={each} in Python)"
    # The resume lines' spelling (`parallel.fake_devices_setting`).
    fake = "(on CPU, fake them with JAX_NUM_CPU_DEVICES={})".format
    if processes == 1:
        return (
            f"this machine has {local} {backend} device(s): resume it on a "
            f"machine with {saved} {fake(saved)}{_as_processes(saved, local)}"
        )
    return (
        f"each process has {local} {backend} device(s): resume it as {processes} "
        f"processes with {each} devices each (--devices {each}) {fake(each)}, "
        f"or as one process on a machine with {saved} devices (drop --coordinator, "
        "--num-processes and --process-id)"
    )


def _as_processes(saved: int, local: int) -> str:
    """The fewest processes of at most `local` devices each that hold `saved`.

    The run may have been saved by several (2 processes x 2 devices): that
    layout, or any other of as many devices, resumes it too.
    """
    for n in range(2, saved + 1):
        if saved % n == 0 and saved // n <= local:
            return (
                f", or as {n} processes of {saved // n} device(s) each "
                f"(--coordinator, --num-processes {n}, --process-id)"
            )
    return ""


def replay_devices(
    config: TrainConfig, run_dir: str | pathlib.Path
) -> tuple[TrainConfig, str | None]:
    """`config` to resume `run_dir` on its replay's device count, and a note.

    A replay buffer keeps one shard per device and resumes only on as many
    devices (`restore`). A run that leaves the count to purejaxdrl
    (`devices: 0`, its default) resumes on the saved count, where each
    process has enough devices, instead of all of them; `config` is returned
    as it is (note None) otherwise.
    """
    if config.devices or not _replay_per_device(config):
        return config, None
    saved = saved_devices(run_dir)
    processes, local = jax.process_count(), jax.local_device_count()
    if saved is None or saved % processes or saved // processes > local:
        return config, None  # `restore` will refuse, naming the count
    each = saved // processes
    # Set where it is all of them too: every process of a run resolves the
    # same `devices`, whatever its own device count (they agree on it).
    config = dataclasses.replace(config, devices=each)
    if each == local:
        return config, None
    return config, (
        f"resuming on {each} of {local} {jax.default_backend()} devices: this "
        f"{config.algo} run keeps its replay buffer in {saved} shards, one per "
        "device, and resumes only on as many."
    )
