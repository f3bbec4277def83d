"""Every replay learner's size and τ rules, its split over devices, its adds."""

import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp

from purejaxdrl.config import ConfigError, check
from purejaxdrl.config_docs import both_ways, field_example


def check_replay_sizes(name: str, config: Any, shape: Any) -> None:
    """The size rules of every replay learner's config (its `validate`).

    `config` has `buffer_size`, `batch_size` and `min_replay`, all over all
    devices and split evenly over them, so what holds for the whole buffer
    holds for each device's shard. `min_replay` at most `buffer_size`, or
    learning never starts; the buffer holds one update's items (with `shape`,
    `check_buffer_fits`); `batch_size` at most `buffer_size`: a batch larger
    than the whole buffer is sampled from fewer items than it holds, almost
    surely a mistake. `name` is the config's section, which the errors name.

    `shape` is the run's `RunShape`, or None. A learner that stores
    transitions (DQN, SAC) passes it; R2D2, whose buffer counts sequences,
    passes None: it stores one per environment and update, and its own rule
    that `buffer_size` is a multiple of `num_envs` makes room for them.

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    size = config.buffer_size
    check(
        config.min_replay <= size,
        f"{name}.min_replay={config.min_replay} exceeds {name}.buffer_size="
        f"{size}: learning would never start; lower it to at most "
        f"{field_example(f'{name}.min_replay', size)} or raise "
        f"{field_example(f'{name}.buffer_size', config.min_replay)}.",
    )
    check_buffer_fits(name, config, shape)
    check(
        config.batch_size <= size,
        f"{name}.batch_size={config.batch_size} exceeds {name}.buffer_size="
        f"{size}: a batch is sampled from the buffer; lower it to at most "
        f"{field_example(f'{name}.batch_size', size)} or raise "
        f"{field_example(f'{name}.buffer_size', config.batch_size)}.",
    )


def check_buffer_fits(name: str, config: Any, shape: Any) -> None:
    """That the replay holds one update's transitions (`check_replay_sizes`).

    `config` has `buffer_size` over all devices; `shape` is the run's
    `RunShape` (or None: nothing to check), whose environments each add
    `unroll_length` transitions per update.

    Raises:
      ConfigError: naming the section's buffer_size flag and the size it needs.

    """
    if shape is None:
        return
    per_update = shape.num_envs * shape.unroll_length
    if config.buffer_size < per_update:
        flag = name.replace("_", "-")
        raise ConfigError(
            f"{name}.buffer_size={config.buffer_size} holds fewer transitions than "
            f"the {per_update} one update adds (num_envs x unroll_length); raise "
            f"--{flag}.buffer-size to at least {per_update}."
        )


def check_target_tau(name: str, config: Any, field: str = "target_tau") -> None:
    """That each target update moves the target network: τ in (0, 1].

    At τ = 0 `optax.incremental_update` keeps the initial, random network as
    the target for the whole run, and every TD target bootstraps from it.
    `field` is the section's τ: DQN's and R2D2's `target_tau`, moved every
    `target_every` gradient steps (1: a copy), or SAC's `tau`, every step.

    Raises:
      ConfigError: naming the value, the rule and the fix, both ways.

    """
    tau = getattr(config, field)
    if isinstance(tau, jax.core.Tracer):
        return  # a sweep's values were checked one by one before stacking
    tau = float(tau)
    fix = field_example(f"{name}.{field}", 0.005)
    if hasattr(config, "target_every"):
        fix += f" with {field_example(f'{name}.target_every', 1)}, or 1 for copies"
    # The reason for the limit broken: NaN breaks both.
    why = (
        "above 1 moves the target past the online network"
        if tau > 1.0
        else "0 never updates the target network"
    )
    check(
        0.0 < tau <= 1.0, f"{name}.{field}={tau} must be in (0, 1]: {why}; e.g. {fix}."
    )


def transitions_per_update(config: Any, shape: Any) -> tuple[int, str]:
    """A transition replay's `Algorithm.replay_items`: every env step is stored."""
    return shape.num_envs * shape.unroll_length, "transitions"


def check_learning_starts(
    name: str, min_replay: int, per_update: int, shape: Any, unit: str
) -> None:
    """That the run stores `min_replay` items before its budget ends.

    Each update stores `per_update` items (DQN's and SAC's transitions, one
    R2D2 sequence per environment: `Algorithm.replay_items`); learning starts
    once `min_replay` are stored, so a run of fewer updates never takes a
    gradient step. `shape` is the run's `RunShape`.

    Raises:
      ConfigError: naming min_replay, what the run stores and the budget it needs.

    """
    stored = shape.num_updates * per_update
    if min_replay > stored:
        updates = -(-min_replay // per_update)
        needed = updates * shape.num_envs * shape.unroll_length
        raise ConfigError(
            f"{name}.min_replay={min_replay} {unit} is more than the run ever "
            f"stores ({shape.num_updates} updates x {per_update} = {stored}): "
            f"learning would never start; pass at most "
            f"{field_example(f'{name}.min_replay', stored)}, or at least "
            f"{field_example('total_steps', needed)}."
        )


def replay_shard_sizes(
    name: str, config: Any, num_devices: int
) -> tuple[int, int, int]:
    """Per-device (capacity, batch, min_size) of a config's global replay sizes.

    `config` has `buffer_size`, `batch_size` and `min_replay`, over all devices.

    Raises:
      ValueError: when one does not split evenly over the devices.

    """
    sizes = (config.buffer_size, config.batch_size, config.min_replay)
    names = ("buffer_size", "batch_size", "min_replay")
    for field, value in zip(names, sizes, strict=True):
        if value < num_devices or value % num_devices:
            below = value // num_devices * num_devices
            near = [v for v in (below, below + num_devices) if v >= num_devices]
            # A device count all three sizes split over.
            fewer = [
                d
                for d in range(num_devices - 1, 0, -1)
                if all(v % d == 0 for v in sizes)
            ]
            fewer = fewer if jax.process_count() == 1 else []  # --devices: per host
            near_text = " or ".join(map(str, near))
            raise ValueError(
                f"{name}.{field}={value} must be a positive multiple of the "
                f"{num_devices} devices it is split over; use "
                + field_example(f"{name}.{field}", near_text, near[0])
                + (f", or {field_example('devices', fewer[0])}" if fewer else "")
                + "."
            )
    capacity, batch, min_size = (value // num_devices for value in sizes)
    return capacity, batch, min_size


def merge_steps(x: jax.Array) -> jax.Array:
    """[T, B, ...] -> [T * B, ...]: an unroll's steps as items for a replay buffer."""
    return x.reshape((-1, *x.shape[2:]))


def learning_updates(min_replay: int, per_update: int, num_updates: int) -> int:
    """How many of a run's `num_updates` take gradient steps (at least 1).

    Learning starts at the update whose add fills `min_replay` (`stored_items`),
    so `anneal_lr` decays over these updates and reaches 0 at the run's end,
    not `learning_rate * warm-up / num_updates`. `per_update` is the items
    each update stores over all devices (`Algorithm.replay_items`).
    """
    first = -(-min_replay // per_update) - 1  # the first update that learns
    return max(num_updates - first, 1)


def stored_items(step: jax.Array, per_update: int, capacity: int) -> jax.Array:
    """Items in a replay shard after the add of update `step` (counted from 0).

    The one rule of when a replay learner starts: it learns once this reaches
    its shard's `min_replay`. Every device adds the same count each update, so
    this is the same on all of them, and learning starts on all of them at
    once; the count in the buffer's state would differ in type per device
    (`replay.Buffer` says why learners do not read it). The update count is
    clamped before it is multiplied: `step` is int32, and (step + 1) x
    per_update passes 2^31 in a long run (2^31 items on one device), where
    a wrapped negative count would stop learning silently.
    """
    full = -(-capacity // per_update)  # the updates that fill the shard
    return jnp.minimum(jnp.minimum(step + 1, full) * per_update, capacity)


def host_replay_refusal(
    record: Any, section: Any, env_id: str, runs: Sequence[str]
) -> str:
    """Why the host-env runner refuses `section`, an algorithm's config, and the fix.

    `record` is the algorithm's `Algorithm`; `runs` the algorithms that keep
    no replay, to suggest (`host_rules.host_choices`). Where one field set away from its
    default turns the replay on (IMPALA's `replay_ratio`), the message names
    that field and its default as the first fix, so a user of an algorithm
    that otherwise runs there is not told to use it.
    """
    default = record.default_config()
    for field in dataclasses.fields(section):
        value, off = getattr(section, field.name), getattr(default, field.name)
        if not field.init or record.keeps_replay(
            dataclasses.replace(section, **{field.name: off})
        ):
            continue
        others = ", ".join(n for n in runs if n.split(" ")[0] != record.name)
        path = f"{record.name}.{field.name}"
        return (
            f"{path}={value} keeps a replay buffer, which the host-env runner "
            f"(env.id={env_id!r}) does not run yet; pass {field_example(path, off)}"
            f", the default (no replay), use {others}, or a device environment."
        )
    first = runs[0].split(" ")[0]
    return (
        f"algo={record.name!r} keeps a replay buffer, which the host-env runner "
        f"(env.id={env_id!r}) does not run yet; use one that keeps none "
        f"({', '.join(runs)}), e.g. {both_ways('--algo', 'algo', first, repr(first))}"
        ", or a device environment."
    )
