"""Generic config machinery: typed overrides and range checks.

Every way a config is made (defaults, a preset, a YAML file, the command line)
goes through `apply_overrides` and then the config's validation, so bad input
always ends in a `ConfigError` that names the value, the rule and the fix. This
module knows no algorithm, environment or run: `agents` use its checks for their
own sections (`check`, `check_ranges`: `config_checks`', imported from here),
`training.config` composes the run's config from them.
"""

import dataclasses
import difflib
import typing
from collections.abc import Callable, Collection, Mapping
from typing import Any, NamedTuple

from purejaxdrl.config_checks import check, check_ranges
from purejaxdrl.config_docs import FIELD_ALIASES, did_you_mean

# ConfigError is defined beside the type conversion that raises it first, and
# imported from here throughout the package.
from purejaxdrl.config_types import (
    WIDTHS,
    ConfigError,
    coerce,
    flat_fields,
    same_value,
)
from purejaxdrl.setup_warnings import warn_once
from purejaxdrl.yaml_text import read_option_texts

__all__ = [
    "ConfigError",
    "Selection",
    "require_config",
    "apply_overrides",
    "nested_overrides",
    "to_dict",
    "check",
    "check_ranges",
]

# -------------------------------------------------------------------- overrides


class Selection(NamedTuple):
    """Sections of a config of which one field selects the one that is read.

    A config class declares it as `SELECTION: ClassVar[Selection]` (a run's
    `algo` selects one algorithm's section of `training.TrainConfig`): this
    module knows no algorithm, the class says which fields are such sections
    and how to word what `apply_overrides` refuses about them.

    Attributes:
      by: the field whose value names the section read, e.g. "algo".
      names: the names of the sections it may select (they grow as algorithms
        are registered, so a function).
      missing: the message for a name of `names` that is no field of the
        config (made before that section was added).
      unread: the message for a change to a section that `by` does not name,
        from (what was set, the section, the selected one, the fix).
      stale: from (a name, the config's section of it), why that section is
        out of date (of a class its name registered again replaced), or "".
      fix: from (the config, a section `by` does not name), the fix `unread`
        names for Python; None: `by='<section>'`.
      switched: from (a config, that config with `by` changed), a warning that
        the change keeps the run's settings (a tuned config exists), or "".

    """

    by: str
    names: Callable[[], Collection[str]]
    missing: Callable[[str], str]
    unread: Callable[[str, str, str, str], str]
    stale: Callable[[str, Any], str]
    fix: Callable[[Any, str], str] | None = None
    switched: Callable[[Any, Any], str] | None = None

    def others(self, *selected: str) -> set[str]:
        """The sections none of the `selected` names: a run of them reads none."""
        return set(self.names()) - set(selected)


def _refuse_unread_sections(
    config: Any, changes: Mapping[str, Any], selection: Selection
) -> None:
    """Refuses a change to a section the resulting config does not read.

    `{"ppo": {"learning_rate": 1e-2}}` on a run of ppo_kl would train with
    ppo_kl's learning rate, and nothing would say so. Sections given back
    unchanged are no change. (A checkpoint's saved config holds every section:
    `config_from_dict` leaves out those its algorithm does not read.)
    """
    selected = changes.get(selection.by, getattr(config, selection.by))
    others = selection.others(selected)
    for key, new in changes.items():
        if key not in others:
            continue
        old = getattr(config, key)
        pairs = zip(flat_fields(old), flat_fields(new), strict=True)
        changed = next(
            (p for (p, _, a), (_, _, b) in pairs if not same_value(a, b)), None
        )
        if changed is not None:
            own = f"{selection.by}={key!r}"
            fix = selection.fix(config, key) if selection.fix else own
            raise ConfigError(selection.unread(f"{key}.{changed}", key, selected, fix))


def _unknown_field(
    config: Any, key: str, prefix: str, nested: Mapping[str, Any]
) -> str:
    """The refusal of field `key`, unknown to `config` (at dotted `prefix`).

    It names the field meant where one is likely (`lr`: learning_rate, as the
    command line's hint does) and where both audiences list the fields.
    """
    names = [f.name for f in dataclasses.fields(config)]
    alias = FIELD_ALIASES.get(key)
    close = [alias] if alias in names else difflib.get_close_matches(key, names, n=1)
    hint = did_you_mean(f"{prefix}{close[0]}") if close else ""
    if not close and not prefix:  # `learning_rate`, `lr`: a section's field
        algo = nested.get("algo", getattr(config, "algo", None))
        hint = _section_hint(config, FIELD_ALIASES.get(key, key), algo)
        hint = hint or _not_a_section(key, nested.get(key), names)
    python = f"dataclasses.fields(config.{prefix[:-1]})" if prefix else None
    python = python or "help(pjd.TrainConfig)"
    return (
        f"Unknown config field {prefix + key!r}: {hint}`purejaxdrl train --help` "
        f"lists every field ({python} in Python)."
    )


def _not_a_section(key: str, value: Any, names: list[str]) -> str:
    """For `{"train": {"total_steps": 10}}`: the top-level fields it holds."""
    if not isinstance(value, Mapping):
        return ""
    top = {k: v for k, v in value.items() if str(k).replace("-", "_") in names}
    if not top:
        return ""
    which = ", ".join(map(str, top))
    return (
        f"{key!r} is no section; {which} {'is a' if len(top) == 1 else 'are'} "
        f"top-level field{'s' * (len(top) > 1)}: {top}. "
    )


def _section_hint(config: Any, key: str, algo: Any) -> str:
    """Where field `key` is, when a section has it: the run's algorithm's first."""
    sections = [
        f.name
        for f in dataclasses.fields(config)
        if dataclasses.is_dataclass(inner := getattr(config, f.name))
        and key in {g.name for g in dataclasses.fields(inner)}
    ]
    if len(sections) > 1 and algo not in sections:  # other algorithms' only
        return f"it is a field of the {', '.join(sections)} sections, not {algo}'s. "
    name = algo if algo in sections else (sections or [None])[0]
    return did_you_mean(f"{name}.{key}") if name else ""


def _refuse_foreign_fields(config: Any, section: str, fields: Mapping) -> None:
    """Refuses a field of other sections set in `section` (dqn.num_minibatches).

    Said before any near-miss of `section`'s own fields, which would suggest a
    field unlike the one meant (dqn.batch_size).
    """
    own = {f.name for f in dataclasses.fields(getattr(config, section))}
    for raw_key in nested_overrides(fields, f"{section}."):
        key = str(raw_key).replace("-", "_")
        owners = [
            f.name
            for f in dataclasses.fields(config)
            if f.name != section
            and dataclasses.is_dataclass(inner := getattr(config, f.name))
            and key in {g.name for g in dataclasses.fields(inner)}
        ]
        if key not in own and owners:
            flag = f"--{owners[0]}.{key}".replace("_", "-")
            raise ConfigError(
                f"Unknown config field '{section}.{key}': {key} is a field of "
                f"{', '.join(owners)}, not {section}'s (e.g. {flag}, "
                f"{owners[0]}.{key} in Python). `purejaxdrl train --help` lists "
                "every field."
            )


def require_config(config: Any, what: str) -> None:
    """Refuses a preset, a preset's name or anything else in place of a config."""
    inner = getattr(config, "config", None)
    if dataclasses.is_dataclass(inner) and not isinstance(inner, type):
        raise ConfigError(
            f"{what} takes a config, not a {type(config).__name__}; pass its "
            ".config, e.g. pjd.load_preset('cartpole').config."
        )
    if isinstance(config, str):  # a preset's name: sweep and pbt take one
        raise ConfigError(
            f"{what} takes a config, not a name ({config!r}); for a preset's, "
            f"pass pjd.load_preset({config!r}).config (pjd.sweep and pjd.pbt "
            "take the name: they judge runs by its target)."
        )
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        raise ConfigError(
            f"{what} takes a config (e.g. pjd.load_preset('cartpole').config), "
            f"not {config!r}."
        )


def apply_overrides(
    config: Any,
    overrides: Mapping[str, Any],
    prefix: str = "",
    *,
    read_texts: bool = True,
) -> Any:
    """Returns `config` with nested `overrides` applied, each value type-checked.

    Args:
      config: a config dataclass instance.
      overrides: field name -> value, or -> a mapping for a nested config, e.g.
        `{"seed": 1, "ppo": {"learning_rate": 3e-4}}`; dashes in names are read
        as underscores. Changing `algo` keeps the run settings (num_envs,
        unroll_length, ...) and gives the new algorithm's untuned section; for
        its tuned one, `pjd.load_preset(name, algo)` (a SetupWarning names it,
        where a shipped preset has one; docs/guide/presets-and-training.md).
      prefix: dotted path of `config`, for error messages.
      read_texts: text in `env.options` (`"25"`, `"true"`, from Python) is read
        as `--env.option` reads it (YAML: 25, True), so both spellings save one
        value; False for values read as YAML already (a preset file, the
        command line, a run's config.yaml), whose quoted text stays text.

    Examples:
      >>> import purejaxdrl as pjd
      >>> config = pjd.load_preset("cartpole").config
      >>> config = pjd.apply_overrides(config, {"seed": 1, "ppo.learning_rate": 1e-3})
      >>> config.ppo.learning_rate
      0.001

    Raises:
      ConfigError: for an unknown field or a value of the wrong type, a field
        set twice (dotted and nested, or with - and _), a change to a section
        the config does not read (`Selection`: not its `algo`'s), a change to or
        selection of a section made before its algorithm was registered again,
        or a `config` that is no config (a preset: pass its `.config`).

    """
    if not prefix:
        require_config(config, "apply_overrides")
        if not isinstance(overrides, Mapping):
            raise ConfigError(
                f"overrides={overrides!r} is not a mapping; pass a (nested) dict "
                "of fields, e.g. {'seed': 1, 'ppo': {'learning_rate': 3e-4}}."
            )
    hints = typing.get_type_hints(type(config))
    fields = {f.name: f for f in dataclasses.fields(config)}
    names = list(fields)
    selection = None if prefix else getattr(type(config), "SELECTION", None)
    nested = nested_overrides(overrides, prefix)
    if selection is not None:  # sections set or selected: of the current class?
        selected = nested.get(selection.by, getattr(config, selection.by, None))
        for key in {*nested, str(selected)} & set(names) & set(selection.names()):
            if stale := selection.stale(key, getattr(config, key)):
                raise ConfigError(stale)
    changes = {}
    for raw_key, value in nested.items():
        key = str(raw_key).replace("-", "_")
        path = f"{prefix}{key}"
        if key not in names and selection and key in selection.names():
            raise ConfigError(
                f"Unknown config field {path!r}: {selection.missing(key)}"
            )
        if key not in names:
            raise ConfigError(_unknown_field(config, key, prefix, nested))
        current = getattr(config, key)
        if dataclasses.is_dataclass(current):
            if not isinstance(value, Mapping):
                raise ConfigError(
                    f"{path}={value!r} must be a mapping of its fields, e.g. "
                    f"{path}: {{...}}; set single fields with --{path}.<field>."
                )
            if not prefix:
                _refuse_foreign_fields(config, key, value)
            changes[key] = apply_overrides(
                current, value, f"{path}.", read_texts=read_texts
            )
        else:
            if path == "env.options" and read_texts:  # as the flag reads it
                value = read_option_texts(value)
            example = fields[key].metadata.get("example", WIDTHS)
            changes[key] = coerce(value, hints[key], path, current, example)
    if selection is not None:
        _refuse_unread_sections(config, changes, selection)
    changes.update(_reset_tied(config, changes))
    result = dataclasses.replace(config, **changes)
    if selection is not None and selection.switched is not None:
        _warn_switch(config, result, nested, selection)
    return result


def _warn_switch(
    config: Any, result: Any, nested: Mapping[str, Any], selection: Selection
) -> None:
    """`switched`'s warning: `by` changed without its section or env (a preset's)."""
    by, new = selection.by, getattr(result, selection.by)
    if new == getattr(config, by) or {"env", str(new)} & set(nested):
        return
    if warning := selection.switched(config, result):
        warn_once(warning)


def nested_overrides(overrides: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """`overrides` with dotted keys nested: {"ppo.gamma": x} is {"ppo": {"gamma": x}}.

    Dashes read as underscores. A dotted key and a mapping of one section merge
    (neither is changed); a field set twice (`ppo.gamma` and `ppo: {gamma: ...}`)
    is refused, not left to the dict's order. `prefix`: the config's dotted path.
    """
    out: dict[str, Any] = {}
    for raw_key, value in overrides.items():
        head, dot, rest = str(raw_key).partition(".")
        key, value = (head, {rest: value}) if dot else (str(raw_key), value)
        key = key.replace("-", "_")
        if key in out:
            value = _merged(out[key], value, f"{prefix}{key}")
        out[key] = value
    return out


def _merged(a: Any, b: Any, path: str) -> dict[str, Any]:
    """Mappings `a` and `b` at `path` merged at every depth; ConfigError if not both."""
    if not (isinstance(a, Mapping) and isinstance(b, Mapping)):
        raise ConfigError(
            f"{path} is set twice in these overrides ({a!r} and {b!r}), in two "
            "spellings (dotted and nested, or with - and _); keep one."
        )
    out = dict(a)
    for key, value in b.items():
        out[key] = _merged(out[key], value, f"{path}.{key}") if key in out else value
    return out


def _reset_tied(config: Any, changes: Mapping[str, Any]) -> dict[str, Any]:
    """Defaults of the fields tied to a field the overrides changed.

    A config class declares `TIED_FIELDS = {field: owner}` where a field's
    value belongs to another's (`EnvConfig`: the options are the environment
    id's keyword arguments): changing the owner without the field resets it,
    so a preset's options do not follow its id to another environment.
    """
    out = {}
    fields = {f.name: f for f in dataclasses.fields(config)}
    for name, owner in getattr(type(config), "TIED_FIELDS", {}).items():
        if name in changes or changes.get(owner, getattr(config, owner)) == getattr(
            config, owner
        ):
            continue
        field = fields[name]
        if field.default_factory is not dataclasses.MISSING:
            out[name] = field.default_factory()
        else:
            out[name] = field.default
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
