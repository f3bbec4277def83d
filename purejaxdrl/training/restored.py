"""A run's newest good checkpoint outside training: what eval and export read.

Device and host-env runs alike: the runner knows its state's layout.
"""

import contextlib
import dataclasses
import pathlib
from collections.abc import Iterator
from typing import Any

import jax
from jax.sharding import PartitionSpec as P

from purejaxdrl.config import ConfigError


def restore_run(run_dir: str | pathlib.Path, purpose: str) -> tuple[Any, Any, Any]:
    """A run's config, its experiment and its newest good checkpoint.

    Device and host-env runs alike: the runner knows its state's layout. One
    device, unless the run keeps a replay buffer: its shards (one per device
    it trained on) restore only onto as many devices. A host run's
    experiment owns pools of environments; `exp.runner.close()` closes them.

    Args:
      run_dir: a run directory.
      purpose: what the state is for, e.g. "export", for the error message.

    Returns:
      (TrainConfig, Experiment, checkpoint.Restored) with a state.

    Raises:
      ConfigError: the run directory is missing or bad, has no checkpoint that
        verifies, or keeps a replay buffer in more shards than this machine
        has devices.

    """
    from purejaxdrl.parallel import make_mesh
    from purejaxdrl.rng import make_key
    from purejaxdrl.training.experiment import make_experiment
    from purejaxdrl.training.resume import load_run_config

    config = load_run_config(run_dir)
    # One device: the policy, not the training, is wanted.
    one = dataclasses.replace(
        config,
        devices=1,
        host=dataclasses.replace(config.host, actor_devices=0, learner_devices=0),
    )
    exp = make_experiment(one, make_mesh(1), budget=False)
    key = make_key(config.seed, config.rng_impl)
    abstract = exp.runner.abstract_state(key)
    shardings = jax.tree.map(lambda a: a.sharding, abstract)
    if exp.agent.state_spec != P():  # a replay buffer, split per device
        shards = _saved_devices(run_dir, abstract, shardings, exp.runner.mesh)
        if shards > 1:
            exp.runner.close()
            if shards > jax.device_count():
                raise ConfigError(
                    f"{str(run_dir)!r} keeps its {config.algo} replay buffer in "
                    f"{shards} shards, one per device it trained on; to {purpose} "
                    f"it needs {shards} devices, and this machine has "
                    f"{jax.device_count()}."
                )
            one = dataclasses.replace(one, devices=shards)
            exp = make_experiment(one, make_mesh(shards), budget=False)
            abstract = exp.runner.abstract_state(key)
            shardings = jax.tree.map(lambda a: a.sharding, abstract)
    try:
        restored = _restore_newest(
            run_dir, abstract, shardings, exp.runner.mesh, purpose
        )
    except BaseException:
        exp.runner.close()
        raise
    return config, exp, restored


@contextlib.contextmanager
def _reader(
    run_dir: str | pathlib.Path, abstract: Any, shardings: Any, mesh: Any
) -> Iterator[Any]:
    """A read-only Checkpointer of `run_dir`'s checkpoints, closed after use."""
    from purejaxdrl.training.checkpoint import Checkpointer

    checkpointer = Checkpointer(
        pathlib.Path(run_dir) / "checkpoints", abstract, shardings, mesh, read_only=True
    )
    try:
        yield checkpointer
    finally:
        checkpointer.close()


def _saved_devices(
    run_dir: str | pathlib.Path, abstract: Any, shardings: Any, mesh: Any
) -> int:
    """The device count the newest good checkpoint was saved from (1: none)."""
    with _reader(run_dir, abstract, shardings, mesh) as checkpointer:
        return int((checkpointer.newest_meta() or {}).get("devices", 1))


def _restore_newest(
    run_dir: str | pathlib.Path, abstract: Any, shardings: Any, mesh: Any, purpose: str
) -> Any:
    from purejaxdrl.training.checkpoint import MISFIT

    with _reader(run_dir, abstract, shardings, mesh) as checkpointer:
        restored = checkpointer.restore_latest()
    if restored.step is None:
        reasons = "; ".join(restored.skipped) or "it has none"
        fix = "train or resume the run first"
        if restored.skipped and all(MISFIT in r for r in restored.skipped):
            # A resume would refuse them too: the fix is the config or version.
            fix = (
                "put back the config.yaml they were saved with, or use the "
                "purejaxdrl version that saved them"
            )
        raise ConfigError(
            f"{str(run_dir)!r} has no checkpoint to {purpose} ({reasons}); {fix}."
        )
    return restored
