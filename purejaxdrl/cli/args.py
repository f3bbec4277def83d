"""Argument helpers shared by the sub-commands: presets, config flags, errors.

The parser itself (`Parser`, `UsageError`) is `cli.parser`'s, re-exported here.
"""

import argparse
import dataclasses
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

import yaml

from purejaxdrl._platform import DEFAULT_CACHE_DIR, enable_compilation_cache
from purejaxdrl.agents.registry import DEFAULT_ALGO, algorithms, names, unread_section
from purejaxdrl.cli.option_values import read_option
from purejaxdrl.cli.parser import Parser, UsageError
from purejaxdrl.config_docs import field_descriptions, flag
from purejaxdrl.config_types import ConfigError, admits_none, flat_fields
from purejaxdrl.env.option_spelling import any_value


def pre_parse(argv: Sequence[str], *names_: str, command: str) -> argparse.Namespace:
    """The few flags that decide a command's defaults (`--env`, `--algo`, ...).

    They are read before the full parser exists; the rest is left for it.
    Its errors name `purejaxdrl COMMAND --help`, which lists them.
    """
    pre = Parser(prog=f"purejaxdrl {command}", add_help=False, allow_abbrev=False)
    for name in names_:
        pre.add_argument(name)
    known, _ = pre.parse_known_args(argv)
    return known


def load_preset_or_help(argv: Sequence[str], env: str, algo: str) -> tuple[Any, str]:
    """(preset, note): preset `env` for `algo`, and what the help says of it.

    The preset is not validated alone: the flags may complete it (`preset_run`).

    The modules of `--env.imports` are imported first: they may register
    `algo`. `--help` lists every algorithm's flags: for a preset without a section for
    a built-in `algo`, the preset shown is its environment with `algo`'s library
    defaults (no target), and the note says that the commands refuse to run it
    and gives the refusal's fix (a copy of the preset with an `algo` section).

    Raises:
      ConfigError: as `read_preset` does (without --help, a missing section too).

    """
    from purejaxdrl.env.imports import import_modules
    from purejaxdrl.training.presets.load import NoSectionError, Preset, read_preset

    # The user's modules may register `algo` (or the environment): first.
    pre = Parser(add_help=False, allow_abbrev=False)
    pre.add_argument("--env.imports", dest="imports", nargs="*", default=[])
    pre.add_argument("--env")
    pre.add_argument("--env.id", dest="env_id")
    known = pre.parse_known_args(argv)[0]
    import_modules(tuple_items(known.imports))
    try:
        preset = read_preset(env, algo)  # validated with the flags: preset_run
        if preset.section not in ("", algo):
            return preset, (
                f"the {env!r} preset has no {algo} section, so the settings shown "
                f"are its {preset.section} section's ({algo}'s preset_section)."
            )
        if preset.tuned:
            return preset, ""
        return preset, (
            f"the {env!r} preset has no {algo} section, so the defaults shown are "
            f"{algo}'s own, on its environment."
        )
    except NoSectionError as e:
        line = e.for_flags(known.env, known.env_id)  # names the id trained
        if not {"-h", "--help"} & set(argv):
            raise ConfigError(line) from None
        # Shown, but no run: the help says so and gives the refusal's own fix.
        # An --env.id given is the environment shown (the preset's id replaced).
        shown, where = e.untuned, f"the {env!r} preset's environment"
        if known.env_id is not None and known.env is None:
            env_ = dataclasses.replace(shown.env, id=known.env_id)
            shown = dataclasses.replace(shown, env=env_)
            where = f"{known.env_id} (the {env!r} preset's other settings)"
        note = (
            f"the defaults shown are {algo}'s own, untuned, on {where}, which "
            f"train, sweep and pbt refuse to run. {line[:1].upper()}{line[1:]}"
        )
        return Preset(env, shown, None, None), note


def preset_run(
    argv: Sequence[str],
    env: str,
    algo: str,
    parser: Callable[[Any, str, str], Parser],
    refuse: Callable[[argparse.Namespace], None] | None = None,
    named: bool = True,
) -> tuple[Any, argparse.Namespace, Any]:
    """(preset, args, config): preset `env` for `algo`, changed by the flags.

    `parser(defaults, preset name, note)` reads `argv`; `refuse(args)`, if
    given, raises UsageError for flags the command does not honour, before the
    config is built and validated. The run's config (preset and flags) is
    validated, not the preset alone, so flags may complete a preset; an
    error the flags do not change is the file's, and names it. `named`: the
    user named the preset (`--env`), so its id-tied fields a changed id drops
    are said (`_note_untied`).
    """
    from purejaxdrl.config import apply_overrides

    preset, note = load_preset_or_help(argv, env, algo)
    reject_other_algorithms(argv, preset.config.algo)
    args = parser(preset.config, preset.name, note).parse_args(argv)
    if refuse is not None:
        refuse(args)
    overrides = config_overrides(args, preset.config, preset.config.algo)
    read = apply_overrides(preset.config, overrides, read_texts=False)  # YAML's
    config = _validated(read, preset, env)
    if named:  # a preset the command chose: its summary says the id was replaced
        _note_untied(preset.config.env, config.env)  # a note, as --quiet leaves them
    return preset, args, config


def _validated(config: Any, preset: Any, env: str) -> Any:
    """`config` (`preset`'s, with the flags) validated; the file named if at fault.

    Raises:
      ConfigError: the run's first fault; prefixed with the preset file and
        section where the preset alone has that same fault (no flag caused it).

    """
    from purejaxdrl.setup_warnings import quiet_setup_warnings
    from purejaxdrl.training.config import validate
    from purejaxdrl.training.presets.load import preset_fault
    from purejaxdrl.training.run_env import validate as validate_run

    try:
        return validate_run(config)
    except ConfigError as e:
        try:
            with quiet_setup_warnings():  # the preset alone is no run: no advice
                validate(preset.config)
        except ConfigError as alone:
            if str(alone) == str(e):
                fault = preset_fault(env, preset.config.algo)
                raise ConfigError(f"{fault}{e}") from None
        raise


def _note_untied(preset: Any, run: Any) -> None:
    """Says which of the preset's id-tied env fields (`EnvConfig`) the run drops."""
    if run.id == preset.id:
        return
    options = ", ".join(f"{k}={v}" for k, v in preset.options.items())
    dropped = [f"env.options ({options})"] if options else []
    if preset.hide_observations and run.hide_observations != preset.hide_observations:
        dropped.append(f"env.hide_observations ({list(preset.hide_observations)})")
    if dropped:
        print(
            f"purejaxdrl: the preset's {' and '.join(dropped)} are {preset.id}'s, "
            f"so not passed to {run.id}",
            file=sys.stderr,
        )


def add_compile_cache_flags(parser: argparse.ArgumentParser) -> None:
    """--compile-cache DIR and --no-compile-cache."""
    parser.add_argument(
        "--compile-cache",
        metavar="DIR",
        help="keep compiled programs here so reruns skip compilation "
        f"(default: $JAX_COMPILATION_CACHE_DIR if set, else {DEFAULT_CACHE_DIR})",
    )
    parser.add_argument(
        "--no-compile-cache", action="store_true", help="compile from scratch"
    )


def use_compile_cache(args: argparse.Namespace) -> None:
    """Turns the compilation cache on unless --no-compile-cache was given."""
    if not args.no_compile_cache:
        # The flag's folder, else JAX's JAX_COMPILATION_CACHE_DIR, else ours.
        enable_compilation_cache(args.compile_cache)


def add_algo_flag(parser: argparse.ArgumentParser, algo: str) -> None:
    """--algo, and an epilog naming every other algorithm and how to see its flags.

    The parser's errors then name the help that lists `algo`'s fields:
    `purejaxdrl train --algo r2d2 --help` (a plain `--help` lists ppo's).
    """
    if isinstance(parser, Parser) and algo != DEFAULT_ALGO:
        parser.help_command = f"{parser.prog} --algo {algo} --help"
    parser.add_argument(
        "--algo", help=f"algorithm: one of {', '.join(names())} (default: {algo})"
    )
    others = [f"{a.name} ({a.summary})" for a in algorithms() if a.name != algo]
    parser.epilog = (
        f"The config fields above are the common ones and {algo}'s. Other "
        f"algorithms: {'; '.join(others)}. `--algo NAME --help` shows NAME's."
    )


# Tuple fields that may be empty (no masked features, modules or head layers):
# only their help offers the bare flag, which the others refuse.
_EMPTY_OK = {"env.hide_observations", "env.imports", "network.head_sizes"}


def _metavar(hint: Any) -> str:
    """The kind of value a flag takes, for its help: INT, STR, BOOL, FLOAT..."""
    origin = getattr(hint, "__origin__", None)
    if origin is tuple:
        return "STR" if str in getattr(hint, "__args__", ()) else "INT"
    if origin is dict:
        return "KEY=VALUE"
    if isinstance(hint, types.UnionType):  # `str | None` takes a STR
        kinds = {_metavar(arg) for arg in hint.__args__ if arg is not type(None)}
        return kinds.pop() if len(kinds) == 1 else "FLOAT"
    name = getattr(hint, "__name__", "")
    return {"int": "INT", "str": "STR", "bool": "BOOL"}.get(name, "FLOAT")


def _fields(defaults: Any, algo: str) -> list[tuple[str, Any, Any]]:
    """The config fields a run of `algo` uses, but `algo` (a flag of its own).

    Other algorithms' sections are left out: the run does not read them.
    """
    others = set(names()) - {algo}
    return [
        (path, hint, value)
        for path, hint, value in flat_fields(defaults)
        if path != "algo" and path.split(".")[0] not in others
    ]


def _help(description: str, default: str) -> str:
    """A flag's help: its field's description, then its default."""
    # argparse %-formats help strings: a literal % must be doubled.
    text = f"{description} " if description else ""
    return f"{text}(default: {default})".replace("%", "%%")


def add_config_flags(
    parser: argparse.ArgumentParser,
    defaults: Any,
    algo: str,
    *,
    unused: tuple[str, ...] = (),
) -> None:
    """One flag per config field a run of `algo` uses, showing `defaults`' values.

    Each flag's help is its field's description (the `Attributes:` entry of
    the config class that declares it) followed by the default. Flags of the
    sections or fields in `unused` (a sweep's `eval`, `checkpoint.keep`) parse,
    so that the command can refuse them in one line, but `--help` does not list
    them.
    """
    group = parser.add_argument_group("config fields")
    descriptions = field_descriptions(defaults)
    for path, hint, value in _fields(defaults, algo):
        description = descriptions.get(path, "")
        hidden = path in unused or path.split(".")[0] in unused

        def text(
            default: str, description: str = description, hidden: bool = hidden
        ) -> str:
            return argparse.SUPPRESS if hidden else _help(description, default)

        if path == "env.options":
            parser.env_id = defaults.env.id  # whose options --env.X may mean
            group.add_argument(
                flag(path),
                dest="env.options",
                action="append",
                metavar="KEY=VALUE",
                help=text(str(value), f"{description} One KEY=VALUE, repeatable."),
            )
            continue
        shown = list(value) if isinstance(value, tuple) else value
        metavar = _metavar(hint)
        if metavar == "BOOL":
            # A bare `--ppo.anneal-lr` means true; `--ppo.anneal-lr false` still works.
            group.add_argument(
                flag(path),
                dest=path,
                nargs="?",
                const="true",
                metavar=metavar,
                help=text(f"{shown}; the bare flag means true"),
            )
            continue
        if getattr(hint, "__origin__", None) is tuple:
            # The bare flag (or `[]`, `()`, `""`) empties it: `head_sizes: ()`;
            # the help says so only where none is valid.
            bare = "; the bare flag means none" if path in _EMPTY_OK else ""
            group.add_argument(
                flag(path),
                dest=path,
                nargs="*",
                metavar=metavar,
                help=text(f"{shown}{bare}"),
            )
            continue
        action = group.add_argument(
            flag(path), dest=path, metavar=metavar, help=text(str(shown))
        )
        action.takes_none = admits_none(hint)  # for Parser's errors


def reject_other_algorithms(
    argv: Sequence[str], algo: str, *, resumed: bool = False
) -> None:
    """Refuses flags of another algorithm's section, naming the fix.

    `resumed`: `algo` is a run's being resumed, which no flag can change.

    Raises:
      UsageError: for e.g. `--impala.policy-lag` in a run of ppo.

    """
    for arg in argv:
        # `--ppo.clip-eps`: a section's field (`--seeds` is a flag of its own).
        dotted = arg.startswith("--") and "." in arg.split("=")[0]
        section = arg[2:].split(".")[0].replace("-", "_") if dotted else ""
        if section in names() and section != algo:
            flag = arg.split("=")[0]
            if resumed:  # "--algo X" would be refused next: a checkpoint is algo's
                raise UsageError(
                    f"{flag} sets {section}'s hyper-parameters, but this run trains "
                    f"{algo}, and a resume keeps the run's algorithm ({algo}); "
                    "drop it (a new run of another algorithm is `purejaxdrl "
                    f"train --algo {section} ...`)."
                )
            raise UsageError(unread_section(flag, section, algo, f"--algo {section}"))


def config_overrides(
    namespace: argparse.Namespace, defaults: Any, algo: str
) -> dict[str, Any]:
    """Nested overrides from the config flags the user actually gave.

    `--env.option`s add to the defaults' options, unless `--env.id` names
    another environment: options are their environment's (`EnvConfig`).
    """
    out: dict[str, Any] = {}
    other_env = getattr(namespace, "env.id", None) not in (None, defaults.env.id)
    for path, _, default in _fields(defaults, algo):
        value = getattr(namespace, path, None)
        if value is None:
            continue
        if path == "env.options":
            value = {**({} if other_env else default), **parse_options(value)}
        elif isinstance(default, tuple) and isinstance(value, list):
            value = tuple_items(value, flag(path))
        node = out
        *parents, leaf = path.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out


def tuple_items(words: Sequence[str], flag: str = "--env.imports") -> list[str]:
    """A tuple flag's words as its items, in the spellings YAML and --grid use.

    The bare flag, `[]`, `()` and `""` are none; `[1,3]`, `1,3` and `1 3` are
    1 and 3. Unmatched brackets (`[1 3)`) are refused, naming `flag`.
    """
    text = " ".join(words).replace(",", " ").strip()
    if text[:1] + text[-1:] in ("[]", "()"):
        text = text[1:-1]
    if any(bracket in text for bracket in "[]()"):
        raise UsageError(
            f"{flag} {' '.join(words)!r} has unmatched brackets; write its "
            "items as [a,b], a,b or a b."
        )
    return text.split()


def parse_options(items: Sequence[str]) -> dict[str, Any]:
    """`--env.option KEY=VALUE` items as a dict (`read_option`'s values)."""
    options = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise UsageError(
                f"--env.option {item!r} is not KEY=VALUE; e.g. "
                f"{any_value(key or 'length')}."
            )
        try:
            options[key] = read_option(text)
        except yaml.YAMLError as e:
            reason = " ".join(str(e).split())
            raise UsageError(
                f"--env.option {item!r}: {text!r} is not a YAML value ({reason}); "
                "quote it if it is a string, e.g. --env.option 'name=\"a: b\"'."
            ) from None
    return options
