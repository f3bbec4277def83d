"""Typed, frozen run configuration; presets from `envs/`; checked overrides.

Every way a config is made (defaults, a preset, a YAML file, the command line)
goes through `apply_overrides` and `validate`, so bad input always ends in a
`ConfigError` that names the value, the rule and the fix.
"""

import dataclasses
import difflib
import importlib.resources
import pathlib
import types
import typing
from collections.abc import Mapping
from typing import Any

import yaml

from purejaxdrl.agents.a2c import A2CConfig
from purejaxdrl.agents.common import OPTIMIZERS
from purejaxdrl.agents.dqn import DQNConfig
from purejaxdrl.agents.impala import IMPALAConfig
from purejaxdrl.agents.ppo import PPOConfig, env_groups
from purejaxdrl.agents.sac import SACConfig
from purejaxdrl.networks import NetworkConfig
from purejaxdrl.observe.evaluation import EvalConfig
from purejaxdrl.rng import RNG_IMPLS
from purejaxdrl.training.checkpoint import CheckpointConfig

ALGOS = ("ppo", "impala", "a2c", "dqn", "apex", "sac")


class ConfigError(ValueError):
    """Bad configuration: the message names the value, the rule and the fix."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class EnvConfig:
    """Which environment to train on.

    Attributes:
      id: a name from `purejaxdrl.env.registered()`, e.g. CartPole-v1, brax/ant.
      options: keyword arguments for the environment (brax: backend,
        episode_length).
      normalize_observations: standardise observations with running statistics.

    """

    id: str = "CartPole-v1"
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    normalize_observations: bool = False


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainConfig:
    """A whole training run.

    Attributes:
      env: the environment.
      algo: the algorithm (its hyper-parameters are in the field of that name).
      ppo: PPO hyper-parameters.
      impala: IMPALA hyper-parameters (V-trace, policy lag).
      a2c: A2C hyper-parameters.
      dqn: DQN hyper-parameters (uniform replay, one annealed ε).
      apex: Ape-X hyper-parameters: the DQN learner with prioritised replay
        and a fixed ε_i per environment.
      sac: SAC hyper-parameters (continuous actions).
      network: network architecture.
      checkpoint: when to save whole-run checkpoints (runs with a run directory).
      eval: evaluation episodes with the deterministic policy (off by default).
      num_envs: number of parallel environments.
      unroll_length: steps per environment between updates.
      total_steps: environment-step budget; training runs
        total_steps // (num_envs * unroll_length) updates.
      seed: random seed.
      rng_impl: key implementation: `fused_threefry` (Threefry-2x32 as one fused
        kernel per call; fastest on CPU), or JAX's `threefry2x32` or `rbg`.
      num_logs: how many times progress is reported (and metrics written).
      scan_unroll: unroll factor of the rollout loop (a CPU speed knob).
      devices: local devices per process to train on; 0 for all of them.
        `num_envs` is global and is split evenly over all devices.
      run_dir: directory under which each run writes its own folder.

    """

    env: EnvConfig = dataclasses.field(default_factory=EnvConfig)
    algo: str = "ppo"
    ppo: PPOConfig = dataclasses.field(default_factory=PPOConfig)
    impala: IMPALAConfig = dataclasses.field(default_factory=IMPALAConfig)
    a2c: A2CConfig = dataclasses.field(default_factory=A2CConfig)
    dqn: DQNConfig = dataclasses.field(default_factory=DQNConfig)
    apex: DQNConfig = dataclasses.field(
        default_factory=lambda: DQNConfig(prioritised=True, per_actor_epsilon=True)
    )
    sac: SACConfig = dataclasses.field(default_factory=SACConfig)
    network: NetworkConfig = dataclasses.field(default_factory=NetworkConfig)
    checkpoint: CheckpointConfig = dataclasses.field(default_factory=CheckpointConfig)
    eval: EvalConfig = dataclasses.field(default_factory=EvalConfig)
    num_envs: int = 4
    unroll_length: int = 128
    total_steps: int = 500_000
    seed: int = 0
    rng_impl: str = "fused_threefry"
    num_logs: int = 20
    scan_unroll: int = 1
    devices: int = 0
    run_dir: str = "runs"

    @property
    def steps_per_update(self) -> int:
        """Environment steps per update: num_envs x unroll_length."""
        return self.num_envs * self.unroll_length

    @property
    def num_updates(self) -> int:
        """Number of updates the budget allows."""
        return self.total_steps // self.steps_per_update


@dataclasses.dataclass(frozen=True)
class Preset:
    """A tuned configuration and the score it must reach within a step budget."""

    name: str
    config: TrainConfig
    target_return: float | None
    target_steps: int | None
    description: str = ""


# ---------------------------------------------------------------- type coercion


def _type_name(hint: Any) -> str:
    return getattr(hint, "__name__", str(hint))


def _is_float_field(hint: Any) -> bool:
    # Dynamic hyper-parameters are annotated `float | jax.Array`.
    return hint is float or (
        isinstance(hint, types.UnionType) and float in typing.get_args(hint)
    )


def _coerce(value: Any, hint: Any, path: str) -> Any:
    """Converts `value` (from YAML or the command line) to the field type `hint`."""

    def fail(kind: str, example: str) -> ConfigError:
        flag = "--" + path.replace("_", "-")
        return ConfigError(
            f"{path}={value!r} is not {kind}; pass e.g. {flag} {example}."
        )

    if isinstance(hint, types.UnionType) and type(None) in typing.get_args(hint):
        if value is None or str(value).strip().lower() in ("none", "null"):
            return None
        (hint,) = (a for a in typing.get_args(hint) if a is not type(None))
    if hint is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "1", "yes", "on"):
            return True
        if text in ("false", "0", "no", "off"):
            return False
        raise fail("a boolean", "true")
    if hint is int:
        if isinstance(value, bool):
            raise fail("an integer", "4")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise fail("an integer", "4") from None
        if not number.is_integer():
            raise fail("an integer", str(int(number) or 1))
        return int(number)
    if _is_float_field(hint):
        if isinstance(value, bool):
            raise fail("a number", "0.001")
        try:
            return float(value)
        except (TypeError, ValueError):
            raise fail("a number", "0.001") from None
    if hint is str:
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise fail("a string", "name")
        return str(value)
    if typing.get_origin(hint) is tuple:
        (item,) = {a for a in typing.get_args(hint) if a is not Ellipsis}
        if isinstance(value, str):
            value = [v for v in value.replace(",", " ").split() if v]
        if not isinstance(value, list | tuple):
            raise fail("a list", "64 64")
        return tuple(_coerce(v, item, path) for v in value)
    if typing.get_origin(hint) is dict:
        if not isinstance(value, Mapping):
            raise fail("a mapping", "key=value")
        return dict(value)
    raise ConfigError(f"{path}: unsupported field type {_type_name(hint)}.")


def _normalize_key(key: str) -> str:
    return key.replace("-", "_")


def apply_overrides(config: Any, overrides: Mapping[str, Any], prefix: str = "") -> Any:
    """Returns `config` with nested `overrides` applied, each value type-checked.

    Args:
      config: a config dataclass instance.
      overrides: field name -> value, or -> a mapping for a nested config.
        Dashes in names are read as underscores.
      prefix: dotted path of `config`, for error messages.

    Raises:
      ConfigError: for an unknown field or a value of the wrong type.

    """
    hints = typing.get_type_hints(type(config))
    names = [f.name for f in dataclasses.fields(config)]
    changes = {}
    for raw_key, value in overrides.items():
        key = _normalize_key(str(raw_key))
        path = f"{prefix}{key}"
        if key not in names:
            close = difflib.get_close_matches(key, names, n=1)
            hint = f"did you mean --{prefix}{close[0]}? " if close else ""
            raise ConfigError(
                f"Unknown config field {path!r}: {hint}"
                "`purejaxdrl train --help` lists every field."
            )
        current = getattr(config, key)
        if dataclasses.is_dataclass(current):
            if not isinstance(value, Mapping):
                raise ConfigError(
                    f"{path}={value!r} must be a mapping of its fields, e.g. "
                    f"{path}: {{...}}; set single fields with --{path}.<field>."
                )
            changes[key] = apply_overrides(current, value, f"{path}.")
        else:
            changes[key] = _coerce(value, hints[key], path)
    return dataclasses.replace(config, **changes)


def flat_fields(config: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    """(dotted path, type hint, current value) of every leaf field of `config`."""
    hints = typing.get_type_hints(type(config))
    out = []
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        path = f"{prefix}{field.name}"
        if dataclasses.is_dataclass(value):
            out.extend(flat_fields(value, f"{path}."))
        else:
            out.append((path, hints[field.name], value))
    return out


def to_dict(config: Any) -> dict[str, Any]:
    """A plain nested dict of `config` (tuples as lists), for YAML and JSON."""

    def plain(x: Any) -> Any:
        if isinstance(x, tuple | list):
            return [plain(v) for v in x]
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        return x

    return plain(dataclasses.asdict(config))


# ------------------------------------------------------------------- validation


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ConfigError(message)


def _check_section(
    name: str, section: Any, *, positive: tuple[str, ...], unit: tuple[str, ...]
) -> None:
    """Range rules of an actor-critic section (IMPALA, A2C) and its optimiser."""
    _check(
        section.optimizer in OPTIMIZERS,
        f"{name}.optimizer={section.optimizer!r} is not one of {OPTIMIZERS}; "
        f"e.g. --{name}.optimizer rmsprop.",
    )
    for field in positive:
        value = float(getattr(section, field))
        _check(
            value > 0,
            f"{name}.{field}={value} must be > 0; pass a positive number.",
        )
    for field in ("entropy_cost", "value_cost"):
        value = float(getattr(section, field))
        _check(value >= 0, f"{name}.{field}={value} must be >= 0.")
    for field in unit:
        value = float(getattr(section, field))
        _check(
            0.0 <= value <= 1.0,
            f"{name}.{field}={value} must be in [0, 1]; e.g. --{name}."
            f"{field.replace('_', '-')} 0.99.",
        )


def _check_dqn(name: str, section: DQNConfig) -> None:
    """Range rules of a DQN / Ape-X section."""
    integers = ("n_step", "buffer_size", "batch_size", "min_replay")
    for field in (*integers, "updates_per_step", "target_every"):
        value = getattr(section, field)
        _check(
            value >= 1,
            f"{name}.{field}={value} must be >= 1; pass a positive integer.",
        )
    _check(
        section.min_replay <= section.buffer_size,
        f"{name}.min_replay={section.min_replay} exceeds {name}.buffer_size="
        f"{section.buffer_size}: learning would never start; lower it.",
    )
    for field in ("learning_rate", "max_grad_norm", "priority_eps"):
        value = float(getattr(section, field))
        _check(value > 0, f"{name}.{field}={value} must be > 0.")
    unit = ("gamma", "epsilon_start", "epsilon_end", "epsilon", "beta_start")
    for field in (*unit, "target_tau"):
        value = float(getattr(section, field))
        _check(
            0.0 <= value <= 1.0,
            f"{name}.{field}={value} must be in [0, 1]; e.g. --{name}."
            f"{field.replace('_', '-')} 0.99.",
        )
    for field in ("epsilon_fraction", "epsilon_alpha", "priority_alpha"):
        value = float(getattr(section, field))
        _check(value >= 0, f"{name}.{field}={value} must be >= 0.")


def validate(config: TrainConfig) -> TrainConfig:
    """Checks every range and divisibility rule; returns `config` unchanged.

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    _check(
        config.algo in ALGOS,
        f"algo={config.algo!r} is not a known algorithm; use one of {ALGOS}.",
    )
    _check(
        config.rng_impl in RNG_IMPLS,
        f"rng_impl={config.rng_impl!r} is not one of {RNG_IMPLS}; pick one of them.",
    )
    for name in ("num_envs", "unroll_length", "num_logs", "scan_unroll"):
        value = getattr(config, name)
        _check(value >= 1, f"{name}={value} must be >= 1; pass a positive integer.")
    _check(
        config.checkpoint.every >= 0,
        f"checkpoint.every={config.checkpoint.every} must be >= 0 (chunks between "
        "checkpoints; 0 saves only at the end and on SIGINT/SIGTERM).",
    )
    _check(
        config.checkpoint.keep >= 1,
        f"checkpoint.keep={config.checkpoint.keep} must be >= 1 (how many of the "
        "newest checkpoints to keep); e.g. --checkpoint.keep 3.",
    )
    for name in ("episodes", "every"):
        value = getattr(config.eval, name)
        _check(
            value >= 0,
            f"eval.{name}={value} must be >= 0 (0 turns evaluation off / evaluates "
            "only at the end); e.g. --eval.episodes 16 --eval.every 5.",
        )
    when = "only at the end" if config.eval.episodes else "never"
    _check(
        config.eval.stop_at is None or (config.eval.episodes and config.eval.every),
        f"eval.stop_at={config.eval.stop_at} stops at an evaluation during "
        f"training, but eval.episodes={config.eval.episodes} and eval.every="
        f"{config.eval.every} evaluate {when}; pass e.g. --eval.episodes 16 "
        "--eval.every 1.",
    )
    _check(
        config.eval.max_steps >= 1,
        f"eval.max_steps={config.eval.max_steps} must be >= 1; e.g. 100000.",
    )
    _check(
        config.devices >= 0,
        f"devices={config.devices} must be >= 0 (0 uses every local device).",
    )
    _check(
        config.total_steps >= config.steps_per_update,
        f"total_steps={config.total_steps} is less than one update "
        f"(num_envs x unroll_length = {config.steps_per_update}); raise "
        "--total-steps or lower --num-envs / --unroll-length.",
    )
    ppo = config.ppo
    for name in ("num_epochs", "num_minibatches"):
        value = getattr(ppo, name)
        _check(value >= 1, f"ppo.{name}={value} must be >= 1; pass a positive integer.")
    # Minibatches take time blocks and, when there are more minibatches than
    # time blocks, groups of environments (see agents.ppo.minibatch_split).
    groups = env_groups(ppo.num_minibatches, config.unroll_length)
    _check(
        config.algo != "ppo" or config.num_envs % groups == 0,
        f"ppo.num_minibatches={ppo.num_minibatches} with unroll_length="
        f"{config.unroll_length} needs num_envs divisible by {groups}, got "
        f"num_envs={config.num_envs}; make num_minibatches a divisor of "
        f"unroll_length or num_envs a multiple of {groups}.",
    )
    positive = ("learning_rate", "clip_eps", "max_grad_norm", "reward_scale", "eps")
    for name in positive:
        value = float(getattr(ppo, name))
        _check(value > 0, f"ppo.{name}={value} must be > 0; pass a positive number.")
    for name in ("entropy_cost", "value_cost"):
        value = float(getattr(ppo, name))
        _check(value >= 0, f"ppo.{name}={value} must be >= 0.")
    for name in ("gamma", "gae_lambda"):
        value = float(getattr(ppo, name))
        _check(
            0.0 <= value <= 1.0,
            f"ppo.{name}={value} must be in [0, 1]; e.g. --ppo.{name} 0.99.",
        )
    _check(
        config.impala.policy_lag >= 0,
        f"impala.policy_lag={config.impala.policy_lag} must be >= 0; pass 0 for "
        "none or a positive number of updates.",
    )
    _check(
        0.0 <= config.impala.replay_ratio < 1.0,
        f"impala.replay_ratio={config.impala.replay_ratio} must be in [0, 1): the "
        "replayed fraction of each learner batch; e.g. 0.5.",
    )
    _check(
        config.impala.replay_ratio == 0 or config.impala.replay_size >= config.num_envs,
        f"impala.replay_size={config.impala.replay_size} holds fewer trajectories "
        f"than one update adds (num_envs={config.num_envs}); raise it.",
    )
    _check_section(
        "impala",
        config.impala,
        positive=("learning_rate", "max_grad_norm", "reward_scale", "eps")
        + ("clip_rho", "clip_c", "clip_pg_rho"),
        unit=("gamma", "vtrace_lambda", "rms_decay"),
    )
    _check_section(
        "a2c",
        config.a2c,
        positive=("learning_rate", "max_grad_norm", "reward_scale", "eps"),
        unit=("gamma", "gae_lambda", "rms_decay"),
    )
    for name in ("dqn", "apex"):
        _check_dqn(name, getattr(config, name))
    sac = config.sac
    for field in ("buffer_size", "batch_size", "min_replay", "updates_per_step"):
        value = getattr(sac, field)
        _check(
            value >= 1, f"sac.{field}={value} must be >= 1; pass a positive integer."
        )
    _check(
        sac.min_replay <= sac.buffer_size,
        f"sac.min_replay={sac.min_replay} exceeds sac.buffer_size={sac.buffer_size}: "
        "learning would never start; lower it.",
    )
    for field in ("learning_rate", "init_alpha", "reward_scale"):
        value = float(getattr(sac, field))
        _check(value > 0, f"sac.{field}={value} must be > 0.")
    for field in ("gamma", "tau"):
        value = float(getattr(sac, field))
        _check(
            0.0 <= value <= 1.0,
            f"sac.{field}={value} must be in [0, 1]; e.g. --sac.{field} 0.99.",
        )
    net = config.network
    _check(
        len(net.hidden_sizes) >= 1 and all(w >= 1 for w in net.hidden_sizes),
        f"network.hidden_sizes={list(net.hidden_sizes)} must be one or more "
        "positive widths, e.g. --network.hidden-sizes 64 64.",
    )
    return config


# ---------------------------------------------------------------------- presets


def presets_dir() -> pathlib.Path:
    """Where presets live: inside the installed package, else the checkout."""
    packaged = pathlib.Path(str(importlib.resources.files("purejaxdrl") / "envs"))
    if packaged.is_dir():
        return packaged
    return pathlib.Path(__file__).resolve().parent.parent / "envs"


def preset_names() -> list[str]:
    """Names of the shipped presets (file names without `.yaml`)."""
    return sorted(p.stem for p in presets_dir().glob("*.yaml"))


def _read_yaml(path: pathlib.Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
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


def load_preset(name: str, algo: str = "ppo") -> Preset:
    """Loads the preset `name` (shipped, or a path to a YAML file) for `algo`.

    Raises:
      ConfigError: for an unknown name, a missing file, bad YAML, a preset
        without a section for `algo`, or a bad field in it.

    """
    path = pathlib.Path(name)
    if path.suffix not in (".yaml", ".yml"):
        path = presets_dir() / f"{name}.yaml"
        if not path.is_file():
            names = preset_names()
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(
                f"Unknown environment preset {name!r}: {hint}choose one of "
                f"{', '.join(names)}, or pass a path to a preset .yaml file."
            )
    elif not path.is_file():
        raise ConfigError(
            f"Preset file {str(path)!r} does not exist; check the path or use a "
            f"shipped preset ({', '.join(preset_names())})."
        )
    _check(
        algo in ALGOS, f"algo={algo!r} is not a known algorithm; use one of {ALGOS}."
    )
    data = _read_yaml(path)
    if not isinstance(data.get("env"), dict) or "id" not in data["env"]:
        raise ConfigError(
            f"Preset {str(path)!r} has no 'env' mapping with an 'id'; add e.g. "
            "env: {id: CartPole-v1}."
        )
    section = data.get(algo)
    if not isinstance(section, dict):
        raise ConfigError(
            f"Preset {str(path)!r} has no '{algo}' section, so it has no tuned "
            f"{algo} settings; add one or pick another --algo."
        )
    section = dict(section)
    target = section.pop("target", None) or {}
    config = apply_overrides(TrainConfig(), {"env": data["env"], "algo": algo})
    config = validate(apply_overrides(config, section))
    return Preset(
        name=path.stem,
        config=config,
        target_return=target.get("mean_return"),
        target_steps=target.get("env_steps"),
        description=str(data.get("description", "")).strip(),
    )
