"""A refused grid value's fix, written as a grid: values the config takes.

The config's own refusal gives a `train` flag (`--ppo.gamma 0.99`), which
would set the base config and sweep nothing; a grid's refusal gives a grid.
A grid not given as a list (one value, a set, a generator, a 2-D array) is
refused here too (`refuse_lone_value`).
"""

import functools
import numbers
from collections.abc import Iterable
from typing import Any

from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways
from purejaxdrl.networks.torsos import choices
from purejaxdrl.sweeps.fields import Field, checked_value
from purejaxdrl.sweeps.search import is_integer, range_example, written
from purejaxdrl.training.config import TrainConfig


def grid_example(base: TrainConfig, field: Field, name: str) -> str:
    """A grid of `field` the config takes, both ways.

    `--grid gamma=0.49,0.99 (grid={'gamma': [0.49, 0.99]} in Python)`: two
    values the config takes, around the base's: a float's are the ends of the
    range a refused `--sample` is offered (`search.range_example`); an
    integer's the base's and double or half of it; a boolean's both; the
    base's alone where no other is known to be valid (a name, a list).

    Args:
      base: the config the values are checked in.
      field: the gridded field.
      name: the field as the user wrote it (`gamma`, `ppo.gamma`).

    """
    current = functools.reduce(getattr, field.path.split("."), base)
    items = [current, *_neighbours(current), *choices(field.path)]
    if isinstance(current, float):  # the ends of the range a --sample is offered
        items = [*_ends(range_example(base, field, "uniform")), *items]
    taken = []
    for item in items:
        if item not in taken and _takes(base, field, item):
            taken.append(item)
        if len(taken) == 2:
            break
    if all(isinstance(x, numbers.Real) and not isinstance(x, bool) for x in taken):
        taken.sort()
    text = ",".join(_as_typed(x) for x in taken)
    if isinstance(current, tuple):  # a list per setting, as YAML
        text = "[" + ",".join(f"[{','.join(map(str, x))}]" for x in taken) + "]"
    return both_ways("--grid", "grid", f"{name}={text}", {name: taken})


def _ends(text: str) -> list[float]:
    """`LOW:HIGH`'s numbers; none where no range was found (`LOW:HIGH` itself)."""
    try:
        return [float(x) for x in text.split(":")]
    except ValueError:
        return []


def _neighbours(value: Any) -> list[Any]:
    """Values near `value` to offer beside it, nearest first."""
    if isinstance(value, bool):
        return [not value]
    if is_integer(value):
        return [value * 2, max(value // 2, 1)]
    if isinstance(value, numbers.Real):
        near = [value / 10, value * 10, value / 2, value * 2] if value else [0.01, 1.0]
        return [float(f"{x:.2g}") for x in near]
    return []


def _takes(base: TrainConfig, field: Field, value: Any) -> bool:
    """Whether the config takes `value` as one setting of `field`."""
    try:
        checked_value(base, field, value, "", grid=True)
    except ConfigError:
        return False
    return True


def _as_typed(value: Any) -> str:
    """`value` as typed after `--grid FIELD=`: `1e-4`, `true`, `tanh`."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, numbers.Real):
        return written(value)
    return str(value)


def refuse_lone_value(base: TrainConfig, field: Field, name: str, value: Any) -> None:
    """Refuses one value given as a grid in Python, `1e-3` or `"1e-3,1e-4"`.

    One value is more likely a forgotten list than a grid of one. The values
    joined in one string are the command line's spelling, said as such: the
    field's own refusal of it ("not a number") would hide that.
    """
    kind = "set" if isinstance(value, (set, frozenset)) else type(value).__name__
    if getattr(value, "ndim", 1) > 1 or not isinstance(value, (str, Iterable)):
        pass  # one value (a number, a 2-D array): said below
    elif not isinstance(value, str):  # a set, a generator: values, not a list
        order = "sorted" if kind == "set" else "list"
        raise ConfigError(
            f"grid={{{name!r}: ...}} is a {kind}, not a list of values; pass a "
            f"list, e.g. grid={{{name!r}: {order}(...)}}."
        )
    if isinstance(value, str) and "," in value:
        try:
            checked_value(base, field, value, "", grid=True)
        except ConfigError:
            items = [_number_or_text(v) for v in value.split(",") if v.strip()]
            example = both_ways("--grid", "grid", f"{name}={value}", {name: items})
            raise ConfigError(
                f"grid={{{name!r}: {value!r}}} gives the values as one string; "
                f"pass a list, e.g. {example}."
            ) from None
    if getattr(value, "ndim", 0) > 1:
        raise ConfigError(
            f"grid={{{name!r}: ...}} is a {value.ndim}-D array; a grid is a list "
            f"or a 1-D array of values, e.g. grid={{{name!r}: [V1, V2]}}."
        )
    raise ConfigError(
        f"grid={{{name!r}: {value!r}}} is one value, not a list of values; pass a "
        f"list, e.g. grid={{{name!r}: [{value!r}]}} (or set the field in the base "
        "config to train that value alone)."
    )


def _number_or_text(text: str) -> Any:
    """`"1e-3"` -> 0.001, as a list of the values would hold it; else `text`."""
    text = text.strip()
    try:
        number = float(text)
    except ValueError:
        return text
    return (
        int(number)
        if number.is_integer() and "." not in text and "e" not in text.lower()
        else number
    )
