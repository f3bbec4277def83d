"""Presets: tuned configs from `envs/*.yaml`, with the score each must reach."""

import dataclasses
import difflib
import os
import pathlib
from typing import Any

from purejaxdrl.agents.registry import DEFAULT_ALGO, algorithm, registered_by_user
from purejaxdrl.config import ConfigError, apply_overrides, nested_overrides
from purejaxdrl.config_docs import in_yaml
from purejaxdrl.env.imports import import_modules
from purejaxdrl.training.config import TrainConfig, config_class, validate
from purejaxdrl.training.presets.choice import env_id_hint
from purejaxdrl.training.presets.files import (  # noqa: F401 (public here too)
    check_top_level,
    file_here,
    preset_algorithms,
    preset_names,
    presets_dir,
    presets_with,
    read_yaml,
    shipped_like,
    top_level_hint,
)
from purejaxdrl.training.presets.no_section import (  # noqa: F401 (public here too)
    NoSectionError,
    no_section,
)
from purejaxdrl.training.presets.sections import check_target, user_section

# How `list` and the training summary mark a `measured: false` target.
UNMEASURED = "(published figure or estimate, not yet measured over seeds here)"
# How they say to check an evaluation target of a section that does not
# evaluate (what scripts/reproduce.py's rows evaluate with).
CHECK_EVALUATION = "--eval.episodes 32"


@dataclasses.dataclass(frozen=True)
class Preset:
    """A tuned configuration and the score it must reach within a step budget.

    `target_of` says which return `target_return` is: "training" (the mean
    return of the training episodes that ended in the run's last chunk, what
    `TrainResult.mean_return` reports) or "evaluation" (the deterministic
    policy's, `TrainResult.eval_return`). `tuned` is False where the preset
    has no section for the algorithm (a user's): its settings are the
    algorithm's own defaults. `target_measured` is False where the target
    is a published figure or a guess that no run here has checked yet
    (`measured: false` in the preset's target). `section` is the preset's
    section the config was read from: the algorithm's own, the built-in's
    its record's `preset_section` names (then `tuned`, with no target), or
    "" (its defaults).
    """

    name: str
    config: TrainConfig
    target_return: float | None
    target_steps: int | None
    description: str = ""
    target_of: str = "training"
    tuned: bool = True
    target_measured: bool = True
    section: str = ""


def load_preset(name: str, algo: str = DEFAULT_ALGO) -> Preset:
    """Loads the preset `name` (shipped, or a path to a YAML file) for `algo`.

    The config is validated (`validate`); an error of it names the preset and
    section. A user's algorithm (`agents.registry.register`, perhaps by a module of the
    preset's `env.imports`, imported first) takes its section where the
    preset has one; else the section of the built-in its record's
    `preset_section` names (`Preset.section`), with no target; else its own
    defaults, with no target and a SetupWarning naming the tuned settings it
    leaves (`training.presets.sections`).

    Args:
      name: a shipped preset's name (`purejaxdrl list` lists them), or the
        path of a preset's YAML file (.yaml or .yml).
      algo: the algorithm whose section to load (`--algo`), default "ppo".

    Returns:
      The Preset: its `config` (a TrainConfig) and the target its section
      must reach (`target_return` within `target_steps`).

    Examples:
      More in docs/guide/presets-and-training.md.

      >>> import purejaxdrl as pjd
      >>> config = pjd.load_preset("cartpole", "dqn").config
      >>> result = pjd.train(config)

    Raises:
      NoSectionError: (a ConfigError) for a built-in `algo` the preset has
        no section for; its `.untuned` is the preset's environment with
        `algo`'s own, untuned defaults (what `--help` then shows): a config
        `train` takes, e.g. `except NoSectionError as e: config = e.untuned`
        (the command line refuses it: its fix is a preset with the section).
      ConfigError: for an unknown name, a missing file, bad YAML, or a bad
        field in the preset (a hyper-parameter of a `preset_section` that
        the user's config type lacks too).

    """
    preset = read_preset(name, algo)
    try:
        validate(preset.config)
    except ConfigError as e:
        raise ConfigError(f"{preset_fault(name, algo)}{in_yaml(str(e))}") from None
    return preset


def preset_fault(name: str, algo: str) -> str:
    """How an error of preset `name`'s `algo` section begins: it names the file."""
    return f"Preset {name!r}, section {algo}: "


def read_preset(name: str, algo: str = DEFAULT_ALGO) -> Preset:
    """`load_preset`'s preset, its config not yet validated.

    For a command line, whose flags may complete a preset that is incomplete
    alone (`--eval.episodes` for a section's `eval.stop_at`): it validates the
    run's config, the preset with the flags, once. Its fields are converted
    to their types and its shape checked; `load_preset` says what it raises.
    """
    path = _preset_path(name, algo)
    data = read_yaml(path)
    _check_env_block(path, data)
    imports = data["env"].get("imports")  # they may register `algo`: first
    if isinstance(imports, list):
        import_modules([str(m) for m in imports], f"{str(path)!r}'s env.imports")
    algorithm(algo)  # ConfigError for an unknown name
    check_top_level(path, data)  # after the imports: they may add algorithms
    try:  # a value the file's env block cannot take: named with the file
        env = {"env": data["env"], "algo": algo}
        config = apply_overrides(config_class()(), env, read_texts=False)
    except ConfigError as e:
        raise ConfigError(f"{preset_fault(name, 'env')}{in_yaml(str(e))}") from None
    section, read = data.get(algo), algo
    if section is None and algo in {r.name for r in registered_by_user()}:
        # No shipped preset tunes a user's algorithm: a built-in's, or its defaults.
        section, read = user_section(name, path, data, algo)
    tuned = section is not None and read != ""
    if section is not None and not isinstance(section, dict):
        raise ConfigError(
            f"Preset {str(path)!r}: its '{algo}' section is a "
            f"{type(section).__name__}, not a mapping; write it as {algo}: "
            "{num_envs: 4, ...}."
        )
    if not isinstance(section, dict):
        raise no_section(path, algo, config, data)
    _refuse_misspelt_target(name, algo, section, config)
    target = check_target(path, algo, section.get("target"))
    of = target.get("of", "training")
    try:  # a value the section cannot take (num_epochs: abc), as validate's
        section = _with_file_options(config.env, dict(section))
        section.pop("target", None)
        config = apply_overrides(config, section, read_texts=False)
    except ConfigError as e:
        where = algo if read in ("", algo) else f"{read} (read by {algo})"
        raise ConfigError(f"{preset_fault(name, where)}{in_yaml(str(e))}") from None
    return Preset(
        name=path.stem,
        config=config,
        target_return=target.get("mean_return"),
        target_steps=target.get("env_steps"),
        description=str(data.get("description", "")).strip(),
        target_of=of,
        tuned=tuned,
        target_measured=target.get("measured", True),
        section=read,
    )


def _preset_path(name: str, algo: str) -> pathlib.Path:
    """The file of preset `name` (shipped, or a path); a ConfigError if none."""
    path = pathlib.Path(name)
    if path.suffix not in (".yaml", ".yml"):
        path = presets_dir() / f"{name}.yaml"
        if not path.is_file():
            names = preset_names()
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            choose = f"choose one of {', '.join(names)}, or pass a path to a preset"
            raise ConfigError(
                env_id_hint(name, algo)
                or f"Unknown environment preset {name!r}: "
                f"{file_here(name) or hint + choose + ' .yaml file'}."
            )
    elif not path.is_file():
        if shipped := shipped_like(name):
            of = ("closest to that name", "of that name")
            raise ConfigError(
                f"Preset file {str(path)!r} does not exist here ({os.getcwd()}); "
                f"the shipped preset {of[path.stem == shipped]} is --env {shipped} "
                f"(pjd.load_preset({shipped!r}) in Python)."
            )
        raise ConfigError(
            f"Preset file {str(path)!r} does not exist; check the path or use a "
            f"shipped preset ({', '.join(preset_names())})."
        )
    return path


def _check_env_block(path: pathlib.Path, data: dict[str, Any]) -> None:
    """Refuses a preset without an `env:` mapping with an id (or misspelt)."""
    for key in [] if "env" in data else data:  # `enviroment:`, `Env:`: env's
        if top_level_hint(key, ["env", "environment"]):
            raise ConfigError(
                f"Preset {str(path)!r}: unknown top-level key {key!r}; did you "
                "mean 'env'? A preset's environment is its env: mapping (env: "
                "{id: CartPole-v1})."
            )
    if not isinstance(data.get("env"), dict) or "id" not in data["env"]:
        raise ConfigError(
            f"Preset {str(path)!r} has no 'env' mapping with an 'id'; add e.g. "
            "env: {id: CartPole-v1}."
        )


def _refuse_misspelt_target(name: str, algo: str, section: dict, config: Any) -> None:
    """Refuses `taget:` in a section: the preset's own key, no config field, meant."""
    fields = [f.name for f in dataclasses.fields(config)]
    for key in section:
        if key in fields or key == "target":
            continue
        if difflib.get_close_matches(str(key), [*fields, "target"], n=1) == ["target"]:
            raise ConfigError(
                f"{preset_fault(name, algo)}unknown key {key!r}: did you mean "
                "target (the section's target score, e.g. target: {mean_return: "
                "475, env_steps: 500000, of: training})?"
            )


def _with_file_options(file_env: Any, section: dict[str, Any]) -> dict[str, Any]:
    """`section` with its `env.options` added to the file's (`file_env`'s).

    As `--env.option` adds to a preset's options, so does a section's `env:`
    block (or dotted `env.options:` key) to its file's: a time limit of the
    file stays unless the section sets it. A section that names another `id`
    keeps its options alone (the file's are that id's: `EnvConfig`'s tied
    fields).
    """
    # Read as apply_overrides reads it: `env.options: {...}` and `env:
    # {options.gravity: ...}` are `env: {options: {...}}` (a dotted key
    # replaced the file's options whole); a field set twice is refused.
    nested = nested_overrides(section)
    env = nested.get("env")
    env = nested_overrides(env, "env.") if isinstance(env, dict) else env
    if not (isinstance(env, dict) and isinstance(env.get("options"), dict)):
        return section
    if str(env.get("id", file_env.id)) != file_env.id:
        return section
    options = {**file_env.options, **env["options"]}
    return {**nested, "env": {**env, "options": options}}
