"""What a sweep runs: grids and random ranges over config fields, times seeds.

A sweep is a base TrainConfig, a grid (field -> values, the Cartesian product is
taken), optional random search (field -> log-uniform or uniform range, sampled
`num_samples` times) and a list of seeds. Every setting is built with
`apply_overrides` and checked with `validate`, so a bad value fails before
anything compiles, with a message that names the field and the rule.

Fields of the algorithm's config that are array leaves (learning rate, gamma,
clip, entropy cost, ...) are *dynamic*: all their values train in one compiled
program. Every other field (num_envs, epochs, network sizes, ...) is *static*:
each of its values is a program of its own.
"""

import dataclasses
import difflib
import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import yaml

from purejaxdrl.agents.registry import algorithm, names
from purejaxdrl.config import ConfigError, apply_overrides, flat_fields
from purejaxdrl.training.config import TrainConfig, validate

DISTRIBUTIONS = ("loguniform", "uniform")

# Fields a sweep may not vary, and why.
_NOT_SWEPT = {
    "algo": "a sweep trains one algorithm; run one sweep per --algo",
    "seed": "seeds are their own axis: pass seeds=N (--seeds N) or a list",
    "devices": "it does not change what a run learns; pass --devices once",
    "run_dir": "it does not change what a run learns",
    "num_logs": "it does not change what a run learns; pass --num-logs once",
}


@dataclasses.dataclass(frozen=True)
class Field:
    """A config field a sweep varies.

    Attributes:
      path: dotted path in TrainConfig, e.g. `ppo.learning_rate`.
      dynamic: an array leaf of the algorithm's config (vmapped in one program)
        rather than a static field (one program per value).

    """

    path: str
    dynamic: bool


@dataclasses.dataclass(frozen=True)
class SweepPlan:
    """The settings and seeds of a sweep, every one validated.

    Attributes:
      base: the config every setting starts from.
      fields: the varied fields, grid fields first, then sampled ones.
      settings: per setting, {field path: value}.
      configs: per setting, the full TrainConfig (with the base's seed).
      seeds: the seeds every setting is trained with.

    """

    base: TrainConfig
    fields: tuple[Field, ...]
    settings: tuple[dict[str, Any], ...]
    configs: tuple[TrainConfig, ...]
    seeds: tuple[int, ...]

    @property
    def num_runs(self) -> int:
        """Settings x seeds."""
        return len(self.settings) * len(self.seeds)

    def run(self, index: int) -> tuple[int, int]:
        """(setting index, seed) of run `index`; runs go setting-major."""
        setting, s = divmod(index, len(self.seeds))
        return setting, self.seeds[s]

    def run_config(self, index: int) -> TrainConfig:
        """The TrainConfig of run `index`, to train it alone with `train`."""
        setting, seed = self.run(index)
        return dataclasses.replace(self.configs[setting], seed=seed)

    def static_groups(self) -> list[list[int]]:
        """Run indices grouped by their static fields: one program per group."""
        groups: dict[str, list[int]] = {}
        for i in range(self.num_runs):
            groups.setdefault(static_key(self.run_config(i)), []).append(i)
        return list(groups.values())


def _dynamic_names(config: TrainConfig) -> list[str]:
    section = getattr(config, config.algo)
    return [f.name for f in dataclasses.fields(section) if not f.metadata.get("static")]


def static_key(config: TrainConfig) -> str:
    """What decides a run's compiled program: every field but the dynamic ones.

    Runs with equal keys differ only in array leaves and seeds, so they train
    in one program.
    """
    section = getattr(config, config.algo)
    zeroed = dataclasses.replace(section, **dict.fromkeys(_dynamic_names(config), 0.0))
    return repr(dataclasses.replace(config, seed=0, **{config.algo: zeroed}))


def resolve_field(base: TrainConfig, name: str) -> Field:
    """The field a sweep name refers to.

    Names of the algorithm's own fields may be given bare (`learning_rate` is
    `ppo.learning_rate` in a PPO sweep); others are dotted paths
    (`network.hidden_sizes`) or top-level names (`num_envs`).

    Raises:
      ConfigError: for an unknown field, another algorithm's field, or one a
        sweep may not vary.

    """
    name = name.strip().replace("-", "_")
    algo = base.algo
    paths = {path: value for path, _, value in flat_fields(base)}
    dynamic = {f"{algo}.{n}" for n in _dynamic_names(base)}
    path = f"{algo}.{name}" if f"{algo}.{name}" in paths else name
    top = path.split(".")[0]
    if top in _NOT_SWEPT:
        raise ConfigError(f"sweep field {name!r} cannot be swept: {_NOT_SWEPT[top]}.")
    if top in names() and top != algo:
        raise ConfigError(
            f"sweep field {name!r} belongs to {top}, and a sweep of {algo} does "
            f"not use it; sweep {algo}'s fields (e.g. learning_rate) or pass "
            f"--algo {top}."
        )
    if top == "checkpoint":
        raise ConfigError(f"sweep field {name!r}: sweeps do not checkpoint.")
    if path not in paths:
        bare = [p.removeprefix(f"{algo}.") for p in paths]
        close = difflib.get_close_matches(name, bare, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(
            f"Unknown sweep field {name!r}: {hint}`purejaxdrl train --help` lists "
            f"every field ({algo}'s may be given without '{algo}.')."
        )
    return Field(path, path in dynamic)


def _nested(path: str, value: Any) -> dict[str, Any]:
    *parents, leaf = path.split(".")
    node: dict[str, Any] = {leaf: value}
    for p in reversed(parents):
        node = {p: node}
    return node


def setting_config(base: TrainConfig, setting: Mapping[str, Any]) -> TrainConfig:
    """`base` with a setting's {field path: value} applied (not validated)."""
    config = base
    for path, value in setting.items():
        config = apply_overrides(config, _nested(path, value))
    return config


def _checked(base: TrainConfig, field: Field, value: Any, source: str) -> Any:
    """`value` coerced to the field's type and validated; ConfigError otherwise."""
    try:
        config = validate(apply_overrides(base, _nested(field.path, value)))
    except ConfigError as e:
        raise ConfigError(f"{source} {field.path}: {e}") from None
    node: Any = config
    for part in field.path.split("."):
        node = getattr(node, part)
    return node


def parse_grid_arg(text: str) -> tuple[str, list[Any]]:
    """`learning_rate=1e-4,3e-4` -> ("learning_rate", ["1e-4", "3e-4"]).

    A value list in brackets is read as YAML, for fields that are lists
    themselves: `network.hidden_sizes=[[64,64],[256,256]]`.

    Raises:
      ConfigError: without `=`, or with no values.

    """
    name, sep, values = text.partition("=")
    if not sep or not name.strip():
        raise ConfigError(
            f"--grid {text!r} is not FIELD=V1,V2,...; e.g. --grid "
            "learning_rate=1e-4,3e-4."
        )
    values = values.strip()
    if values.startswith("["):
        try:
            items = yaml.safe_load(values)
        except yaml.YAMLError:
            items = None
        if not isinstance(items, list):
            raise ConfigError(
                f"--grid {text!r}: {values!r} is not a YAML list; e.g. "
                "network.hidden_sizes=[[64,64],[256,256]]."
            )
        return name.strip(), items
    return name.strip(), [v.strip() for v in values.split(",") if v.strip()]


def parse_sample_arg(text: str) -> tuple[str, tuple[str, float, float]]:
    """`learning_rate=loguniform:1e-5:1e-3` -> (name, ("loguniform", 1e-5, 1e-3)).

    Raises:
      ConfigError: for any other form.

    """
    name, sep, spec = text.partition("=")
    parts = spec.split(":")
    example = "e.g. --sample learning_rate=loguniform:1e-5:1e-3"
    if not sep or not name.strip() or len(parts) != 3:
        raise ConfigError(f"--sample {text!r} is not FIELD=KIND:LOW:HIGH; {example}.")
    try:
        low, high = float(parts[1]), float(parts[2])
    except ValueError:
        raise ConfigError(
            f"--sample {text!r}: LOW and HIGH must be numbers; {example}."
        ) from None
    return name.strip(), (parts[0].strip(), low, high)


def _draw(
    rng: np.random.Generator, kind: str, low: float, high: float, n: int
) -> np.ndarray:
    if kind == "loguniform":
        return np.exp(rng.uniform(math.log(low), math.log(high), n))
    return rng.uniform(low, high, n)


def make_plan(
    base: TrainConfig,
    *,
    grid: Mapping[str, Sequence[Any]] | None = None,
    sample: Mapping[str, tuple[str, float, float]] | None = None,
    num_samples: int = 0,
    seeds: int | Sequence[int] = 1,
    search_seed: int = 0,
) -> SweepPlan:
    """Expands grids, random ranges and seeds into validated settings.

    Args:
      base: the config every setting starts from (a preset's, usually).
      grid: field -> values; the sweep trains the Cartesian product.
      sample: field -> (kind, low, high), kind in DISTRIBUTIONS; dynamic fields
        only. Each of `num_samples` draws picks every sampled field at once.
      num_samples: how many random draws (required with `sample`).
      seeds: a count N (seeds base.seed ... base.seed + N - 1) or a list.
      search_seed: seeds the random search (not the runs).

    Returns:
      The SweepPlan: settings grid-major, draws innermost.

    Raises:
      ConfigError: an unknown field, a value of the wrong type or out of range,
        an empty grid, a bad range, or bad seeds; naming the field and the rule.

    """
    grid = dict(grid or {})
    sample = dict(sample or {})
    validate(base)
    if isinstance(seeds, int):
        if seeds < 1:
            raise ConfigError(f"seeds={seeds} must be >= 1; e.g. --seeds 8.")
        seeds = [base.seed + i for i in range(seeds)]
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ConfigError(
            f"seeds={seeds} must be one or more distinct integers; e.g. --seeds 8."
        )

    fields: list[Field] = []
    grid_values: list[list[Any]] = []
    for name, values in grid.items():
        field = resolve_field(base, name)
        if field.path in {f.path for f in fields}:
            raise ConfigError(f"sweep field {field.path!r} is given twice; merge them.")
        if isinstance(values, str) or not isinstance(values, Sequence):
            values = [values]
        if not values:
            raise ConfigError(
                f"--grid {name}: the grid is empty; give one or more values, e.g. "
                f"--grid {name}=V1,V2."
            )
        checked = [_checked(base, field, v, "--grid") for v in values]
        if len(set(map(repr, checked))) != len(checked):
            raise ConfigError(
                f"--grid {name}: values {checked} repeat; list each value once."
            )
        fields.append(field)
        grid_values.append(checked)

    draws: list[dict[str, Any]] = [{}]
    if sample:
        rng = np.random.default_rng(search_seed)
        columns: dict[str, np.ndarray] = {}
        for name, spec in sample.items():
            field = resolve_field(base, name)
            if field.path in {f.path for f in fields}:
                raise ConfigError(
                    f"sweep field {field.path!r} is both gridded and sampled; pick one."
                )
            if not field.dynamic:
                raise ConfigError(
                    f"--sample {name}: {field.path} is static (it changes shapes or "
                    "loop counts, one program per value); sample only dynamic "
                    "fields and --grid static ones."
                )
            kind, low, high = spec
            if kind not in DISTRIBUTIONS:
                raise ConfigError(
                    f"--sample {name}: {kind!r} is not one of {DISTRIBUTIONS}; e.g. "
                    f"{name}=loguniform:1e-5:1e-3."
                )
            if not low < high or (kind == "loguniform" and low <= 0):
                raise ConfigError(
                    f"--sample {name}: range [{low}, {high}] must have LOW < HIGH"
                    f"{' and LOW > 0 for loguniform' if kind == 'loguniform' else ''}."
                )
            for end in (low, high):
                _checked(base, field, end, "--sample")
            fields.append(field)
            columns[field.path] = _draw(rng, kind, low, high, num_samples)
        if num_samples < 1:
            raise ConfigError(
                f"num_samples={num_samples}: random search needs at least one draw; "
                "pass --samples N with --sample."
            )
        draws = [
            {path: float(col[j]) for path, col in columns.items()}
            for j in range(num_samples)
        ]
    elif num_samples:
        raise ConfigError(
            f"num_samples={num_samples} without a range to sample; pass --sample "
            "FIELD=KIND:LOW:HIGH, or drop --samples."
        )

    paths = [f.path for f in fields[: len(grid_values)]]
    settings = [
        {**dict(zip(paths, combo, strict=True)), **draw}
        for combo in itertools.product(*grid_values)
        for draw in draws
    ]
    configs = [validate(setting_config(base, s)) for s in settings]
    for config in configs:
        if algorithm(config.algo).keeps_replay(getattr(config, config.algo)):
            # Their replay buffer is per-device state outside the sweep's layout.
            raise ConfigError(
                f"algo={config.algo!r}: sweeps of replay-based learners (this "
                "config keeps a replay buffer) are not supported yet; sweep an "
                "on-policy learner, or train replay runs one by one with "
                "`purejaxdrl train`."
            )
        if config.eval.episodes:
            # Said, not silently ignored: the sweep loop has no evaluation.
            raise ConfigError(
                f"eval.episodes={config.eval.episodes}: sweeps do not play "
                "evaluation episodes (the table reports each run's training "
                "return); drop eval.episodes."
            )
    return SweepPlan(base, tuple(fields), tuple(settings), tuple(configs), tuple(seeds))
