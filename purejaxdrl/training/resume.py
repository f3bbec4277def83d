"""Resuming a run: its saved config, and which changes a resume may make.

A resumed run must be the run that was interrupted. Changing a field that the
updates depend on (a learning rate, the budget, which algorithm) would make it
another run under the same name, so such changes are refused unless the user
says `--override`. Fields that do not change the updates (how many devices,
how often to checkpoint or log: `field_roles.FREE_ON_RESUME`) may change
freely. What no checkpoint can continue is refused even with `--override`
(`cannot_continue`: the steps per update; a device run's seed and keys).
"""

import dataclasses
import pathlib
from collections.abc import Mapping
from typing import Any

import yaml

from purejaxdrl.agents.registry import names
from purejaxdrl.config import ConfigError, apply_overrides
from purejaxdrl.config_types import flat_fields
from purejaxdrl.env.host import is_host_env
from purejaxdrl.env.imports import import_modules
from purejaxdrl.field_roles import FREE_ON_RESUME, ignored_fields
from purejaxdrl.setup_warnings import held_setup_warnings, show_held
from purejaxdrl.training.config import TrainConfig, config_class, validate
from purejaxdrl.training.policy.folder import what_it_is
from purejaxdrl.training.run_files import check_writable
from purejaxdrl.training.run_folder import check_not_file, check_not_parent


def load_run_config(run_dir: str | pathlib.Path) -> TrainConfig:
    """The config a run directory was made with (its `config.yaml`).

    Raises:
      ConfigError: the folder or its config is missing, unreadable or invalid,
        or the folder holds runs rather than being one (it names them).

    """
    run_dir = pathlib.Path(run_dir)
    check_not_file(run_dir)  # its folder only where that is a run
    if not run_dir.is_dir():
        raise ConfigError(
            f"run directory {str(run_dir)!r} does not exist; pass a folder made by "
            "`purejaxdrl train` (under runs/ by default)."
        )
    check_not_parent(run_dir)  # `--resume runs`: the runs inside, as eval names
    path = run_dir / "config.yaml"
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        what = what_it_is(run_dir) or "pass a folder made by `purejaxdrl train`."
        raise ConfigError(
            f"{str(run_dir)!r} has no config.yaml, so it is not a purejaxdrl run "
            f"directory; {what}"
        ) from None
    except (OSError, yaml.YAMLError) as e:
        mark = getattr(e, "problem_mark", None)  # where the YAML breaks
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(
            f"{str(path)!r} is unreadable ({type(e).__name__}{at}); restore the "
            "file or start a new run."
        ) from None
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"{str(path)!r} is not a config mapping; restore the file or start a "
            "new run."
        )
    return config_from_dict(data, str(path))


class UnavailableHere(ConfigError):
    """A saved config needs what this process lacks: a module, or an algorithm.

    The process's to fix (import or install it), not the record's: sweeps and
    PBT call any other refused field of their records damage.
    """


def _check_gymnasium_id(env_id: Any, imports: Any, source: str) -> None:
    """A saved Gymnasium id that no module of the run's env.imports registers.

    Refused in words for a saved run: `eval` and `export` take no
    `--env.imports` (the pool's own refusal advises it), and an id the
    training script registered (`__main__`) is found by no other process.

    Raises:
      UnavailableHere: naming the id and where its registration must go.

    """
    name = str(env_id).removeprefix("gymnasium:")
    if not str(env_id).startswith("gymnasium:") or ":" in name:
        return  # a device or EnvPool id, or `gymnasium:module:Id` imports itself
    try:
        import gymnasium
    except ImportError:
        return  # the run's pools say how to install it
    if name in gymnasium.registry:
        return
    raise UnavailableHere(
        f"{source}: env.id={env_id!r} is registered by no module this process "
        f"imports (its env.imports: {imports}); a gym.register in the "
        "script that trained it is not run here: move the registration into a "
        f"module and add that module to env.imports in {source}."
    )


def config_from_dict(data: Mapping[str, Any], source: str) -> TrainConfig:
    """The validated config of a saved run's `data` (its config.yaml mapping).

    Not pure: it first imports the modules of the saved `env.imports`, which
    register the run's environment and algorithm when they are the user's.
    Only the run's own algorithm's section is read: the others keep this
    version's defaults, as the run never reads them.

    Args:
      data: the nested mapping `to_dict` wrote.
      source: the file `data` comes from, for errors.

    Raises:
      UnavailableHere: a module of env.imports that does not import, a
        Gymnasium id no module registers, or the run's algorithm is not
        registered.
      ConfigError: a bad field.

    """
    env = data.get("env")
    imports = env.get("imports") if isinstance(env, Mapping) else None
    if isinstance(imports, list | tuple):
        try:
            import_modules([str(n) for n in imports], f"{source}'s env.imports")
        except ConfigError as e:
            raise UnavailableHere(str(e)) from None
    if isinstance(env, Mapping):
        listed = list(imports) if isinstance(imports, list | tuple) else []
        _check_gymnasium_id(env.get("id"), listed, source)
    algo = data.get("algo")
    if isinstance(algo, str) and algo not in names() and algo in data:
        raise UnavailableHere(
            f"{source}: the run's algorithm {algo!r} is not registered in this "
            "process; import the module that registers it first (in Python, "
            f"before loading; for the command line, add it to env.imports in "
            f"{source})."
        )
    # Checkpoints (and config.yaml before 0.1.0) save every algorithm's
    # section, but a run reads only its own: the others (another version's
    # defaults, or user algorithms not registered now) are left out, so they
    # are never taken for an override of them.
    fields = {f.name for f in dataclasses.fields(config_class())}
    others = TrainConfig.SELECTION.others(algo) if isinstance(algo, str) else set()
    data = {
        key: value
        for key, value in data.items()
        if not isinstance(value, Mapping)
        or (key not in others and (key in fields or key == algo))
    }
    # A saved budget that never fills the replay is for the resume to raise.
    # Its text stays text: config.yaml quotes only what was text.
    config = apply_overrides(config_class()(), data, read_texts=False)
    return validate(config, budget=False)


def changed_fields(saved: TrainConfig, new: TrainConfig) -> list[tuple[str, Any, Any]]:
    """(dotted path, old value, new value) of every field that differs.

    In field order. Other algorithms' sections are left out: neither run
    reads them, and a saved config holds this version's defaults there
    (`config_from_dict`).
    """
    old = {path: value for path, _, value in flat_fields(saved)}
    unread = TrainConfig.SELECTION.others(saved.algo, new.algo)
    return [
        (path, old[path], value)
        for path, _, value in flat_fields(new)
        if old[path] != value and path.split(".")[0] not in unread
    ]


def config_changes(saved: TrainConfig, new: TrainConfig) -> list[str]:
    """`field: old -> new` for every field that differs (`changed_fields`)."""
    return [f"{path}: {a!r} -> {b!r}" for path, a, b in changed_fields(saved, new)]


def binding_changes(saved: TrainConfig, new: TrainConfig) -> list[str]:
    """The lines of `config_changes` that alter the sequence of updates.

    Not a field both configs read nowhere (`field_roles.ignored_fields`: a
    recurrent run's `network.shared_torso`), which trains as it did.
    """
    unread = set(ignored_fields(saved.network.core))
    unread &= set(ignored_fields(new.network.core))
    return [
        c
        for c in config_changes(saved, new)
        if changes_the_run(c) and c.split(":", 1)[0] not in unread
    ]


def changes_the_run(change: str) -> bool:
    """Whether a line of `config_changes` alters the sequence of updates."""
    path = change.split(":", 1)[0]
    return not any(
        path == free or (free.endswith(".") and path.startswith(free))
        for free in FREE_ON_RESUME
    )


def resume_config(
    run_dir: str | pathlib.Path,
    overrides: Mapping[str, Any] | None = None,
    *,
    allow_changes: bool = False,
    resuming: bool = False,
) -> tuple[TrainConfig, list[str]]:
    """The config to resume `run_dir` with, after checking `overrides`.

    Args:
      run_dir: a folder made by `train(..., write_files=True)`.
      overrides: nested field overrides, as for `apply_overrides`; None (the
        default) resumes the saved config as it is.
      allow_changes: accept overrides that change the run (`--override`).
      resuming: the config is for `train(config, resume=run_dir)` at once
        (the command line's): refuse here, not there, what no resume can
        change (`cannot_continue`). Without it, with `allow_changes`, the
        config may be for a new run (`pjd.train(config)`), and train(resume=)
        refuses that.

    Returns:
      (config, changes): the validated config and the list of changed fields.

    Examples:
      More in docs/guide/checkpoints.md.

      >>> import purejaxdrl as pjd
      >>> config, changes = pjd.resume_config(
      ...     run_dir, {"total_steps": 2_000_000}, allow_changes=True
      ... )
      >>> result = pjd.train(config, resume=run_dir, allow_changes=True)

    Raises:
      ConfigError: for a missing or bad run directory, a different algorithm
        (its state cannot be restored), or changes to the run without
        `allow_changes`, listing them.

    """
    saved = load_run_config(run_dir)
    # A replay run that normalised before that was refused goes on as it began.
    before = saved.env.normalize_observations
    # A refused resume (another algo) is its refusal alone, not advised on:
    # the advice on the config is shown once `check_continues` accepts it.
    with held_setup_warnings() as held:
        changed = apply_overrides(saved, overrides or {})
        config = validate(changed, normalised_before=before)
    kept = resuming or not allow_changes  # see `resuming`
    changes = check_continues(run_dir, saved, config, allow_changes, kept=kept)
    show_held(held)
    return config, changes


def check_resume(
    run_dir: str | pathlib.Path, config: TrainConfig, allow_changes: bool = False
) -> tuple[TrainConfig, list[str]]:
    """Checks that `config` may continue the run in `run_dir`: (saved config, changes).

    What `train(config, resume=run_dir)` checks before it writes anything: the
    folder is a run, and `config` is its config but for changes that leave its
    updates alone (or any changes, with `allow_changes`), listed as
    `check_continues` lists them.

    Raises:
      ConfigError: as `resume_config`, or the folder is not writable.

    """
    saved = load_run_config(run_dir)
    changes = check_continues(run_dir, saved, config, allow_changes, kept=True)
    check_writable(pathlib.Path(run_dir))
    return saved, changes


def check_continues(
    run_dir: str | pathlib.Path,
    saved: TrainConfig,
    config: TrainConfig,
    allow_changes: bool,
    *,
    kept: bool = True,
) -> list[str]:
    """The changes from `saved` to `config`, if `config` may continue the run.

    `kept`: refuse too what no checkpoint can continue (`cannot_continue`),
    even with `allow_changes`.

    Raises:
      ConfigError: for another algorithm or environment, a change that
        `cannot_continue`, or changes to the run without `allow_changes`,
        listing them.

    """
    if config.algo != saved.algo:
        raise ConfigError(
            f"algo={config.algo!r} differs from the run's algo={saved.algo!r}: a "
            f"{saved.algo} checkpoint cannot continue as {config.algo}; resume "
            f"with --algo {saved.algo} (in Python, the run's own config: "
            "pjd.resume_config(run_dir, {})[0]), or start a new run."
        )
    if config.env.id != saved.env.id:
        raise ConfigError(
            f"env.id={config.env.id!r} differs from the run's {saved.env.id!r}; "
            "a run cannot continue on another environment; start a new run."
        )
    if kept and (why := cannot_continue(saved, config)):
        raise ConfigError(
            f"--resume {run_dir}: {why}; refused even with --override: drop "
            "the change to continue the run, or start a new run with it "
            "(nothing was moved or deleted)."
        )
    changes = config_changes(saved, config)
    binding = binding_changes(saved, config)
    if binding and not allow_changes:
        raise ConfigError(
            f"resuming {str(run_dir)!r} with changes that alter the run ("
            + "; ".join(binding)
            + "); drop them to continue the same run, or add --override "
            "to continue with them (in Python, allow_changes=True to both "
            "resume_config and train)."
        )
    # A resumed run writes into its own folder, whatever run_dir says.
    ignored = f" (ignored: a resumed run writes into {run_dir})"
    return [c + ignored * c.startswith("run_dir:") for c in changes]


def cannot_continue(saved: TrainConfig, config: TrainConfig) -> str | None:
    """Why a checkpoint of `saved` cannot go on as `config`'s run; None if it can.

    Beyond the state's shapes (the checkpointer's layout check): a run counts
    its progress and budget in updates, so the environment steps per update
    must stay; and a device run's checkpoint holds its random keys, which it
    continues, so another seed would change nothing but the record, and
    another key implementation would reread the saved keys. A
    host-environment run draws its keys and environment seeds afresh from
    (seed, update) at each resume (`runners.placement.host_env_seed`): there
    they change the run, as any field does with --override.
    """
    if config.steps_per_update != saved.steps_per_update:
        sizes = ("num_envs", "unroll_length")
        names = [
            f"{n}={getattr(config, n)!r}" for n in sizes if _differs(n, saved, config)
        ]
        return (
            f"{' and '.join(names)} change{'s' * (len(names) == 1)} the "
            "environment steps per update "
            f"(num_envs x unroll_length: {saved.steps_per_update:,} -> "
            f"{config.steps_per_update:,}), and a run counts its progress and "
            "budget in updates of its own size, which a resume cannot change"
        )
    if is_host_env(saved.env.id):
        return None
    keys = [
        f"{n}={getattr(config, n)!r}"
        for n in ("seed", "rng_impl")
        if _differs(n, saved, config)
    ]
    if keys:
        return (
            f"{' and '.join(keys)} differ{'s' * (len(keys) == 1)} from the "
            "checkpoint's, and a "
            "resumed device run continues the random keys its checkpoint "
            f"saved (seed={saved.seed!r}, rng_impl={saved.rng_impl!r}), not "
            "new ones: another seed or key implementation is another run"
        )
    return None


def _differs(name: str, saved: TrainConfig, config: TrainConfig) -> bool:
    return getattr(saved, name) != getattr(config, name)
