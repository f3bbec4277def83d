"""What a sweep runs: grids and random ranges over config fields, times seeds."""

import dataclasses
import functools
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import yaml

from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways, field_example
from purejaxdrl.rng import SEED_LIMIT
from purejaxdrl.sweeps.advice import grid_example, refuse_lone_value
from purejaxdrl.sweeps.fields import (
    SWEEP,
    Field,
    Wording,
    checked_value,
    is_list_field,
    resolve_field,
    setting_config,
    static_key,
)
from purejaxdrl.sweeps.search import is_integer, random_draws
from purejaxdrl.training.config import TrainConfig, validate


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
        # Per setting, not per run: a run's seed is no static field, and a
        # setting's runs are consecutive (setting-major), so each group stays
        # in run order; a large --seeds count costs nothing here.
        groups: dict[str, list[int]] = {}
        n = len(self.seeds)
        for setting, config in enumerate(self.configs):
            runs = range(setting * n, (setting + 1) * n)
            groups.setdefault(static_key(config), []).extend(runs)
        return list(groups.values())


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


def parse_sample_arg(
    text: str, flag: str = "--sample"
) -> tuple[str, tuple[str, float, float]]:
    """`learning_rate=loguniform:1e-5:1e-3` -> (name, ("loguniform", 1e-5, 1e-3)).

    Args:
      text: the flag's value.
      flag: the flag errors name (`--sample`, PBT's `--explore`).

    Raises:
      ConfigError: for any other form.

    """
    name, sep, spec = text.partition("=")
    parts = spec.split(":")
    example = f"e.g. {flag} learning_rate=loguniform:1e-5:1e-3"
    if not sep or not name.strip() or len(parts) != 3:
        raise ConfigError(f"{flag} {text!r} is not FIELD=KIND:LOW:HIGH; {example}.")
    try:
        low, high = float(parts[1]), float(parts[2])
    except ValueError:
        raise ConfigError(
            f"{flag} {text!r}: LOW and HIGH must be numbers; {example}."
        ) from None
    return name.strip(), (parts[0].strip(), low, high)


# Far above a sweep's seed counts (the runs of a batch share each device), yet
# listed and planned in a second: a larger count is most likely a --seed typo.
MAX_SEED_COUNT = 2**20

# How many seeds a sweep trains, as the command line and `sweep(seeds=...)` take it.
_SEEDS_EXAMPLE = both_ways("--seeds", "seeds", 8)


def check_seed_count(first: int, count: int, flag: str, python: str) -> None:
    """Refuses a count whose seeds first ... first + count - 1 leave [0, 2**32).

    Checked before the seeds are listed, so a huge count fails at once. `flag`
    is the option that gave the count (`--seeds`, `--population`), `python`
    its keyword argument (`seeds`, `population`).
    """
    if first + count > SEED_LIMIT:
        lower_seed = (
            f"; or at most {field_example('seed', SEED_LIMIT - count)}"
            if count < SEED_LIMIT
            else ""
        )
        raise ConfigError(
            f"{python}={count}: seed {SEED_LIMIT} (= seed {first} + "
            f"{SEED_LIMIT - first}) must be in [0, 2**32) (JAX keeps a seed's "
            "low 32 bits, so it would repeat seed 0's run); pass "
            f"at most {both_ways(flag, python, SEED_LIMIT - first)}{lower_seed}."
        )


def seed_list(base: TrainConfig, seeds: int | Sequence[int]) -> list[int]:
    """The seeds of a sweep: a count N is base.seed ... base.seed + N - 1.

    Args:
      base: the config whose seed a count starts from (a valid seed).
      seeds: a count, or the seeds themselves (integers in [0, 2**32)).

    Returns:
      The seeds as Python ints, in the given order.

    Raises:
      ConfigError: a count below 1, an empty list, a seed given twice, or a
        seed outside [0, 2**32) (which would repeat another seed's run).

    """
    count = is_integer(seeds)
    if not count and (isinstance(seeds, str) or not isinstance(seeds, Iterable)):
        raise ConfigError(
            f"seeds={seeds!r} is neither a count nor a list of seeds; e.g. seeds=8 "
            "or seeds=[0, 1, 2]."
        )
    if count:
        seeds = int(seeds)
        if seeds < 1:
            raise ConfigError(f"seeds={seeds} must be >= 1; e.g. {_SEEDS_EXAMPLE}.")
        if seeds > MAX_SEED_COUNT:
            raise ConfigError(
                f"seeds={seeds}: a sweep trains at most {MAX_SEED_COUNT:,} seeds "
                "per setting (a count of seeds from the config's seed, not a "
                f"seed); pass at most {both_ways('--seeds', 'seeds', MAX_SEED_COUNT)}."
            )
        check_seed_count(base.seed, seeds, "--seeds", "seeds")
        return list(range(base.seed, base.seed + seeds))
    for s in seeds:
        if not is_integer(s):
            raise ConfigError(
                f"seeds={list(seeds)} holds {s!r}, which is not an integer; pass "
                "integers, e.g. seeds=[0, 1, 2]."
            )
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ConfigError(
            f"seeds={seeds} must be one or more distinct integers; e.g. "
            f"{_SEEDS_EXAMPLE}."
        )
    for i, s in enumerate(seeds):
        if not 0 <= s < SEED_LIMIT:
            raise ConfigError(
                f"seeds: seed {s} (entry {i + 1} of the list) must be in "
                "[0, 2**32) (JAX keeps a seed's low 32 bits, so it would repeat "
                "another seed's run); list seeds in that range, e.g. "
                f"{both_ways('--seeds', 'seeds', '0,1,2', [0, 1, 2])}."
            )
    return seeds


def checked_index(index: Any, count: int, name: str) -> int:
    """`index` when it is an integer in [0, count); else an IndexError naming it.

    `name` is the argument (`run`, `member`) and what `count` counts.
    """
    if not is_integer(index) or not 0 <= index < count:
        raise IndexError(
            f"{name}={index!r}: the {name}s are 0 to {count - 1}; pass one of them."
        )
    return int(index)


def grid_axis(
    base: TrainConfig,
    name: str,
    values: Any,
    taken: Sequence[Field],
    wording: Wording = SWEEP,
) -> tuple[Field, list[Any]]:
    """One grid field and its checked values.

    Args:
      base: the config the values are set in.
      name: the field, bare (`learning_rate`) or dotted (`network.hidden_sizes`).
      values: its values, a list (a numpy array: its items); one value alone
        is refused as a forgotten list, not read as a grid of one.
      taken: the fields already varied.
      wording: how errors name the grid (the command line's or Python's).

    Returns:
      (the field, its values as the validated config holds them).

    Raises:
      ConfigError: a field given twice, one value not in a list, no values, a
        value the config rejects, or a value listed twice.

    """
    field = resolve_field(base, name, wording)
    if field.path in {f.path for f in taken}:
        raise ConfigError(f"sweep field {field.path!r} is given twice; merge them.")
    if getattr(values, "ndim", 0) == 1:  # a numpy or JAX array: its items
        values = [v.item() for v in values]
    elif isinstance(values, str) or not isinstance(values, Sequence):
        if not is_list_field(base, field.path):
            refuse_lone_value(base, field, name, values)
        values = [values]  # refused by the field, naming its grid form
    if not values:
        example = both_ways(
            "--grid", "grid", f"{name}=V1,V2", f"{{{name!r}: [V1, V2]}}"
        )
        raise ConfigError(
            f"{name}: the grid is empty; give one or more values, e.g. {example}."
        )
    source = wording.given("--grid", name)
    fix = functools.partial(grid_example, base, field, name)
    checked = [
        checked_value(base, field, v, source, grid=True, fix=fix) for v in values
    ]
    if len(set(map(repr, checked))) != len(checked):
        raise ConfigError(
            f"{name}: the grid's values {checked} repeat; list each value once."
        )
    return field, checked


def expand_settings(
    paths: Sequence[str],
    grid_values: Sequence[Sequence[Any]],
    draws: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """Every grid combination with every draw: grid-major, draws innermost.

    Args:
      paths: the grid fields' paths.
      grid_values: per grid field, its values (the last field varies fastest).
      draws: per random draw, {field path: value}.

    Returns:
      Per setting, {field path: value}: grid values, then the draw's.

    """
    return [
        {**dict(zip(paths, combo, strict=True)), **draw}
        for combo in itertools.product(*grid_values)
        for draw in draws
    ]


def make_plan(
    base: TrainConfig,
    *,
    grid: Mapping[str, Sequence[Any]] | None = None,
    sample: Mapping[str, tuple[str, float, float]] | None = None,
    num_samples: int | None = None,
    seeds: int | Sequence[int] = 1,
    search_seed: int | None = 0,
    wording: Wording = SWEEP,
) -> SweepPlan:
    """Expands grids, random ranges and seeds into validated settings.

    Every value is checked with `validate` before anything compiles, so a bad
    one fails with a message that names the field and the rule.

    Args:
      base: the config every setting starts from (a preset's, usually).
      grid: field -> values; the sweep trains the Cartesian product.
      sample: field -> (kind, low, high), kind in `search.DISTRIBUTIONS`;
        dynamic fields only. Each of `num_samples` draws picks every sampled
        field at once.
      num_samples: how many random draws (required with `sample`; None:
        left out).
      seeds: a count N (seeds base.seed ... base.seed + N - 1) or a list.
      search_seed: seeds the random search (not the runs); refused where
        nothing is sampled (None: --search-seed left out).
      wording: how errors name the inputs: Python's keyword arguments, the
        command line's flags (`SWEEP_FLAGS`), or PBT's (which reuses this plan).

    Returns:
      The SweepPlan: settings grid-major, draws innermost.

    Raises:
      ConfigError: an unknown field, a value of the wrong type or out of range,
        an empty grid, a bad range, or bad seeds; naming the field and the rule.

    """
    validate(base)
    seeds = seed_list(base, seeds)
    fields: list[Field] = []
    grid_values: list[list[Any]] = []
    for name, values in (grid or {}).items():
        field, checked = grid_axis(base, name, values, fields, wording)
        fields.append(field)
        grid_values.append(checked)
    sampled, draws = random_draws(
        base, dict(sample or {}), num_samples, search_seed, fields, wording
    )
    settings = expand_settings([f.path for f in fields], grid_values, draws)
    configs = [validate(setting_config(base, s)) for s in settings]
    return SweepPlan(
        base, (*fields, *sampled), tuple(settings), tuple(configs), tuple(seeds)
    )
