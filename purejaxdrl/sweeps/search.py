"""Random search: ranges over dynamic fields, checked, then drawn reproducibly."""

import functools
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways
from purejaxdrl.sweeps.fields import SWEEP, Field, Wording, checked_value, resolve_field
from purejaxdrl.training.config import TrainConfig

# As a sweep's seed count (spec.MAX_SEED_COUNT): far above a search's draws, yet
# drawn and planned at once; a larger number is most likely a typo.
MAX_SAMPLES = 2**20

# A random search's ranges, as the command line and `sweep(sample=...)` take them.
_SAMPLE_EXAMPLE = both_ways(
    "--sample", "sample", "FIELD=KIND:LOW:HIGH", "{FIELD: (KIND, LOW, HIGH)}"
)

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
    flag, source = wording.sample, wording.given(wording.sample, name)
    if field.path in {f.path for f in taken}:
        raise ConfigError(
            f"{wording.field} {field.path!r} is given twice ({wording.twice}); "
            "pick one."
        )
    if not field.dynamic:
        raise ConfigError(
            f"{source}: {field.path} is static (it changes shapes or "
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
            f"{source}: {kind!r} is not one of {DISTRIBUTIONS}; e.g. "
            f"{_range_example(base, field, name, 'loguniform', flag)}."
        )
    _check_range(base, field, name, spec, (source, flag))
    fix = functools.partial(_range_example, base, field, name, kind, flag)
    for end in (low, high):
        checked_value(base, field, end, source, fix=fix)
    return field


def _range_example(
    base: TrainConfig, field: Field, name: str, kind: str, flag: str
) -> str:
    """A range of `field` the config takes, as `flag` and its keyword take it."""
    return ranged(flag, name, kind, range_example(base, field, kind))


def ranged(flag: str, name: str, kind: str, ends: str) -> str:
    """The range `ends` (`LOW:HIGH`) of field `name`, both ways.

    `--sample gamma=uniform:0.49:0.99 (sample={'gamma': ('uniform', 0.49,
    0.99)} in Python)`; `flag`'s keyword argument is its name without dashes.
    """
    low, high = ends.split(":")
    return both_ways(
        flag,
        flag.lstrip("-"),
        f"{name}={kind}:{low}:{high}",
        f"{{{name!r}: ({kind!r}, {low}, {high})}}",
    )


def _check_range(
    base: TrainConfig,
    field: Field,
    name: str,
    spec: Sequence[Any],
    named: tuple[str, str],
) -> None:
    """Refuses ends that are no numbers or not finite, or an empty range.

    Each in one line naming the range as the caller gave it (`named`'s
    source: `--sample lr`, `sample['lr']`), the rule and a range to pass
    instead, both ways (`named`'s flag and its keyword): one whose ends the
    config takes (`range_example`), or the range reversed where it was given
    HIGH first.
    """
    source, flag = named
    kind, low, high = spec
    example = functools.partial(_range_example, base, field, name, kind, flag)
    for end, value in (("LOW", low), ("HIGH", high)):
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            # Only Python can pass one: the command line reads numbers.
            ends = [_as_written(v) for v in (low, high)]
            ends = ends if all(ends) else range_example(base, field, kind).split(":")
            raise ConfigError(
                f"{source}: {end} {value!r} is a {type(value).__name__}, not "
                f"a number; pass numbers, e.g. {{{name!r}: ({kind!r}, "
                f"{ends[0]}, {ends[1]})}}."
            )
        if not math.isfinite(value):
            raise ConfigError(
                f"{source}: {end} {value} is not finite, and a range needs "
                f"finite ends; e.g. {example()}."
            )
    given = f"[{written(low)}, {written(high)}]"
    if not low < high:
        swapped = f"{written(high)}:{written(low)}"
        fix = swapped if _valid(base, field, kind, high, low) else None
        raise ConfigError(
            f"{source}: range {given} is empty (LOW must be < HIGH); e.g. "
            f"{ranged(flag, name, kind, fix) if fix else example()}."
        )
    if kind == "loguniform" and low <= 0:
        raise ConfigError(
            f"{source}: range {given} must have LOW > 0 for loguniform (it "
            f"draws in log space); e.g. {example()}."
        )


def written(x: float) -> str:
    """`x` as one writes it: `1e-5` (not Python's `1e-05`), `0.001`, `3`."""
    text = str(x) if is_integer(x) else repr(float(x))
    mantissa, e, exponent = text.partition("e")
    return f"{mantissa}e{int(exponent)}" if e else text


def _as_written(x: Any) -> str | None:
    """A number, or a string that reads as one (`"1e-4"`), as written; else None."""
    if isinstance(x, numbers.Real) and not isinstance(x, bool):
        return written(x)
    try:
        return x.strip() if isinstance(x, str) and math.isfinite(float(x)) else None
    except ValueError:
        return None


def _valid(base: TrainConfig, field: Field, kind: str, low: float, high: float) -> bool:
    """Whether (kind, low, high) is a range `sampled_field` takes."""
    if not low < high or (kind == "loguniform" and low <= 0):
        return False
    try:
        for end in (low, high):
            checked_value(base, field, end, "")
    except ConfigError:
        return False
    return True


def range_example(base: TrainConfig, field: Field, kind: str) -> str:
    """`LOW:HIGH` of a range of `field` the config takes, around its value.

    A tenth to ten times the base's value where both ends are valid (a
    learning rate's), else half to whole (gamma's 0.99: `0.49:0.99`) or whole
    to double; for a value of 0, 0 to 0.01 or 1; rounded to two digits.
    """
    value = functools.reduce(getattr, field.path.split("."), base)
    value = float(value) if isinstance(value, numbers.Real) else 0.0  # None: unset
    ranges = [(value / 10, value * 10), (value / 2, value), (value, value * 2)]
    ranges += [(0.0, 0.01), (0.0, 1.0), (1e-5, 1e-3)]
    for low, high in ranges:
        low, high = float(f"{low:.2g}"), float(f"{high:.2g}")
        if _valid(base, field, kind, low, high):
            return f"{written(low)}:{written(high)}"
    return "LOW:HIGH"  # no range of these: the config's own rule says why


def _draw(
    rng: np.random.Generator, kind: str, low: float, high: float, n: int
) -> np.ndarray:
    if kind == "loguniform":
        return np.exp(rng.uniform(math.log(low), math.log(high), n))
    return rng.uniform(low, high, n)


def is_integer(value: Any) -> bool:
    """An integer (Python's or numpy's), not a bool: what counts and indices take."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _no_draws(num_samples: Any, wording: Wording) -> str:
    """Why `num_samples` draws are none, in the caller's words.

    None: --samples (num_samples=) was left out (`--samples 0` is a count of
    none, said as such).
    """
    if not wording.command_line and num_samples is None:
        return (
            "sample= needs num_samples=N (how many draws); e.g. num_samples=8 "
            "(the command line's --samples 8)."
        )
    if not wording.command_line:
        return (
            f"num_samples={num_samples!r}: random search needs a whole number of "
            f"draws, at least one; pass {both_ways('--samples', 'num_samples', 'N')} "
            "with the ranges to sample."
        )
    example = both_ways("--samples", "num_samples", 8)
    if num_samples is None:
        return f"{wording.sample} needs --samples N (how many draws); e.g. {example}."
    return (
        f"--samples {num_samples}: random search needs at least one draw; pass "
        f"--samples N (how many draws), e.g. {example}."
    )


def _seeds_no_draws(search_seed: Any) -> str:
    """Why a search seed without ranges to sample is refused, not ignored."""
    return (
        f"{both_ways('--search-seed', 'search_seed', search_seed)} seeds only "
        "the draws of ranges to sample, and none is given, so it would change "
        f"nothing; drop it, or sample ranges: pass {_SAMPLE_EXAMPLE} with "
        f"{both_ways('--samples', 'num_samples', 'N')}."
    )


def random_draws(
    base: TrainConfig,
    sample: Mapping[str, tuple[str, float, float]],
    num_samples: int,
    search_seed: int | None,
    taken: Sequence[Field],
    wording: Wording = SWEEP,
) -> tuple[list[Field], list[dict[str, Any]]]:
    """The random search: its fields, and `num_samples` draws of all of them.

    Fields draw one after another from one generator seeded by `search_seed`,
    `num_samples` values each; draw j takes every field's j-th value.

    Args:
      base: the config the ranges are checked in.
      sample: field name -> (kind, low, high), see `sampled_field`.
      num_samples: draws (None: the command line's --samples left out).
      search_seed: seeds the generator (None: --search-seed left out, 0);
        refused without `sample`, where it would seed nothing.
      taken: the grid's fields (a field is gridded or sampled, not both).
      wording: how errors name the flag and the field (a sweep's or PBT's).

    Returns:
      (the sampled fields, per draw {field path: float}); without `sample`, no
      fields and one empty draw, so that the grid alone makes the settings.

    Raises:
      ConfigError: a bad sampled field or range (`sampled_field`), or
        `num_samples` below 1 with `sample` or above 0 without it, or a
        `search_seed` without `sample`.

    """
    if not sample:
        if num_samples:
            raise ConfigError(
                f"num_samples={num_samples} without a range to sample; pass "
                f"{_SAMPLE_EXAMPLE}; or pass "
                f"{both_ways('--samples', 'num_samples', 0)}."
            )
        # None: --search-seed left out; Python's 0 is its default.
        if search_seed is not None and (search_seed != 0 or wording.command_line):
            raise ConfigError(_seeds_no_draws(search_seed))
        return [], [{}]
    search_seed = 0 if search_seed is None else search_seed
    fields: list[Field] = []
    for name, spec in sample.items():
        fields.append(sampled_field(base, name, spec, [*taken, *fields], wording))
    if not is_integer(num_samples) or num_samples < 1:
        raise ConfigError(_no_draws(num_samples, wording))
    if num_samples > MAX_SAMPLES:
        raise ConfigError(
            f"num_samples={num_samples}: a random search draws at most "
            f"{MAX_SAMPLES:,} settings (each a run per seed, trained together); "
            f"pass at most {both_ways('--samples', 'num_samples', MAX_SAMPLES)}."
        )
    if not is_integer(search_seed):
        raise ConfigError(f"search_seed={search_seed!r} must be an integer >= 0.")
    if search_seed < 0:
        raise ConfigError(
            f"search_seed={search_seed} must be >= 0 (it seeds NumPy's "
            f"generator); pass e.g. {both_ways('--search-seed', 'search_seed', 0)}."
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
