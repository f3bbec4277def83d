"""A preset's algorithm sections: the target each may carry, and a user's algorithm's.

No shipped preset tunes a user's algorithm. A variant of a built-in one reads
the built-in's section (its record's `preset_section`): the run fields, and
the built-in's hyper-parameters as its own. Any other runs on its own
defaults, and a `SetupWarning` says which of the preset's tuned settings it
does not take, and how to take them.
"""

import dataclasses
import difflib
import pathlib
from typing import Any

from purejaxdrl.agents.base import Algorithm
from purejaxdrl.agents.registry import algorithm, names, registered_by_user
from purejaxdrl.config import ConfigError, nested_overrides
from purejaxdrl.setup_warnings import warn_once

TARGET_KINDS = ("training", "evaluation")
TARGET_KEYS = ("mean_return", "env_steps", "of", "measured")


def user_section(
    name: str, path: pathlib.Path, data: dict[str, Any], algo: str
) -> tuple[dict[str, Any], str]:
    """(section, the preset's section it is read from) for the user's `algo`.

    For a preset (`name`, read from `path` into `data`) without an `algo`
    section. Where `algo`'s record names a `preset_section` the preset has,
    it is that section with the built-in's hyper-parameters as `algo`'s, and
    without its target (a score measured for the built-in). Otherwise {}
    (`algo`'s defaults) and "", with a SetupWarning (once per preset and
    algorithm) where the preset tunes other algorithms.

    Raises:
      ConfigError: for a hyper-parameter of the section read that `algo`'s
        config type has no field for, or a `preset_section` section that is
        no mapping (a list, say: the built-in's run refuses it too).

    """
    record = algorithm(algo)
    base = record.preset_section
    section = None if base is None else data.get(base)
    if base is not None and isinstance(section, dict):
        return _read_as(name, section, base, record), base
    if section is not None:  # refused, as the built-in's own run refuses it
        raise ConfigError(
            f"Preset {str(path)!r}: its '{base}' section (which {algo} reads, its "
            f"preset_section) is a {type(section).__name__}, not a mapping; write "
            f"it as {base}: {{num_envs: 4, ...}}."
        )
    _warn_untuned(name, path, data, record)
    return {}, ""


def _read_as(
    name: str, section: dict[str, Any], base: str, record: Algorithm
) -> dict[str, Any]:
    """The built-in `base`'s `section`, its hyper-parameters `record`'s."""
    try:  # a field set twice (dotted and nested), named with the file
        nested = nested_overrides(section)
        params = nested.pop(base, None)
        if isinstance(params, dict):
            params = nested_overrides(params, f"{base}.")
    except ConfigError as e:
        where = f"section {base} (read by {record.name})"
        raise ConfigError(f"Preset {name!r}, {where}: {e}") from None
    nested.pop("target", None)
    if isinstance(params, dict):
        fields = {f.name for f in dataclasses.fields(record.config_type)}
        missing = [f"{base}.{key}" for key in params if key not in fields]
        if missing:
            kind = record.config_type.__name__
            what = "no field" if len(missing) == 1 else "none of them fields"
            them = "that field" if len(missing) == 1 else "those fields"
            raise ConfigError(
                f"Preset {name!r}: {record.name} reads its {base} section "
                f"(preset_section={base!r}), which sets {', '.join(missing)}, "
                f"{what} of {kind}; give {kind} {them} (derive it from "
                f"{algorithm(base).config_type.__name__}), or register "
                f"{record.name} without preset_section and set its fields yourself."
            )
    if params is not None:  # not a mapping: refused as the built-in's would be
        nested[record.name] = params
    return nested


def _warn_untuned(
    name: str, path: pathlib.Path, data: dict[str, Any], record: Algorithm
) -> None:
    """Warns that `record`'s run takes none of the preset's tuned settings."""
    sections = [key for key in data if key in names() and isinstance(data[key], dict)]
    if not sections:
        return  # a preset of an environment alone: nothing tuned is left out
    fields: list[str] = []
    flags: list[str] = []  # each field's flag, `--network.*` for a mapping's
    for section in sections:
        for key, value in data[section].items():
            field, dot, _ = str(key).replace("-", "_").partition(".")
            if field != "target" and field not in names() and field not in fields:
                fields.append(field)
                nested = ".*" if dot or isinstance(value, dict) else ""
                flags.append(f"--{field.replace('_', '-')}{nested}")
    algo, base = record.name, record.preset_section
    built_in = set(names()) - {r.name for r in registered_by_user()}
    missing = f"no {algo} section"
    fix = (
        f"set them yourself ({', '.join(flags)} on the command line; "
        "apply_overrides in Python)"
    )
    if base is not None:
        missing += f" nor a {base} section (its preset_section)"
        fix = f"pick a preset with a {base} section (purejaxdrl list), or {fix}"
    elif kin := [s for s in sections if s in built_in and _derived(record, s)]:
        fix = (
            f"to read its {kin[0]} section, register {algo} with "
            f"preset_section={kin[0]!r}, or {fix}"
        )
    warn_once(
        f"Preset {name!r} has {missing}: {algo} trains with its own defaults, "
        f"and the preset's tuned run fields ({', '.join(fields)}) and sections "
        f"({', '.join(sections)}) are not applied; {fix}.",
        key=("no preset section", str(path.resolve()), algo),
    )


def _derived(record: Algorithm, section: str) -> bool:
    """Whether `record`'s config type is the algorithm `section`'s, or a subclass."""
    kind = algorithm(section).config_type
    return isinstance(record.config_type, type) and issubclass(record.config_type, kind)


def check_target(path: pathlib.Path, algo: str, target: Any) -> dict[str, Any]:
    """The section's target block, checked: {} where it has none."""
    where = f"Preset {str(path)!r}: {algo}.target"
    example = "e.g. target: {mean_return: 475, env_steps: 500000, of: training}"
    if target is None:
        return {}
    if not isinstance(target, dict):
        raise ConfigError(f"{where}={target!r} is not a mapping; {example}.")
    for key in target:
        if key not in TARGET_KEYS:
            close = difflib.get_close_matches(str(key), TARGET_KEYS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(
                f"{where} has unknown key {key!r}; {hint}its keys are "
                f"{', '.join(TARGET_KEYS)}."
            )
    for key in ("mean_return", "env_steps"):
        if key not in target:
            raise ConfigError(f"{where} has no {key}; {example}.")
    ret = target["mean_return"]
    if isinstance(ret, bool) or not isinstance(ret, int | float) or ret != ret:
        raise ConfigError(f"{where}.mean_return={ret!r} is not a number; {example}.")
    if abs(ret) == float("inf"):
        raise ConfigError(f"{where}.mean_return={ret!r} is not finite; {example}.")
    steps = target["env_steps"]
    if isinstance(steps, float) and steps.is_integer():
        steps = target["env_steps"] = int(steps)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps <= 0:
        raise ConfigError(
            f"{where}.env_steps={steps!r} is not a positive integer; {example}."
        )
    of = target.get("of", "training")
    if of not in TARGET_KINDS:
        raise ConfigError(
            f"{where}.of={of!r} is not one of {TARGET_KINDS}; say which return "
            "the target is, e.g. of: training."
        )
    if not isinstance(target.get("measured", True), bool):
        raise ConfigError(
            f"{where}.measured={target['measured']!r} is not true or false; "
            "measured: false marks a target no run here has checked yet."
        )
    return target
