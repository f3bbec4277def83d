"""Random search: ranges over dynamic fields, checked, then drawn reproducibly."""

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.sweeps.fields import SWEEP, Field, Wording, checked_value, resolve_field
from purejaxdrl.training.config import TrainConfig

# As a sweep's seed count (spec.MAX_SEED_COUNT): far above a search's draws, yet
# drawn and planned at once; a larger number is most likely a typo.
MAX_SAMPLES = 2**20

DISTRIBUTIONS = ("loguniform", "uniform")


def sampled_field(
    base: TrainConfig,
    name: str,
    spec: tuple[str, float, float],
    taken: Sequence[Field],
    wording: Wording = SWEEP,
) -> Field:
    """A field of the random search, with its (kind, low, high) range checked.

    Args:
      base: the config the range's ends are checked in.
      name: the field, bare (`learning_rate`) or dotted.
      spec: (kind in DISTRIBUTIONS, low, high).
      taken: the fields already varied (gridded, or sampled before this one).
      wording: how errors name the flag and the field (a sweep's or PBT's).

    Raises:
      ConfigError: a field also gridded (or sampled twice), a static field, an
        unknown distribution, or a range that is empty, not positive for
        `loguniform`, or whose ends the config rejects.

    """
    field = resolve_field(base, name, wording)
    flag = wording.sample
    if field.path in {f.path for f in taken}:
        raise ConfigError(
            f"{wording.field} {field.path!r} is given twice ({wording.twice}); "
            "pick one."
        )
    if not field.dynamic:
        raise ConfigError(
            f"{flag} {name}: {field.path} is static (it changes shapes or "
            f"loop counts, one program per value); draw only dynamic fields "
            f"({wording.static})."
        )
    if not (isinstance(spec, tuple | list) and len(spec) == 3):
        raise ConfigError(
            # Python's keyword (sample=, explore=): only a call can pass this.
            f"{flag.lstrip('-')} {name}={spec!r} is not (distribution, low, high); "
            f"pass e.g. {{{name!r}: ('loguniform', 1e-5, 1e-3)}} (on the command "
            f"line: {name}=loguniform:1e-5:1e-3)."
        )
    kind, low, high = spec
    if kind not in DISTRIBUTIONS:
        raise ConfigError(
            f"{flag} {name}: {kind!r} is not one of {DISTRIBUTIONS}; e.g. "
            f"{name}=loguniform:1e-5:1e-3."
        )
    finite = all(isinstance(x, numbers.Real) and math.isfinite(x) for x in spec[1:])
    if not (finite and low < high) or (kind == "loguniform" and low <= 0):
        raise ConfigError(
            f"{flag} {name}: range [{low}, {high}] must have finite ends and LOW "
            f"< HIGH{' and LOW > 0 for loguniform' if kind == 'loguniform' else ''}"
            f"; e.g. {name}={kind}:{1e-5 if kind == 'loguniform' else 0.0}:1e-3."
        )
    for end in (low, high):
        checked_value(base, field, end, flag)
    return field


def _draw(
    rng: np.random.Generator, kind: str, low: float, high: float, n: int
) -> np.ndarray:
    if kind == "loguniform":
        return np.exp(rng.uniform(math.log(low), math.log(high), n))
    return rng.uniform(low, high, n)


def is_integer(value: Any) -> bool:
    """An integer (Python's or numpy's), not a bool: what counts and indices take."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def random_draws(
    base: TrainConfig,
    sample: Mapping[str, tuple[str, float, float]],
    num_samples: int,
    search_seed: int,
    taken: Sequence[Field],
    wording: Wording = SWEEP,
) -> tuple[list[Field], list[dict[str, Any]]]:
    """The random search: its fields, and `num_samples` draws of all of them.

    Fields draw one after another from one generator seeded by `search_seed`,
    `num_samples` values each; draw j takes every field's j-th value.

    Args:
      base: the config the ranges are checked in.
      sample: field name -> (kind, low, high), see `sampled_field`.
      num_samples: draws.
      search_seed: seeds the generator.
      taken: the grid's fields (a field is gridded or sampled, not both).
      wording: how errors name the flag and the field (a sweep's or PBT's).

    Returns:
      (the sampled fields, per draw {field path: float}); without `sample`, no
      fields and one empty draw, so that the grid alone makes the settings.

    Raises:
      ConfigError: a bad sampled field or range (`sampled_field`), or
        `num_samples` below 1 with `sample` or above 0 without it.

    """
    if not sample:
        if num_samples:
            raise ConfigError(
                f"num_samples={num_samples} without a range to sample; pass "
                "--sample FIELD=KIND:LOW:HIGH, or drop --samples."
            )
        return [], [{}]
    fields: list[Field] = []
    for name, spec in sample.items():
        fields.append(sampled_field(base, name, spec, [*taken, *fields], wording))
    if not is_integer(num_samples) or num_samples < 1:
        raise ConfigError(
            f"num_samples={num_samples!r}: random search needs a whole number of "
            "draws, at least one; pass --samples N with --sample."
        )
    if num_samples > MAX_SAMPLES:
        raise ConfigError(
            f"--samples {num_samples}: a random search draws at most "
            f"{MAX_SAMPLES:,} settings (each a run per seed, trained together); "
            f"pass --samples {MAX_SAMPLES} or fewer."
        )
    if not is_integer(search_seed):
        raise ConfigError(f"search_seed={search_seed!r} must be an integer >= 0.")
    if search_seed < 0:
        raise ConfigError(
            f"search_seed={search_seed} must be >= 0 (it seeds NumPy's "
            "generator); pass e.g. --search-seed 0."
        )
    rng = np.random.default_rng(search_seed)
    columns: dict[str, np.ndarray] = {}
    for field, (kind, low, high) in zip(fields, sample.values(), strict=True):
        columns[field.path] = _draw(rng, kind, low, high, num_samples)
    draws = [
        {path: float(col[j]) for path, col in columns.items()}
        for j in range(num_samples)
    ]
    return fields, draws
