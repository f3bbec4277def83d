"""Checks that a user's record's config can be a run's section.

Read from YAML and flags, swept, saved and resumed (`check_config`), and
read from a built-in algorithm's preset sections where it names one
(`check_preset_section`). `registry.register` runs them, before anything is
registered: each would otherwise pass a first `train` and fail later.
"""

import dataclasses
import typing
from collections.abc import Set
from typing import Any

import jax
import numpy as np

from purejaxdrl.agents.base import Algorithm
from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import field_docs
from purejaxdrl.config_types import convertible, flat_fields, is_dynamic_type, type_name
from purejaxdrl.setup_warnings import warn_once

_EXAMPLE = "as docs/examples/reinforce.py's ReinforceConfig"


def check_config(name: str, record: Algorithm) -> None:
    """That `record`'s config can be a run's section: read, swept, saved, resumed.

    Each of these would otherwise pass a first `train` and fail later: a
    sweep traces every dynamic field as a float32 leaf of a pytree; a resume,
    an override or the command line read each field from text.
    """
    kind = record.config_type
    if not (isinstance(kind, type) and dataclasses.is_dataclass(kind)):
        raise ConfigError(
            f"Algorithm {name!r}: config_type {kind!r} is not a dataclass; "
            f"declare it {_EXAMPLE} (@jax.tree_util.register_dataclass, "
            "@dataclasses.dataclass(frozen=True, kw_only=True))."
        )
    try:
        default = record.default_config()
    except TypeError as e:  # a field without a default, say
        raise ConfigError(
            f"Algorithm {name!r}: default_config() must make its config without "
            f"arguments, but raised TypeError: {e}; give every field of "
            f"{kind.__name__} a default."
        ) from None
    if not isinstance(default, kind):
        raise ConfigError(
            f"Algorithm {name!r}: default_config() makes a "
            f"{type(default).__name__}, not its config_type "
            f"{kind.__name__}; make them agree."
        )
    leaves = jax.tree.leaves(default)
    if len(leaves) == 1 and leaves[0] is default:
        raise ConfigError(
            f"Algorithm {name!r}: {kind.__name__} is not registered as a pytree, "
            f"whose dynamic fields sweeps trace; declare it {_EXAMPLE}, "
            "decorated with @jax.tree_util.register_dataclass."
        )
    for path, hint, _ in flat_fields(default, f"{name}."):
        if not convertible(hint):
            raise ConfigError(
                f"Algorithm {name!r}: field {path}: {type_name(hint)} is no type a "
                "config reads from YAML or flags; use bool, int, float | jax.Array, "
                "str, tuple[X, ...], dict, typing.Literal[...], or one of them | None "
                "(typing.Optional); a Union of two of them (int | str) is none."
            )
    hints = typing.get_type_hints(kind)
    for field in dataclasses.fields(default):
        if not field.metadata.get("static"):
            _check_dynamic(
                name, field.name, hints[field.name], getattr(default, field.name)
            )
    _warn_undocumented(name, kind)


def _warn_undocumented(name: str, kind: type) -> None:
    """Warns once of the fields of `kind` that no `Attributes:` entry describes.

    `--help` shows each field's flag with its entry (`config_docs`); a field
    without one is listed bare. The built-in configs are held to it by the
    tests; a user's is told once, when registered.
    """
    bare = [f.name for f in dataclasses.fields(kind) if f.name not in field_docs(kind)]
    if bare:
        fields = ", ".join(f"{name}.{field}" for field in bare)
        warn_once(
            f"Algorithm {name!r}: {kind.__name__} describes no {fields} in its "
            "docstring's Attributes: section, so --help lists "
            f"{'them' if bare[1:] else 'it'} without a description; add an "
            f"entry per field, {_EXAMPLE} does.",
            key=("undocumented", name, kind.__qualname__, tuple(bare)),
        )


def _check_dynamic(name: str, field: str, hint: Any, value: Any) -> None:
    """That the dynamic field `name.field` is a float leaf that sweeps can trace."""
    static = f"{field}: {type_name(hint)} = jax.tree.static(default=...)"
    if not is_dynamic_type(hint):
        raise ConfigError(
            f"Algorithm {name!r}: field {name}.{field}: {type_name(hint)} "
            "is dynamic, an array leaf that sweeps trace as float32, so it "
            f"must be float | jax.Array; or mark it static: {static}."
        )
    if isinstance(value, int | float) and not isinstance(value, bool):
        return
    if isinstance(value, np.generic):
        # A run checks its fields' values are Python numbers (check_types),
        # and config.yaml could not write a numpy one.
        raise ConfigError(
            f"Algorithm {name!r}: field {name}.{field}: its default {value!r} is "
            f"a numpy.{type(value).__name__}, which a config does not hold; give "
            f"it a Python float (e.g. {field}: {type_name(hint)} = {str(value)})."
        )
    # None is no leaf, which a sweep could not stack nor PBT perturb.
    raise ConfigError(
        f"Algorithm {name!r}: field {name}.{field}: its default {value!r} is not "
        "a number, but a dynamic field is a float leaf that sweeps stack; give it "
        "a float default (a number read as unset, as SAC's alpha_learning_rate "
        f"reads 0.0), or mark it static: {static}."
    )


def check_preset_section(record: Algorithm, built_in: Set[str]) -> None:
    """That `record.preset_section` is None or a built-in algorithm's name.

    A preset's sections are the built-in algorithms' (and a user's own preset
    file's); a variant reads its base's, whose name is fixed when it is
    registered, not a user's record that may be registered after it.
    """
    section = record.preset_section
    if section is None or (isinstance(section, str) and section in built_in):
        return
    raise ConfigError(
        f"Algorithm {record.name!r}: preset_section={section!r} is not a built-in "
        "algorithm; name the one whose preset sections it reads where a preset "
        f"has none of its own (one of {', '.join(sorted(built_in))}), or leave "
        "it None."
    )
