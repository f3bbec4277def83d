"""The config fields a sweep varies: names resolved, values checked and applied."""

import dataclasses
import difflib
import functools
import re
import typing
from collections.abc import Callable, Mapping
from typing import Any

from purejaxdrl.agents.registry import names
from purejaxdrl.config import ConfigError, apply_overrides
from purejaxdrl.config_docs import FIELD_ALIASES, both_ways, field_example, flag
from purejaxdrl.config_types import admits_none, flat_fields
from purejaxdrl.networks.torsos import check_names
from purejaxdrl.training.config import TrainConfig, validate

# Why a sweep refuses the fields that make the environment another task.
_ONE_TASK = (
    "a sweep trains one environment, and returns of different tasks do not "
    "rank against each other; run one sweep per --env / --env.id"
)
# Fields (top-level names or dotted paths) a sweep may not vary, and why.
_NOT_SWEPT = {
    "algo": "a sweep trains one algorithm; run one sweep per --algo",
    "seed": "seeds are their own axis: pass "
    f"{both_ways('--seeds', 'seeds', 'N')} or a list",
    "devices": "it does not change what a run learns; pass "
    f"{field_example('devices', 'N')} once",
    "run_dir": "it does not change what a run learns",
    "num_logs": "it does not change what a run learns; pass "
    f"{field_example('num_logs', 'N')} once",
    # Only the rollout loop's speed: the runs would be the same run, compiled
    # once per value (time values with `purejaxdrl train --scan-unroll N`).
    "scan_unroll": "it changes only speed, not what a run learns; pass "
    f"{field_example('scan_unroll', 'N')} once",
    "eval": "sweeps and PBT play no evaluation episodes; drop it",
    "host": "sweeps and PBT train device environments only; drop it",
    # Which task: returns of different environments are on scales of their
    # own, so ranking them, picking a best setting (and its policy) and
    # judging --target across them would be meaningless. The same
    # environment seen or limited otherwise (`env.hide_observations`,
    # `env.options`, `env.normalize_observations`) is one study's settings.
    "env.id": _ONE_TASK,
    "env.imports": _ONE_TASK,
}


@dataclasses.dataclass(frozen=True)
class Field:
    """A config field a sweep varies.

    Fields of the algorithm's config that are array leaves (learning rate,
    gamma, clip, entropy cost, ...) are *dynamic*: all their values train in one
    compiled program. Every other field (num_envs, epochs, network sizes, ...)
    is *static*: each of its values is a program of its own.

    Attributes:
      path: dotted path in TrainConfig, e.g. `ppo.learning_rate`.
      dynamic: an array leaf of the algorithm's config (vmapped in one program)
        rather than a static field (one program per value).

    """

    path: str
    dynamic: bool


def _dynamic_names(config: TrainConfig) -> list[str]:
    section = config.algo_config
    return [f.name for f in dataclasses.fields(section) if not f.metadata.get("static")]


def static_key(config: TrainConfig) -> str:
    """What decides a run's compiled program: every field but the dynamic ones.

    Runs with equal keys differ only in array leaves and seeds, so they train
    in one program.
    """
    section = config.algo_config
    zeroed = dataclasses.replace(section, **dict.fromkeys(_dynamic_names(config), 0.0))
    return repr(dataclasses.replace(config, seed=0, **{config.algo: zeroed}))


@dataclasses.dataclass(frozen=True)
class Wording:
    """How errors name what the user wrote: a sweep's inputs, or PBT's.

    In the caller's spelling: the command line's flags (`--grid lr`), or a
    Python call's keyword arguments (`grid['lr']`).

    Attributes:
      sample: the flag of random ranges (`--sample`, PBT's `--explore`); its
        keyword argument is the flag without dashes.
      field: what a field name is called (`sweep field`, `explore field`).
      seed: why `seed` is not a field to vary.
      static: where a static field can be varied instead.
      twice: how a field can come to be given twice.
      command_line: the values came from flags, not from a Python call.

    """

    sample: str = "--sample"
    field: str = "sweep field"
    seed: str = _NOT_SWEPT["seed"]
    static: str = "a sweep's grid can vary a static one"
    twice: str = "gridded and sampled, or under two names"
    command_line: bool = False

    def given(self, option: str, name: str) -> str:
        """Where a value of field `name` came from: `--grid lr`, or `grid['lr']`.

        `option` is the input's flag (`--grid`, `--sample`); a Python call's
        keyword argument is its name without dashes.
        """
        if self.command_line:
            return f"{option} {name}"
        return f"{option.lstrip('-')}[{name!r}]"


SWEEP = Wording()
# `purejaxdrl sweep`'s: the same inputs, named as its flags.
SWEEP_FLAGS = dataclasses.replace(
    SWEEP, static="a sweep can --grid a static one", command_line=True
)


def resolve_field(base: TrainConfig, name: str, wording: Wording = SWEEP) -> Field:
    """The field a sweep name refers to.

    Names of the algorithm's own fields may be given bare (`learning_rate` is
    `ppo.learning_rate` in a PPO sweep); others are dotted paths
    (`network.hidden_sizes`) or top-level names (`num_envs`).

    Args:
      base: the config the name is looked up in.
      name: as the user wrote it.
      wording: how errors name the field (a sweep's or PBT's).

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
    refused = next((k for k in (path, top) if k in _NOT_SWEPT), None)
    if refused is not None:
        reason = wording.seed if refused == "seed" else _NOT_SWEPT[refused]
        raise ConfigError(f"{wording.field} {name!r} cannot be swept: {reason}.")
    if top in names() and top != algo:
        raise ConfigError(
            f"{wording.field} {name!r} belongs to {top}, and a sweep of {algo} does "
            f"not use it; sweep {algo}'s fields (e.g. learning_rate) or pass "
            f"{both_ways('--algo', 'algo', top, repr(top))}."
        )
    if top == "checkpoint":
        raise ConfigError(
            f"{wording.field} {name!r}: checkpoint settings apply to the whole "
            f"sweep; pass them once (e.g. {field_example('checkpoint.every', 2)})."
        )
    if path not in paths:
        close = _close_field(name, [p.removeprefix(f"{algo}.") for p in paths])
        hint = f"did you mean {close!r}? " if close else ""
        raise ConfigError(
            f"unknown {wording.field} {name!r}: {hint}`purejaxdrl train --algo "
            f"{algo} --help` lists every field (help(pjd.TrainConfig) and "
            f"dataclasses.fields(config.{algo}) in Python; {algo}'s may be given "
            f"without '{algo}.')."
        )
    return Field(path, path in dynamic)


def _close_field(name: str, bare: list[str]) -> str | None:
    """The field of `bare` meant by `name`: its alias's (`lr`), else alike."""
    *parents, leaf = name.split(".")
    aliased = ".".join([*parents, FIELD_ALIASES.get(leaf, leaf)])
    for candidate in (aliased, aliased.split(".", 1)[-1]):  # `ppo.lr` too
        if candidate != name and candidate in bare:
            return candidate
    close = difflib.get_close_matches(name, bare, n=1)
    return close[0] if close else None


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


def checked_value(
    base: TrainConfig,
    field: Field,
    value: Any,
    source: str,
    *,
    grid: bool = False,
    fix: Callable[[], str] | None = None,
) -> Any:
    """`value` coerced to the field's type and validated in `base`.

    Args:
      base: the config the value is set in.
      field: the field it is a value of.
      value: as given (a string from the command line, or a Python value).
      source: where it came from, as errors name it (`--grid learning_rate`,
        `grid['learning_rate']`: `Wording.given`).
      grid: a grid's value, one setting: a list-valued field's item is none.
      fix: called on a refusal: an example written as the input the value came
        from (a grid, a range), for the config's own `--FIELD VALUE` example,
        which would set the base config instead of varying the field.

    Returns:
      The value as the validated config holds it (`"1e-3"` -> 0.001).

    Raises:
      ConfigError: naming `source` and the field, when the config rejects it.

    """
    # An item where a setting's list belongs ([64, 32] for hidden sizes). A
    # string is one too: `--grid network.hidden_sizes=64,32` gives "64" and
    # "32", which the config would read as the lists (64,) and (32,).
    a_list = isinstance(value, list | tuple | None) or getattr(value, "ndim", 0)
    if grid and not a_list and is_list_field(base, field.path):
        mine = _as_setting(base, field.path, value)
        if mine is not None:  # else the config's own refusal ("not an integer")
            raise _not_one_setting(base, field.path, value, mine, source)
    try:
        config = validate(apply_overrides(base, _nested(field.path, value)))
        if field.path.startswith("network."):  # else checked when built
            check_names(config.network)
    except ConfigError as e:
        said = str(e) if fix is None else _as_input(str(e), field.path, fix())
        raise ConfigError(f"{source}: {said}") from None
    return _value_at(config, field.path)


def _as_input(message: str, path: str, fix: str) -> str:
    """`message` with the field's own flag example replaced by `fix`.

    The example as `field_example` writes it: `--ppo.gamma 0.99 (ppo.gamma=0.99
    in Python)`. The rule's words stay; a message without one is kept whole.
    """
    own = re.escape(flag(path)), re.escape(path)
    example = rf"{own[0]} .+? \({own[1]}=.+? in Python\)"
    return re.sub(example, lambda _: fix, message, count=1)


def _as_setting(base: TrainConfig, path: str, item: Any) -> tuple | None:
    """The list a grid's item would be as one setting: 64 -> (64,).

    A string is read as the config reads it ("64" -> (64,), "64 32" ->
    (64, 32)); None where the config cannot read it.
    """
    if not isinstance(item, str):
        return (item,)
    try:
        read = _value_at(apply_overrides(base, _nested(path, item)), path)
    except ConfigError:
        return None
    return read if isinstance(read, tuple) else None


def _value_at(config: TrainConfig, path: str) -> Any:
    """The value of the dotted field `path` of `config`."""
    return functools.reduce(getattr, path.split("."), config)


def is_list_field(base: TrainConfig, path: str) -> bool:
    """Whether the field at `path` holds a list (`tuple[X, ...]`, or it | None)."""
    hint = next(h for p, h, _ in flat_fields(base) if p == path)
    kinds = typing.get_args(hint) if admits_none(hint) else (hint,)
    return any(typing.get_origin(k) is tuple for k in kinds)


def _not_one_setting(
    base: TrainConfig, path: str, value: Any, mine: tuple, source: str
) -> ConfigError:
    """A grid value of a list-valued field that is one item, not one setting.

    The type check's own fix is a `train` flag (`--network.hidden-sizes 64
    64`), which is neither a grid nor Python: this names the grid's two forms,
    with one list per setting; `mine` is `value` as one setting's list. A
    command-line item is shown as Python's would be ("64" as 64). An item
    equal to `base`'s own list is shown as a grid of that one list (another
    list, such as (), may be no setting the field takes). `source` names
    the grid's value as the caller wrote it.
    """
    if isinstance(value, str) and len(mine) == 1:
        value = mine[0]
    current = tuple(_value_at(base, path) or ())
    settings = [current, mine] if current != mine else [mine]
    yaml_list = ",".join("[" + ",".join(map(str, s)) + "]" for s in settings)
    return ConfigError(
        f"{source}: {value!r} is not a list, and each value of a list-valued "
        f"field's grid is one setting's list: grid={{{path!r}: {settings!r}}} in "
        f"Python (one list per setting), --grid '{path}=[{yaml_list}]' on the "
        "command line."
    )
