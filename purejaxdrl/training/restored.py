"""A run's newest good checkpoint outside training: what eval and export read.

Device and host-env runs alike: the runner knows its state's layout.
"""

import contextlib
import dataclasses
import pathlib
import warnings
from collections.abc import Iterator
from typing import Any

import jax
from jax.sharding import PartitionSpec as P

from purejaxdrl.config import ConfigError
from purejaxdrl.setup_warnings import SetupWarning, user_stacklevel
from purejaxdrl.training.run_folder import (
    check_not_file,
    check_not_inside,
    check_not_parent,
)
from purejaxdrl.training.saved_config import check_config_to_read
from purejaxdrl.training.schedule import save_updates

# Which checkpoint eval and export read: the newest good one, the one kept
# by `checkpoint.keep_best`, or the one saved after a given update.
LATEST, BEST = "latest", "best"


def restore_run(
    run_dir: str | pathlib.Path, purpose: str, checkpoint: int | str = LATEST
) -> tuple[Any, Any, Any]:
    """A run's config, its experiment and its newest good (or chosen) checkpoint.

    Device and host-env runs alike: the runner knows its state's layout. One
    device, on any machine: a replay buffer kept in shards (one per device it
    trained on) is restored whole onto this one device, in its saved shapes.
    Only what acting reads (`state.agent.params`, `state.env_params`) is
    meant for use: the rest of the state fits the saved run, not `exp`. A
    host run's experiment owns pools of environments; `exp.runner.close()`
    closes them.

    Args:
      run_dir: a run directory.
      purpose: what the state is for, e.g. "export", for the error message.
      checkpoint: "latest" (the newest that verifies), "best" (the one
        `checkpoint.keep_best` kept: the best training return of those
        saved), or an update count whose checkpoint is saved.

    Returns:
      (TrainConfig, Experiment, checkpoint.Restored) with a state.

    Raises:
      ConfigError: the run directory is missing or bad (naming the run inside
        a folder of runs), or has no checkpoint that verifies (saying to wait
        for the first of a run still training); or `checkpoint` names none
        that is saved and verifies (naming those that are).

    Warns:
      SetupWarning: once per newer checkpoint that failed verification, as
        `train --resume` says it (`checkpoint at update 11 skipped: ...`),
        with the update used instead (`...; evaluating update 2`).

    """
    from purejaxdrl.setup_warnings import quiet_setup_warnings

    checkpoint = checkpoint_choice(checkpoint)
    check_not_file(pathlib.Path(run_dir))
    check_not_parent(pathlib.Path(run_dir))
    check_not_inside(pathlib.Path(run_dir), "step" if purpose == "export" else "")
    # Training's setup advice (a PQN without LayerNorm...) is too late here.
    with quiet_setup_warnings():
        return _restore(run_dir, purpose, checkpoint)


def checkpoint_choice(value: int | str) -> int | str:
    """`value` as "latest", "best" or an update count (from text too).

    Raises:
      ConfigError: anything else, naming the choices.

    """
    text = str(value).strip().lower()
    if text in (LATEST, BEST):
        return text
    try:  # text, so a bool ("true") and a float ("3.0") are refused too
        if int(text) >= 0:
            return int(text)
    except ValueError:
        pass
    raise ConfigError(
        f"checkpoint {value!r} is not 'latest', 'best' or an update count; "
        "pass e.g. --checkpoint best (step='best' in Python)."
    )


def _restore(
    run_dir: str | pathlib.Path, purpose: str, checkpoint: int | str
) -> tuple[Any, Any, Any]:
    from purejaxdrl.rng import make_key
    from purejaxdrl.training.resume import load_run_config

    config = load_run_config(run_dir)
    # One device: the policy, not the training, is wanted.
    one = dataclasses.replace(
        config,
        devices=1,
        host=dataclasses.replace(config.host, actor_devices=0, learner_devices=0),
    )
    exp = _experiment(one, run_dir, purpose)
    try:
        abstract = exp.runner.abstract_state(make_key(config.seed, config.rng_impl))
        if exp.agent.state_spec != P():  # a replay buffer, split per device
            abstract = _as_saved(run_dir, abstract, exp.runner.mesh, purpose)
        shardings = jax.tree.map(lambda a: a.sharding, abstract)
        with _reader(run_dir, abstract, shardings, exp.runner.mesh) as reader:
            check_config_to_read(pathlib.Path(run_dir), reader, config, purpose)
        args = (run_dir, abstract, shardings, exp.runner.mesh, purpose, config)
        if checkpoint == LATEST:
            restored = _restore_newest(*args)
        else:
            restored = _restore_chosen(*args, checkpoint)
    except BaseException:
        exp.runner.close()
        raise
    return config, exp, restored


def _experiment(config: Any, run_dir: str | pathlib.Path, purpose: str) -> Any:
    """`make_experiment` of a saved run, an unknown id's advice made the file's.

    eval and export take no `--env.imports`: the run's config.yaml names the
    modules that register its environment, and fixing it there fixes every
    later eval, export and resume of the run.
    """
    from purejaxdrl.env import UnknownEnvironmentError
    from purejaxdrl.training.experiment import make_experiment

    try:
        return make_experiment(config, budget=False)  # devices=1: make_mesh(1)
    except UnknownEnvironmentError as e:
        if not e.imports_advice:
            raise
        source = pathlib.Path(run_dir) / "config.yaml"
        raise ConfigError(
            str(e).removesuffix(e.imports_advice) + f" It is {source}'s env.id; "
            "if a module of your own registers it, add that module to env.imports "
            f"there (imports: [MODULE], under env:) and {purpose} the run from the "
            "folder the module imports in."
        ) from None


def _as_saved(
    run_dir: str | pathlib.Path, abstract: Any, mesh: Any, purpose: str
) -> Any:
    """`abstract` with its split leaves in the shapes the newest checkpoint saved.

    A buffer of N shards has leaves of N entries (each shard's position and
    size): shaped so, the saved arrays restore onto this one device. Other
    leaves keep this run's shapes, so a checkpoint whose parameters do not fit
    is still refused.
    """
    shardings = jax.tree.map(lambda a: a.sharding, abstract)
    with _reader(run_dir, abstract, shardings, mesh) as checkpointer:
        meta = checkpointer.newest_meta() or {}
    if int(meta.get("devices", 1)) <= 1:
        return abstract
    if "state" not in meta:  # saved by a version that kept no index
        raise ConfigError(
            f"{str(run_dir)!r} keeps its replay buffer in {meta['devices']} "
            f"shards and its checkpoint no index of their shapes: it was saved "
            f"by a version before 2026-11-23, and this one cannot {purpose} it "
            "on one device; train it again to export or evaluate it."
        )
    saved = {leaf["path"]: tuple(leaf["shape"]) for leaf in meta["state"]}

    def shaped(path: Any, leaf: Any) -> Any:
        shape = saved.get(jax.tree_util.keystr(path), leaf.shape)
        if not tuple(leaf.sharding.spec) or len(shape) != len(leaf.shape):
            return leaf  # replicated: must fit as it is
        return jax.ShapeDtypeStruct(shape, leaf.dtype, sharding=leaf.sharding)

    return jax.tree_util.tree_map_with_path(shaped, abstract)


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


def _restore_newest(
    run_dir: str | pathlib.Path,
    abstract: Any,
    shardings: Any,
    mesh: Any,
    purpose: str,
    config: Any,
) -> Any:
    with _reader(run_dir, abstract, shardings, mesh) as checkpointer:
        restored = checkpointer.restore_latest()
    if restored.step is None:
        if not restored.skipped and (holder := _trainer(run_dir)):
            every = config.checkpoint.every
            first = (
                f"after {every} chunk(s) of updates (checkpoint.every)"
                if every
                else "when it ends (checkpoint.every 0)"
            )
            raise ConfigError(
                f"{str(run_dir)!r} has no checkpoint to {purpose} yet: it is "
                f"still training ({holder}) and saves its first checkpoint {first}; "
                "wait for it, then retry."
            )
        reasons = f" ({'; '.join(restored.skipped)})" if restored.skipped else ""
        fix = "train or resume the run first"
        if restored.skipped and restored.misfits == len(restored.skipped):
            # A resume would refuse them too: the fix is the config or version.
            fix = (
                "put back the config.yaml they were saved with, or use the "
                "purejaxdrl version that saved them"
            )
        elif restored.skipped:  # damaged: a resume refuses them too
            fix = (
                "restore them from a backup, or, to train from update 0 instead, "
                f"move {pathlib.Path(run_dir) / 'checkpoints'} elsewhere and "
                f"resume the run (purejaxdrl train --resume {run_dir})"
            )
        raise ConfigError(
            f"{str(run_dir)!r} has no checkpoint to {purpose}{reasons}; {fix}."
        )
    _say_skipped(restored.skipped, purpose, restored.step)
    return restored


def _say_skipped(skipped: list[str], purpose: str, step: int) -> None:
    """Warns of each newer checkpoint skipped: an older policy is played.

    Not `warn_once` (silenced while a run is read back, and once per process):
    each export or evaluation of an older update than the run reached is news.
    """
    doing = {"evaluate": "evaluating", "export": "exporting"}.get(purpose, "using")
    for line in skipped:
        warnings.warn(
            f"{line}; {doing} update {step}", SetupWarning, stacklevel=user_stacklevel()
        )


def _restore_chosen(
    run_dir: str | pathlib.Path,
    abstract: Any,
    shardings: Any,
    mesh: Any,
    purpose: str,
    config: Any,
    checkpoint: int | str,
) -> Any:
    """The checkpoint `checkpoint` ("best" or an update count) names, verified.

    Never another in its place: one that fails is an error, not a fallback.
    """
    from purejaxdrl.training.checkpoint import misfit_problem
    from purejaxdrl.training.faults import read_failure
    from purejaxdrl.training.integrity import NO_MANIFEST, verify_once

    with _reader(run_dir, abstract, shardings, mesh) as checkpointer:
        steps = checkpointer.steps()
        if not steps:  # the newest's own errors: train first, or wait
            return _restore_newest(run_dir, abstract, shardings, mesh, purpose, config)
        step = _chosen_step(run_dir, checkpointer, steps, config, checkpoint)
        problem = verify_once(checkpointer.directory / str(step))
        if problem in (None, NO_MANIFEST) and (
            detail := checkpointer.layout_difference(step)
        ):
            problem = misfit_problem(detail)
        if problem in (None, NO_MANIFEST):
            try:
                return checkpointer.restore(step)
            except Exception as e:  # unreadable despite its manifest
                problem = f"could not be read ({read_failure(e)})"
        others = [s for s in steps if s != step]
        another = f"another of its checkpoints (updates {_listed(others)}) or "
        raise ConfigError(
            f"{str(run_dir)!r}'s checkpoint at update {step} cannot be read to "
            f"{purpose}: {problem}; pass {another if others else ''}'latest'."
        )


def _why_missing(update: int, steps: list[int], config: Any) -> str:
    """Why a run has no checkpoint at `update`, as far as its folder tells."""
    newest, keep = max(steps, default=0), config.checkpoint.keep
    if update > newest:
        return "it is past the newest"
    planned = save_updates(config)
    if not set(steps) <= set(planned):  # a resume changed the cadence
        return (
            "its saves follow more than one schedule (--num-logs or the budget "
            "changed on a resume)"
        )
    if update not in planned:  # never due: not a pruned one
        shown = planned if len(planned) <= 6 else [*planned[:3], "...", planned[-1]]
        return f"saves were due at updates {_listed(shown)}"
    if update not in [u for u in planned if u <= newest][-keep:]:
        return f"checkpoint.keep keeps the newest {keep}"
    return (
        "none was saved there: without --checkpoint.wait a due save replaces "
        "one still waiting to be written"
    )


def _chosen_step(
    run_dir: str | pathlib.Path,
    checkpointer: Any,
    steps: list[int],
    config: Any,
    checkpoint: int | str,
) -> int:
    """The saved step of "best" or an update count, or a ConfigError naming why not."""
    where = f"{str(run_dir)!r} has checkpoints at updates {_listed(steps)}"
    if checkpoint != BEST:
        if checkpoint not in steps:
            best = ", 'best'" if config.checkpoint.keep_best else ""
            why = _why_missing(checkpoint, steps, config)
            raise ConfigError(
                f"{where}, none at update {checkpoint} ({why}); pass one of those"
                f"{best} or 'latest' as --checkpoint N (step=N in Python)."
            )
        return int(checkpoint)
    if not config.checkpoint.keep_best:
        raise ConfigError(
            f"{where} and kept no best one (it trained with checkpoint.keep_best "
            "false); pass one of those or 'latest', or train with "
            "--checkpoint.keep-best true (checkpoint.keep_best=True in Python)."
        )
    history = (checkpointer.newest_meta() or {}).get("history", [])
    returns = {r["updates"]: r.get("episode/mean_return") for r in history}
    # The one kept for its return is the saved step of the highest, as ranked
    # at its save (the chunk's mean training return; NaN or none: unranked).
    ranked = [s for s in steps if _finite(returns.get(s))]
    if not ranked:
        raise ConfigError(
            f"{where}, none with a training return to rank (no episode ended "
            "in their chunks); pass one of those or 'latest'."
        )
    return max(ranked, key=lambda s: (returns[s], s))


def _finite(value: Any) -> bool:
    return value is not None and value == value and abs(value) != float("inf")


def _listed(steps: list[Any]) -> str:
    return ", ".join(str(s) for s in steps)


def _trainer(run_dir: str | pathlib.Path) -> str | None:
    """Who trains the run now (its lock's holder, `RunLock`), or None."""
    import fcntl

    from purejaxdrl.training.run_files import LOCK_FILE

    try:
        lock = open(pathlib.Path(run_dir) / LOCK_FILE)  # noqa: SIM115
    except OSError:
        return None  # never trained here, or not readable: no one to wait for
    with lock:
        try:  # a shared hold, released at once: it never blocks the trainer
            fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return lock.read().strip() or "another process"
        fcntl.flock(lock, fcntl.LOCK_UN)
    return None
