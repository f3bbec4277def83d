"""Config values' types: conversion from YAML and the command line, and checks.

`coerce` turns a value ("64,64", "1e-3", "true") into its field's declared type (a
mapping's values into what YAML writes: `yaml_value`), or raises a
`ConfigError` naming the flag and an example; `check_types` finds a value set
without conversion (`dataclasses.replace`) that is not its field's type.
"""

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from typing import Any

import jax
import numpy as np

from purejaxdrl.config_docs import field_example


class ConfigError(ValueError):
    """Bad configuration: the message names the value, the rule and the fix."""


# Named where users import it from, in tracebacks and reprs (as numpy's
# `set_module` does): `purejaxdrl.config.ConfigError`.
ConfigError.__module__ = "purejaxdrl.config"


def _is_union(hint: Any) -> bool:
    # `X | Y` and typing's `Union[X, Y]` / `Optional[X]`: two kinds on 3.11.
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _is_float_field(hint: Any) -> bool:
    # Dynamic hyper-parameters are annotated `float | jax.Array`.
    return hint is float or (_is_union(hint) and float in typing.get_args(hint))


def _without_none(hint: Any) -> tuple[bool, Any]:
    """Whether `hint` admits None (`X | None`, `Optional[X]`), and `hint` without it."""
    if not (_is_union(hint) and type(None) in typing.get_args(hint)):
        return False, hint
    rest = tuple(a for a in typing.get_args(hint) if a is not type(None))
    return True, rest[0] if len(rest) == 1 else typing.Union[rest]  # noqa: UP007


def admits_none(hint: Any) -> bool:
    """Whether the field type `hint` takes None (`X | None`, `Optional[X]`)."""
    return _without_none(hint)[0]


def _literal(value: Any, allowed: tuple[Any, ...], path: str) -> Any:
    """The value of `allowed` (a `Literal[...]`'s) that `value` spells."""
    for option in allowed:
        if option is None:
            if value is None or str(value).strip().lower() in ("none", "null"):
                return None
            continue
        try:
            converted = coerce(value, type(option), path)
        except ConfigError:
            continue
        if type(converted) is type(option) and converted == option:
            return option
    listed = ", ".join(repr(a) for a in allowed)
    example = field_example(path, allowed[0], repr(allowed[0]))
    raise ConfigError(
        f"{path}={value!r} is not one of {listed}; pass one, e.g. {example}."
    )


# How a refusal names a list field's items, by the items' type.
_ITEM_KINDS = {int: "integers", float: "numbers", str: "strings", bool: "booleans"}


# A list field's example, as typed and in Python, unless its metadata gives one.
WIDTHS = ("64 64", (64, 64))


def coerce(
    value: Any, hint: Any, path: str, current: Any = None, example: tuple = WIDTHS
) -> Any:
    """Converts `value` (from YAML or the command line) to the field type `hint`.

    Types: bool, int, float (and `float | jax.Array`), str, `tuple[X, ...]`,
    `dict[...]`, `typing.Literal[...]` of those, any `| None` or `Optional`.
    Refusals' examples: an int's or a float's `current` value (else 4, 0.001),
    a list's `example`.

    Raises:
      ConfigError: naming the field, the value and an example of one it takes;
        or the type, where it is none of those.

    """
    optional, hint = _without_none(hint)

    def fail(kind: str, example: str, py_example: Any = None) -> ConfigError:
        none = field_example(path, "none", "None")
        unset = f", or {none} to leave it unset" if optional else ""
        example = field_example(path, example, py_example)
        return ConfigError(
            f"{path}={value!r} is not {kind}; pass e.g. {example}{unset}."
        )

    if optional and (value is None or str(value).strip().lower() in ("none", "null")):
        return None
    if typing.get_origin(hint) is typing.Literal:
        return _literal(value, typing.get_args(hint), path)
    if hint is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "1", "yes", "on"):
            return True
        if text in ("false", "0", "no", "off"):
            return False
        raise fail("a boolean", "true", True)
    if hint is int:
        # The field's own value: a fixed 4 would be less than one update.
        whole = type(current) is int and current > 0
        example = str(current) if whole else "4"
        if isinstance(value, bool):
            raise fail("an integer", example)
        try:  # exact first: a float loses digits past 2**53
            return int(value) if isinstance(value, int) else int(str(value))
        except ValueError:
            pass
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise fail("an integer", example) from None
        if not math.isfinite(number):  # nan, inf: int() of them raises
            raise fail("an integer", example)
        if not number.is_integer():
            raise fail("an integer", str(int(number) or 1))
        return int(number)
    if _is_float_field(hint):
        # The field's own value: a fixed 0.001 would suggest gamma 0.001.
        own = isinstance(current, int | float) and not isinstance(current, bool)
        example = str(float(current)) if own and current == current else "0.001"
        if isinstance(value, bool):
            raise fail("a number", example)
        try:
            return float(value)
        except (TypeError, ValueError):
            raise fail("a number", example) from None
    if hint is str:
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise fail("a string", "name", "'name'")
        return str(value)
    if typing.get_origin(hint) is tuple:
        (item,) = {a for a in typing.get_args(hint) if a is not Ellipsis}
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            raise fail("a list", *example)
        # "64,64" and "64 64", alone or as the command line's items.
        items = [
            piece
            for v in items
            for piece in (v.replace(",", " ").split() if isinstance(v, str) else [v])
        ]
        try:
            return tuple(coerce(v, item, path) for v in items)
        except ConfigError:
            # The item's own refusal would offer one item as the whole field,
            # which is itself refused: the example is the list's.
            kind = _ITEM_KINDS.get(item, "values")
            raise fail(f"a list of {kind}", *example) from None
    if typing.get_origin(hint) is dict:
        if not isinstance(value, Mapping):
            flag = "--env.option KEY=VALUE, or " if path == "env.options" else ""
            raise ConfigError(
                f"{path}={value!r} is not a mapping; pass e.g. {flag}in a file or "
                f"from Python {path.rpartition('.')[2]}: {{key: value}}."
            )
        return {key: yaml_value(v, f"{path}.{key}") for key, v in value.items()}
    name = getattr(hint, "__name__", str(hint))
    raise ConfigError(f"{path}: unsupported field type {name}.")


def yaml_value(value: Any, path: str) -> Any:
    """`value` (a mapping field's, e.g. an `env.options` value) as YAML writes it.

    So a run's config.yaml reloads equal to the config trained: tuples as lists,
    NumPy and JAX values as Python numbers and lists, at every depth.

    Raises:
      ConfigError: for a value YAML cannot write (an object), naming `path`.

    """
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, np.generic | np.ndarray | jax.Array):
        return np.asarray(value).tolist()
    for kind in (bool, int, float, str):  # subclasses (an IntEnum) as their base
        if isinstance(value, kind):
            return kind(value)
    if isinstance(value, list | tuple):
        return [yaml_value(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        return {k: yaml_value(v, f"{path}.{k}") for k, v in value.items()}
    raise ConfigError(
        f"{path}={value!r} is {_a(value)}, which a run's config.yaml cannot "
        "hold; pass a number, string, boolean, list or mapping of those."
    )


def convertible(hint: Any) -> bool:
    """Whether `coerce` knows the field type `hint` (Optional ones included)."""
    _, hint = _without_none(hint)
    if typing.get_origin(hint) is typing.Literal:
        kinds = (bool, int, float, str, type(None))
        return all(type(a) in kinds for a in typing.get_args(hint))
    return (
        hint in (bool, int, str)
        or _is_float_field(hint)
        or typing.get_origin(hint) in (tuple, dict)
    )


def is_dynamic_type(hint: Any) -> bool:
    """Whether `hint` types a dynamic field: `float` or `float | jax.Array`.

    A config's dynamic (not `jax.tree.static`) fields are array leaves, which
    sweeps stack and trace as float32: an int, bool or str is none. `| None`
    is allowed in the type, for older files' null that the config turns into
    a number (SAC's unset rate); the default itself must be a number.
    """
    if not _is_union(hint):
        return hint is float
    kinds = set(typing.get_args(hint))
    return float in kinds and kinds <= {float, jax.Array, type(None)}


def type_name(hint: Any) -> str:
    """`hint` as its source spells it: `bool`, `Literal['a', 'b']`, `float | None`."""
    if hint is jax.Array:  # not its implementation's `jax.jaxlib._jax.Array`
        return "jax.Array"
    if hint is type(None):
        return "None"
    if _is_union(hint):
        return " | ".join(type_name(a) for a in typing.get_args(hint))
    return hint.__name__ if isinstance(hint, type) else str(hint).replace("typing.", "")


def check_types(config: Any) -> None:
    """That every leaf field of `config` holds a value of its declared type.

    For a config changed without `apply_overrides` (which converts), e.g.
    `dataclasses.replace(config, num_envs="4")`. An int is a float; traced
    values (a sweep's hyper-parameters in its program) are left alone.

    Raises:
      ConfigError: naming the field, its value and the type it takes.

    """
    _check_sections(config)
    for path, hint, value in flat_fields(config):
        # Traced values (a sweep's hyper-parameters), and types of a user's
        # own (not `convertible`), are left alone; a numpy or JAX scalar is
        # checked, as YAML and JSON cannot write one.
        if isinstance(value, jax.core.Tracer) or not convertible(hint):
            continue
        if getattr(value, "ndim", 0) > 0:
            # In a scalar field it is a sweep's values; in another, a tuple's
            # (hidden_sizes=np.array([32, 32])): YAML cannot write it, and its
            # items would go unchecked: the user converts it (tolist()).
            shape = tuple(value.shape)
            if typing.get_origin(_without_none(hint)[1]) is tuple:
                items = tuple(np.asarray(value).tolist())
                raise ConfigError(
                    f"{path} is an array of shape {shape}; pass a tuple "
                    f"instead, e.g. {items!r}."
                )
            if not _is_scalar_type(hint):
                raise ConfigError(
                    f"{path} is an array of shape {shape}, not the "
                    f"{type_name(hint)} it takes."
                )
            raise ConfigError(
                f"{path} is an array of shape {tuple(value.shape)}, but a run "
                "takes one value; a sweep's values go in pjd.sweep(config, "
                f"grid={{{path!r}: [...]}})."
            )
        coerced = coerce(value, hint, path)  # ConfigError where it cannot be
        mismatch = _mismatch(value, coerced)
        if mismatch is not None:
            got, wanted = mismatch
            inner = "" if got is value else f" holds {got!r}, which"
            raise ConfigError(
                f"{path}={value!r}{inner} is {_a(got)}, not the "
                f"{type(wanted).__name__} it takes; pass {coerced!r} (or set it "
                "with apply_overrides, which converts)."
            )


def _is_scalar_type(hint: Any) -> bool:
    """Whether `hint` takes one number: bool, int, float, `float | jax.Array`."""
    _, hint = _without_none(hint)
    return hint in (bool, int, float) or (
        _is_union(hint) and set(typing.get_args(hint)) <= {float, int, jax.Array}
    )


def _a(value: Any) -> str:
    """`value`'s type with its article: "a str", "a numpy.float64", "a jax.Array"."""
    kind = type(value)
    if isinstance(value, jax.Array):
        name = "jax.Array"
    elif kind.__module__ == "numpy":
        name = f"numpy.{kind.__name__}"
    else:
        name = kind.__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _check_sections(config: Any, prefix: str = "") -> None:
    """That every section of `config` is an instance of its declared class."""
    hints = typing.get_type_hints(type(config))
    for field in dataclasses.fields(config):
        hint, value = hints[field.name], getattr(config, field.name)
        if not (isinstance(hint, type) and dataclasses.is_dataclass(hint)):
            continue
        if not isinstance(value, hint):
            raise ConfigError(
                f"{prefix}{field.name} is {_a(value)}, not the "
                f"{hint.__name__} it takes; pass one, or set its "
                f"fields with apply_overrides (e.g. {{{field.name!r}: {{...}}}})."
            )
        _check_sections(value, f"{prefix}{field.name}.")


def same_value(a: Any, b: Any) -> bool:
    """Whether two field values are equal (NaN equals NaN, arrays item by item)."""
    if a is b:
        return True
    try:
        return bool(a == b) or (a != a and b != b)  # NaN != NaN
    except (TypeError, ValueError):  # arrays of many values
        try:
            return bool(np.array_equal(np.asarray(a), np.asarray(b)))
        except (TypeError, ValueError):
            return False


def _mismatch(value: Any, coerced: Any) -> tuple[Any, Any] | None:
    """The first part of `value` not already what `coerce` made of it, if any.

    Tuples, lists and dicts are compared item by item, so `("64", 64)` for a
    `tuple[int, ...]`, or a tuple or NumPy value in `env.options`, is caught;
    an int where a float is taken is accepted.
    """
    if type(value) is type(coerced) and type(value) in (tuple, list):
        pairs = map(_mismatch, value, coerced)
        return next((pair for pair in pairs if pair is not None), None)
    if type(value) is dict and type(coerced) is dict:  # env.options: YAML's types
        pairs = map(_mismatch, value.values(), coerced.values())
        return next((pair for pair in pairs if pair is not None), None)
    if type(value) is type(coerced) or (
        type(value) is int and isinstance(coerced, float)
    ):
        return None
    return value, coerced


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
