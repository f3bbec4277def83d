"""Where a host-env run's actors, learner and environment pools go.

`place` splits each process's devices between actor threads and the learner
mesh (`HostConfig`); `make_host_envs` makes this process's pools, one per
actor thread, seeded per (run, restart, process, thread) by `host_env_seed`.
"""

import dataclasses
from typing import Any

import jax
import numpy as np
from jax.sharding import AxisType, Mesh

from purejaxdrl.config import ConfigError
from purejaxdrl.env.host import HostEnv, make_host_env
from purejaxdrl.env.host.base import NonFiniteStepError
from purejaxdrl.env.imports import import_modules
from purejaxdrl.env.option_spelling import both
from purejaxdrl.parallel import DATA_AXIS, devices_to_use
from purejaxdrl.runners.host_waits import HostEnvError


@dataclasses.dataclass(frozen=True, kw_only=True)
class HostConfig:
    """How a run on host environments places its actors and learner.

    Attributes:
      actor_devices: local devices the actor threads act on (0: the first
        device).
      learner_devices: local devices the learner is sharded over (0: all but
        the actors' when there are more devices than actors, else the first).
      actor_threads: actor threads per actor device, each with its own pool
        of `num_envs / (actor threads in all)` environments.
      env_threads: EnvPool worker threads per pool (0: EnvPool's default).
      queue_size: batches each actor may run ahead of the learner: more
        overlap where the learner is slow, up to that many more versions
        of policy lag (`lag/max`; IMPALA's V-trace corrects for it).
      deterministic: actors act batch k with exactly parameter version k - 1,
        so runs repeat exactly (asynchronous pools are not allowed then).

    """

    actor_devices: int = 0
    learner_devices: int = 0
    actor_threads: int = 1
    env_threads: int = 0
    queue_size: int = 1
    deterministic: bool = False


def split_devices(
    devices: list[jax.Device], config: HostConfig
) -> tuple[list[jax.Device], list[jax.Device]]:
    """(actor devices, learner devices) from one process's local `devices`.

    One device is shared. With more, the actors take the first
    `actor_devices` (default 1) and the learner the next `learner_devices`
    (default: the rest).

    Raises:
      ConfigError: the counts do not fit the devices (bad input, as the
        other placement refusals: `pjd.ConfigError` from Python).

    """
    n = len(devices)
    actors = config.actor_devices or 1
    if n == 1 and config.actor_devices <= 1 and config.learner_devices <= 1:
        return devices, devices
    learners = config.learner_devices or n - actors
    if actors + learners > n or learners < 1:
        raise ConfigError(
            f"host.actor_devices={config.actor_devices} and host.learner_devices="
            f"{config.learner_devices} do not fit {n} local devices (actors and "
            "learner get their own); lower them, or pass 0 for the defaults: "
            "--host.actor-devices 0 --host.learner-devices 0 (host.actor_devices=0, "
            "host.learner_devices=0 in Python)"
        )
    return devices[:actors], devices[actors : actors + learners]


def place(
    config: HostConfig, devices_per_process: int | None = None
) -> tuple[list[jax.Device], Mesh]:
    """The actor devices of this process, and the learner mesh of all processes.

    Each process splits its first `devices_per_process` local devices alike
    (`split_devices`); the learner mesh's `data` axis spans the learner
    devices of every process, process by process, so each process holds its
    slice of the learner and feeds it its own actors' batches. Every process
    splits as many devices (None: as many as the process with the fewest
    has), so each holds an equal slice.

    Raises:
      ConfigError: `devices_per_process` above some process's device count.
      ValueError: the counts do not fit the devices.

    """
    by_process: dict[int, list[jax.Device]] = {}
    for device in sorted(jax.devices(), key=lambda d: d.id):
        by_process.setdefault(device.process_index, []).append(device)
    counts = [len(by_process[p]) for p in range(jax.process_count())]
    n = devices_to_use(devices_per_process or None, counts, jax.default_backend())
    actors, learners = [], []
    for p in range(jax.process_count()):
        own_actors, own_learners = split_devices(by_process[p][:n], config)
        learners += own_learners
        if p == jax.process_index():
            actors = own_actors
    mesh = jax.make_mesh(
        (len(learners),), (DATA_AXIS,), axis_types=(AxisType.Auto,), devices=learners
    )
    return actors, mesh


def host_env_seed(seed: int, start: int, thread: int) -> int:
    """The seed of actor thread `thread`'s pool in a run (re)started at `start`.

    Host environments cannot be snapshotted, so a resumed run restarts them
    with seeds drawn from (seed, update, process, thread): distinct streams
    for every pool of every restart. 30 bits: EnvPool seeds its environments
    with seed + i and wants them all to fit an int32.
    """
    entropy = [seed, start, jax.process_index(), thread]
    return int(np.random.SeedSequence(entropy).generate_state(1)[0] >> 2)


def make_host_envs(config: Any, threads: int, start: int) -> list[HostEnv]:
    """Pools for this process, one per actor thread, for a run starting at `start`.

    `config` is the run's TrainConfig (its `env`, `host`, `seed`, `num_envs`).

    Not pure: it first imports `config.env.imports` (the user's modules that
    register environments).

    Raises:
      ConfigError: a knob this run's environments do not have
        (`check_host_knobs`), or a `batch_size` that makes a deterministic
        run's pools asynchronous.
      HostEnvError: an environment's constructor or first reset raised
        (its cause the environment's own error); the pools made are closed.

    """
    check_host_knobs(config)
    import_modules(config.env.imports)
    options = dict(config.env.options)
    if config.host.env_threads:
        options["num_threads"] = config.host.env_threads
    per_thread = config.num_envs // (threads * jax.process_count())
    batch = options.get("batch_size") or per_thread
    if config.host.deterministic and isinstance(batch, int) and batch < per_thread:
        raise ConfigError(
            f"env.options batch_size={batch} makes each actor's pool of "
            f"{per_thread} environments asynchronous, so its batches depend on "
            "thread timing, and host.deterministic=true repeats runs exactly only "
            "with synchronous pools; drop the option or pass "
            f"{both('batch_size', per_thread)}, or pass --host.deterministic "
            "false (host.deterministic=False in Python)."
        )
    pools: list[HostEnv] = []
    try:
        for i in range(threads):
            seed = host_env_seed(config.seed, start, i)
            pools.append(make_host_pool(config.env.id, per_thread, seed, **options))
    except BaseException:
        for pool in pools:  # a refused run leaves no pool running
            pool.close()
        raise
    return pools


def make_host_pool(env_id: str, num_envs: int, seed: int, **options: Any) -> HostEnv:
    """`make_host_env`, with a user's error in it raised as a HostEnvError.

    Training's pools, and those evaluation and drawing make: a bug in the
    user's constructor or first `reset` is said as an actor's error in `step`
    is (its traceback, then one line), not a traceback through the command.

    Raises:
      ConfigError, NonFiniteStepError: purejaxdrl's own refusals, as they are.
      HostEnvError: the environment's constructor or first reset raised (its
        cause the environment's own error).

    """
    try:
        return make_host_env(env_id, num_envs, seed, **options)
    except (ConfigError, NonFiniteStepError):
        raise  # refused in one line already
    except Exception as e:
        raise HostEnvError(
            f"{env_id}'s environments raised {type(e).__name__}: {e}; "
            "while being made (their constructor or first reset)"
        ) from e


def check_host_knobs(config: Any) -> None:
    """That `config` (a host run's TrainConfig) sets no knob its run lacks.

    `host.env_threads` sets EnvPool's worker threads: a Gymnasium pool has
    none (its workers are processes, `vectorization_mode=async`), and
    `env.options` `num_threads` is that knob's other spelling (refused: the
    flag overwrote it silently); `scan_unroll` unrolls the compiled rollout
    loop of device environments, which a host run steps from Python instead;
    `render_mode` would draw every step of training (`eval --render` draws its
    own). Checked where a run's pools are made, not in `validate`: a run saved
    with them still evaluates.

    Raises:
      ConfigError: naming the value, why it does nothing here, and the fix.

    """
    env_id, threads = config.env.id, config.host.env_threads
    if threads and not env_id.startswith("envpool:"):
        raise ConfigError(
            f"host.env_threads={threads} sets EnvPool's worker threads, and "
            f"env.id={env_id!r} is no EnvPool id: Gymnasium steps its "
            "environments in this process, or each in a worker process of its "
            "own with --env.option vectorization_mode=async; drop "
            "--host.env-threads (or pass 0)."
        )
    given = config.env.options.get("num_threads")
    if given is not None and env_id.startswith("envpool:"):  # two knobs, one value
        keep = threads or given
        said = f"--host.env-threads {keep} (host.env_threads={keep} in Python)"
        raise ConfigError(
            f"env.options num_threads={given!r} sets EnvPool's worker threads, "
            f"which a run takes from host.env_threads (now {threads}); "
            f"{'keep' if threads else 'pass'} {said}, and drop --env.option "
            "num_threads (the env.options entry in Python)."
        )
    if config.scan_unroll:
        raise ConfigError(
            f"scan_unroll={config.scan_unroll} unrolls the compiled rollout "
            f"loop of device environments, and env.id={env_id!r} is stepped "
            "from Python by the host-env runner, which has no such loop; drop "
            "--scan-unroll (or pass 0)."
        )
    mode = config.env.options.get("render_mode")
    if mode is not None:  # a window per environment, or frames drawn for nothing
        raise ConfigError(
            f"env.options render_mode={mode!r}: the runner steps its environments "
            "without drawing them, and drawing would slow every step; watch a run "
            "with `purejaxdrl eval RUN --render out.gif` instead, and drop "
            "--env.option render_mode (the env.options entry in Python)."
        )
