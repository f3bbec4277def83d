"""Range checks of config sections: one rule per group of fields.

Each agent's config validates its own section with `check_ranges` (and `check`
for a rule of its own); every message names the value, the rule, and the fix
both ways (`--ppo.num-epochs 4 (ppo.num_epochs=4 in Python)`). Re-exported by
`purejaxdrl.config`, where the package imports them from.
"""

import math
from typing import Any

import jax

from purejaxdrl.config_docs import field_example
from purejaxdrl.config_types import ConfigError


def check(ok: bool, message: str) -> None:
    """Raises ConfigError(`message`) unless `ok`."""
    if not ok:
        raise ConfigError(message)


def _example(section: Any, field: str, fallback: float, ok: Any) -> Any:
    """`field`'s default in `section`'s class if `ok` holds of it, else `fallback`."""
    default = getattr(type(section), field, fallback)
    return default if isinstance(default, int | float) and ok(default) else fallback


def check_ranges(
    name: str,
    section: Any,
    *,
    at_least_one: tuple[str, ...] = (),
    positive: tuple[str, ...] = (),
    non_negative: tuple[str, ...] = (),
    unit: tuple[str, ...] = (),
    off_at_inf: tuple[str, ...] = ("max_grad_norm",),
) -> None:
    """Checks the ranges of a config section's fields, one rule per group.

    Args:
      name: the section's dotted path, for messages (`ppo`, `network`).
      section: a config dataclass instance.
      at_least_one: integer fields that must be >= 1 (and < 2**31).
      positive: number fields that must be > 0 (and finite).
      non_negative: number fields that must be >= 0 (and finite).
      unit: number fields that must lie in [0, 1].
      off_at_inf: fields of `positive` and `non_negative` whose inf is
        documented as "off" (max_grad_norm: no clipping), so allowed.

    Raises:
      ConfigError: for the first field out of range, naming it and the fix
        (the field's default as the example, both ways).

    """

    def values(fields: tuple[str, ...]) -> list[tuple[str, Any]]:
        # A factory may be built with traced hyper-parameters (a sweep's, under
        # vmap); those were checked one by one before they were stacked.
        pairs = ((f, getattr(section, f)) for f in fields)
        return [(f, v) for f, v in pairs if not isinstance(v, jax.core.Tracer)]

    for field, value in values(at_least_one):
        default = _example(section, field, 1, lambda d: 1 <= d < 2**31)
        check(
            1 <= value < 2**31,  # sizes are int32 in the compiled programs
            f"{name}.{field}={value} must be >= 1 and < 2**31; pass a positive "
            f"integer, e.g. {field_example(f'{name}.{field}', default)}.",
        )

    def finite(field: str) -> str:  # what the rule says of inf, truly
        return " (inf turns it off)" if field in off_at_inf else " and finite"

    for field, value in values(positive):
        value, default = float(value), getattr(type(section), field, 1)
        check(
            value > 0 and (math.isfinite(value) or field in off_at_inf),
            f"{name}.{field}={value} must be > 0{finite(field)}; pass a positive "
            f"number, e.g. {field_example(f'{name}.{field}', default)}.",
        )
    for field, value in values(non_negative):
        value = float(value)
        default = _example(section, field, 0.0, lambda d: 0 <= d < math.inf)
        check(
            value >= 0 and (math.isfinite(value) or field in off_at_inf),
            f"{name}.{field}={value} must be >= 0{finite(field)}; pass e.g. "
            f"{field_example(f'{name}.{field}', default)}.",
        )
    for field, value in values(unit):
        value = float(value)
        default = _example(section, field, 0.99, lambda d: 0 <= d <= 1)
        check(
            0.0 <= value <= 1.0,
            f"{name}.{field}={value} must be in [0, 1]; e.g. "
            f"{field_example(f'{name}.{field}', default)}.",
        )
