"""Which options of a Playground task's config the adapter runs, and which not.

The adapter passes a task's config overrides (`--env.option`) to Playground;
some of them Playground would take and then step wrongly or fail deep inside
a trace. These checks say so in one line first.
"""

from collections.abc import Mapping
from typing import Any

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import check_option_types, check_options
from purejaxdrl.env.option_spelling import both
from purejaxdrl.env.option_types import read_text

# The physics the adapter runs: MJX's JAX implementation. Playground's configs
# name MuJoCo Warp (`warp`) for most tasks, but a Warp step and a Warp reset
# traced in one vmapped program (the adapter's auto-reset) fail JAX's tracer
# checks (UnexpectedTracerError, on Playground's own environment too, with
# warp-lang 1.19 on a CPU); and on a CPU Warp is tens of times slower.
IMPLS = ("jax",)


# Options a task's config has that the adapter runs at one value only: the
# unknown-option error lists them with it.
ONE_VALUE = {"impl": IMPLS[0], "action_repeat": 1}


def unusable_options(valid: set[str], menagerie: bool) -> set[str]:
    """The options of `valid` that `listed_options` names as not usable here.

    Args:
      valid: every option name the task takes (its config's and the adapter's).
      menagerie: the task loads MuJoCo Menagerie models (then `menagerie_path`
        is usable).

    """
    pixels = {k for k in valid if k == "vision" or k.startswith("vision_config")}
    return pixels | ({"menagerie_path"} & valid if not menagerie else set())


def listed_options(valid: set[str], menagerie: bool) -> str:
    """The options an unknown-option error offers for a task, as one line.

    Those the adapter takes at one value only say it ("impl (jax only)").
    Groups (`reward_config`) are not offered: set as one value, they are
    refused; their keys are listed instead (`reward_config.scales.energy`).
    Pixel observations (`vision`, refused, and the `vision_config.*` group,
    of no use without it) and, for a task that loads no Menagerie model
    (`menagerie`: it does), `menagerie_path` (refused) are named briefly
    after the list ("; not usable here: ..."), not offered as choices.

    Args:
      valid: every option name the task takes (its config's and the adapter's).
      menagerie: the task loads MuJoCo Menagerie models.

    """
    pixels = {k for k in valid if k == "vision" or k.startswith("vision_config")}
    # A group (`reward_config`) is refused as one value: its keys are listed.
    groups = {k for k in valid if any(v.startswith(k + ".") for v in valid)}
    unused = unusable_options(valid, menagerie) | groups
    shown = [
        f"{k} ({ONE_VALUE[k]} only)" if k in ONE_VALUE else k
        for k in sorted(valid - unused)
    ]
    names = [n for n in ("vision",) if n in pixels]
    names += ["vision_config.*"] if pixels - {"vision"} else []
    notes = [f"{' and '.join(names)} (pixel observations)"] if names else []
    if not menagerie and "menagerie_path" in valid:
        notes.append("menagerie_path (the task loads no Menagerie model)")
    not_usable = f"; not usable here: {', '.join(notes)}" if notes else ""
    return ", ".join(shown) + not_usable


def check_names(env_id: str, options: Any, valid: set[str], menagerie: bool) -> None:
    """Refuses option names a task does not take, offering only the usable ones.

    Args:
      env_id: the task, for the message.
      options: the option names given.
      valid: every option name the task takes (its config's and the adapter's).
      menagerie: the task loads MuJoCo Menagerie models.

    Raises:
      ConfigError: naming the unknown options (see `check_options`).

    """
    listed = listed_options(valid, menagerie)
    unusable = unusable_options(valid, menagerie)
    check_options(env_id, options, valid, listed, unusable)


def default_physics(configured: str) -> str:
    """The physics a task steps with when `env.options impl` is not given: `jax`.

    Whatever the task config names (`configured`, mostly `warp`): see IMPLS.
    """
    del configured
    return IMPLS[0]


def check_physics(
    env_id: str, config: dict[str, Any], defaults: dict[str, Any]
) -> None:
    """Refuses options the adapter cannot run, in one line each.

    `impl` other than MJX's JAX one (IMPLS); `vision` (pixel observations,
    which the adapter does not render); a `ctrl_dt` that is not a whole number
    of `sim_dt`s, which Playground rounds to a number of physics steps per
    control step (0: the physics never moves; 2 for 0.015 / 0.01: 0.02 s
    simulated per 0.015 s step).

    Args:
      env_id: the environment, for messages.
      config: the options given.
      defaults: the task's config by dotted name (`flat_items`).

    """
    impl = config.get("impl", IMPLS[0])
    if impl not in IMPLS:
        raise ConfigError(
            f"env.options impl={impl!r}: the playground adapter steps MJX's JAX "
            f"physics only (MuJoCo Warp's step and reset do not trace in one "
            f"vmapped program); pass {both('impl', 'jax')} or leave it out."
        )
    if config.get("vision"):
        raise ConfigError(
            f"env.options vision={config['vision']!r}: {env_id}'s pixel "
            "observations are not supported by the playground adapter; leave "
            "vision out (state observations)."
        )
    for name, value in config.items():
        default = defaults.get(name)
        # Counts (njmax, nconmax, episode_length...): MJX would size an array
        # by a negative number, or step on with a silently meaningless limit.
        # Top-level options only: nested ones hold weights (reward scales of
        # -4 as well as -4.0), not sizes.
        count = "." not in name and _is_int(default) and default >= 0
        if count and _is_int(value) and value < 0:
            raise ConfigError(
                f"env.options {name}={value}: {name} is a count ({env_id}'s "
                f"default: {default}) and must be >= 0; pass a whole number >= 0 "
                "or leave it out."
            )
    if "ctrl_dt" in defaults and "sim_dt" in defaults:
        ctrl = float(config.get("ctrl_dt", defaults["ctrl_dt"]))
        sim = float(config.get("sim_dt", defaults["sim_dt"]))
        if sim <= 0 or ctrl <= 0:
            raise ConfigError(
                f"env.options ctrl_dt={ctrl:g}, sim_dt={sim:g}: both must be > 0 "
                f"(seconds); {env_id}'s own are ctrl_dt={defaults['ctrl_dt']:g}, "
                f"sim_dt={defaults['sim_dt']:g}."
            )
        steps = round(ctrl / sim)
        if steps < 1 or abs(ctrl / sim - steps) > 1e-6 * steps:
            raise ConfigError(
                f"env.options ctrl_dt={ctrl:g}, sim_dt={sim:g}: {env_id} steps its "
                f"physics ctrl_dt / sim_dt = {ctrl / sim:g} times per action, "
                "which must be a whole number >= 1; pass a ctrl_dt that is "
                f"a multiple of sim_dt (e.g. ctrl_dt={defaults['ctrl_dt']:g}, "
                f"sim_dt={defaults['sim_dt']:g}, {env_id}'s own)."
            )


def _is_int(value: Any) -> bool:
    """An int that is not a bool (YAML's `true` is an int to Python)."""
    return isinstance(value, int) and not isinstance(value, bool)


def flat_items(tree: dict, prefix: str = "") -> dict[str, Any]:
    """The leaves (and sub-dicts) of a nested dict by their dotted names."""
    items = {}
    for key, value in tree.items():
        items[prefix + key] = value
        if isinstance(value, dict):
            items |= flat_items(value, prefix + key + ".")
    return items


def flatten_groups(options: Mapping[str, Any]) -> dict[str, Any]:
    """Options given as nested dicts, as the dotted options they set.

    `{'reward_config': {'scales': {'energy': 0}}}` (Python, or the flag's
    `reward_config={scales: {energy: 0}}`) means `reward_config.scales.energy=0`.
    Passed on nested, Playground's `update_from_flattened_dict` replaced the
    whole group with it (every other reward scale gone), unchecked; dotted,
    each leaf is checked by name and type, and Playground merges it.
    An empty dict stays as given (`check_groups` refuses it).

    Raises:
      ConfigError: an option set twice, dotted and nested.

    """
    out: dict[str, Any] = {}
    for name, value in options.items():
        for leaf, leaf_value in _leaves(str(name), value):
            if leaf in out:
                raise ConfigError(
                    f"env.options {leaf!r} is set twice (dotted and in a nested "
                    f"dict: {out[leaf]!r} and {leaf_value!r}); keep one."
                )
            out[leaf] = leaf_value
    return out


def _leaves(name: str, value: Any) -> list[tuple[str, Any]]:
    """(dotted name, value) of each leaf of `value` (itself, unless a dict)."""
    if not isinstance(value, Mapping) or not value:
        return [(name, value)]
    return [pair for k, v in value.items() for pair in _leaves(f"{name}.{k}", v)]


def check_groups(
    env_id: str, options: Mapping[str, Any], defaults: Mapping[str, Any]
) -> dict[str, Any]:
    """Refuses an option that does not fit its dict or list / tuple default.

    `check_option_types` checks scalars; Playground's ConfigDict would refuse
    these with a traceback. A dict default is a group of options, set by their
    own dotted names (`flatten_groups` makes a nested dict those); a list or
    tuple takes one (YAML's `[64, 64]`) of entries checked as scalars are,
    made the default's type.

    Returns:
      `options`, lists as their defaults' types.

    Raises:
      ConfigError: naming the option, its value and what it takes.

    """
    out = dict(options)
    for name, value in options.items():
        default = defaults.get(name)
        if isinstance(default, Mapping):  # nested dicts: `flatten_groups`
            raise ConfigError(
                f"env.options {name}={value!r}: {name} is a group of {env_id}'s "
                f"options ({', '.join(default) or 'none'}), not one value; set "
                f"them one by one, e.g. {_leaf_example(name, default)}."
            )
        if not isinstance(default, list | tuple):
            continue
        if isinstance(value, str):  # from Python: read as the flag reads it
            value = read_text(value)
        if not isinstance(value, list | tuple):
            raise ConfigError(
                f"env.options {name}={value!r} is not a list ({env_id}'s default: "
                f"{default!r}); pass one, e.g. {both(name, list(default))}."
            )
        names = [f"{name}[{i}]" for i in range(len(value))]
        like = {n: default[min(i, len(default) - 1)] for i, n in enumerate(names)}
        checked = check_option_types(
            env_id, dict(zip(names, value, strict=True)), like if default else {}
        )
        out[name] = type(default)(checked[n] for n in names)
    return out


def _leaf_example(name: str, group: Mapping[str, Any]) -> str:
    """Both spellings of the group's first single option (a group's, if nested)."""
    while isinstance(group, Mapping) and group:
        first = next(iter(group))
        name, group = f"{name}.{first}", group[first]
    value = "NAME" if isinstance(group, Mapping) else group
    return both(name, value)
