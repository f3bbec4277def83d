"""The preset files: where the shipped ones are, reading one, its top level.

Below `load`, which reads a file's sections into a config, and
`choice`, which picks the preset a command starts from: a misplaced
key or a run's config.yaml passed as a preset is refused here.
"""

import copy
import difflib
import importlib.resources
import pathlib
from typing import Any

import yaml

from purejaxdrl.config import ConfigError
from purejaxdrl.yaml_text import RepeatedKeyError, load_yaml


def presets_dir() -> pathlib.Path:
    """Where presets live: inside the installed package, else the checkout."""
    packaged = pathlib.Path(str(importlib.resources.files("purejaxdrl") / "envs"))
    if packaged.is_dir():
        return packaged
    return pathlib.Path(__file__).resolve().parents[3] / "envs"


def preset_names() -> list[str]:
    """Names of the shipped presets (file names without `.yaml`).

    Returns:
      The names, sorted: each one `load_preset` takes.

    Examples:
      >>> import purejaxdrl as pjd
      >>> "cartpole" in pjd.preset_names()
      True
      >>> presets = [pjd.load_preset(name) for name in pjd.preset_names()]

    """
    return sorted(p.stem for p in presets_dir().glob("*.yaml"))


def presets_with(algo: str) -> list[str]:
    """Names of the shipped presets that have a section for `algo`."""
    return [
        name
        for name in preset_names()
        if isinstance(read_yaml(presets_dir() / f"{name}.yaml").get(algo), dict)
    ]


def preset_algorithms(name: str) -> list[str]:
    """The built-in algorithms preset `name` has sections for, in file order.

    `name` is a shipped preset's, or a path to a .yaml file.
    """
    from purejaxdrl.agents.registry import names

    path = pathlib.Path(name)
    if path.suffix not in (".yaml", ".yml"):
        path = presets_dir() / f"{name}.yaml"
    data = read_yaml(path)
    return [key for key in data if key in names() and isinstance(data[key], dict)]


def read_yaml(path: pathlib.Path) -> dict[str, Any]:
    """A preset file's mapping, or a ConfigError naming the file and the fault.

    Each file is parsed once while it is unchanged: choosing a preset for
    `--env.id X` reads every shipped preset, and YAML parsing is slow enough
    (141 parses took a second) for a newcomer to wait on. A copy is returned,
    so a caller may change it.
    """
    stat = path.stat() if path.is_file() else None
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size) if stat else None
    if key not in _PARSED:
        data = _parse(path)
        if key is None:
            return data
        _PARSED[key] = data
    return copy.deepcopy(_PARSED[key])


# Parsed preset files by (resolved path, modification time, size).
_PARSED: dict[tuple[str, int, int], dict[str, Any]] = {}


def _parse(path: pathlib.Path) -> dict[str, Any]:
    try:
        # Exponent notation (`1e3`) is a float, as on the command line:
        # `env.options` values are not converted by a field's type.
        data = load_yaml(path.read_text())
    except RepeatedKeyError as e:  # the later value would win, unsaid
        raise ConfigError(f"Preset {str(path)!r} line {e.line}: {e}.") from None
    except yaml.YAMLError as e:
        where = getattr(e, "problem_mark", None)
        line = f" at line {where.line + 1}" if where else ""
        raise ConfigError(
            f"Preset {str(path)!r} is not valid YAML{line}; fix the file's syntax."
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"Preset {str(path)!r} must be a YAML mapping with 'env' and per-"
            "algorithm sections; see envs/cartpole.yaml."
        )
    return data


def check_top_level(path: pathlib.Path, data: dict[str, Any]) -> None:
    """Refuses a top-level key that is neither env, description nor an algorithm."""
    from purejaxdrl.agents.registry import names

    allowed = ["env", "description", *names()]
    if "algo" in data and {"seed", "total_steps"} <= set(data):
        _refuse_run_config(path, data)
    for key in data:
        if key in allowed:
            continue
        raise ConfigError(
            f"Preset {str(path)!r}: unknown top-level key {key!r}; "
            f"{top_level_hint(key, allowed)}"
            "top-level keys are env, description and algorithm names; run "
            "fields go inside an algorithm's section (ppo: {num_envs: ...})."
        )


def top_level_hint(key: Any, allowed: list[str]) -> str:
    """`did you mean 'ppo'? ` for a top-level `key` of a preset (`PPO`), or ""."""
    lower = {name.lower(): name for name in allowed}
    close = difflib.get_close_matches(str(key).lower(), list(lower), n=1)
    return f"did you mean {lower[close[0]]!r}? " if close else ""


def _refuse_run_config(path: pathlib.Path, data: dict[str, Any]) -> None:
    """Refuses a run's config.yaml as a preset, saying how to rerun it."""
    run = str(path.parent) if path.name == "config.yaml" else "RUN_DIR"
    raise ConfigError(
        f"Preset {str(path)!r} is a run's resolved config (algo: {data['algo']}, "
        "seed, total_steps), not a preset; rerun it as a new run in Python "
        f"(`config, _ = pjd.resume_config({run!r}, {{'seed': 1}}, "
        "allow_changes=True); pjd.train(config)`), continue that run with "
        f"`purejaxdrl train --resume {run}`, or copy its env and fields into a "
        f"preset (env: {{id: ...}}, {data['algo']}: {{...}}) for --env."
    )


def file_here(name: str) -> str:
    """For `--env my4`, with my4.yaml in the working folder: the flag meant; or ""."""
    for suffix in (".yaml", ".yml"):
        if pathlib.Path(f"{name}{suffix}").is_file():
            return (
                f"{name}{suffix} is here: --env {name}{suffix} (a file with its suffix)"
            )
    return ""


def shipped_like(path: str) -> str:
    """For a preset file path that does not exist: the shipped preset of its stem.

    `envs/cartpole.yaml` outside a clone: `cartpole`; `envs/cartpol.yml`:
    `cartpole` too (the closest name). "" where none is close.
    """
    stem = pathlib.Path(path).stem
    names = preset_names()
    close = difflib.get_close_matches(stem.lower(), names, n=1)
    return stem if stem in names else (close[0] if close else "")
