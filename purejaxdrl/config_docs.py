"""Field descriptions read from the config classes' docstrings, and their flags.

Every config dataclass documents its fields once, in the `Attributes:` section
of the class that declares them; the command line's `--help` and the docs show
those descriptions, so what a field means is written in one place. `flag` is
each field's command-line flag, for the command line and for every hint that
names one.
"""

import ast
import dataclasses
import functools
import inspect
import json
import re
import textwrap
from typing import Any, TypeVar

import yaml

_Class = TypeVar("_Class", bound=type)

# An entry of an `Attributes:` section: `name: text` or `a, b: text`.
_ENTRY = re.compile(r"(\w+(?:, \w+)*):(?: (.*))?")


def attribute_docs(cls: type) -> dict[str, str]:
    """The entries of the `Attributes:` section of `cls`'s own docstring.

    Google style, as every config class writes them: one `name: text` entry
    per field (or `a, b: text` for several), continued on more-indented lines,
    up to the first blank line. Whitespace is collapsed; inherited docstrings
    are not read (see `field_docs`), nor the entries `document_fields` adds
    to it: the docstring read is the one `cls` was written with.
    """
    lines = inspect.cleandoc(_declared_doc(cls)).splitlines()
    if "Attributes:" not in lines:
        return {}
    entries: dict[str, list[str]] = {}
    indent, text = None, []
    for line in lines[lines.index("Attributes:") + 1 :]:
        depth = len(line) - len(line.lstrip())
        indent = depth if indent is None else indent
        if not line.strip() or depth < indent:
            break
        if depth > indent:
            text.append(line.strip())
            continue
        match = _ENTRY.fullmatch(line.strip())
        if match is None:
            break
        text = [match.group(2) or ""]
        entries.update(dict.fromkeys(match.group(1).split(", "), text))
    return {name: " ".join(" ".join(text).split()) for name, text in entries.items()}


@functools.cache
def field_docs(cls: type) -> dict[str, str]:
    """Field name -> description, for the documented fields of dataclass `cls`.

    A field is described once, in the `Attributes:` section of the class that
    declares it, which may be a base of `cls` (the shared field groups of
    `agents.fields`); a class that only redeclares a field's default keeps
    that description.
    """
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        docs.update(attribute_docs(klass))
    return {f.name: docs[f.name] for f in dataclasses.fields(cls) if f.name in docs}


def document_fields(cls: _Class) -> _Class:
    """Makes `cls`'s docstring describe every field, inherited ones too.

    `help()` and `inspect.getdoc` show a class's own docstring only, and a
    config's fields are described where they are declared, often on a base
    (`agents.fields`, `training.config.RunFields`). This rewrites the
    `Attributes:` section of dataclass `cls`'s own docstring with every
    entry `field_docs` finds, in field order, from the same texts the
    command line's `--help` shows; the rest of the docstring is kept.
    Applied to the run config and each registered algorithm's config (the
    API reference renders the result: docs/griffe_fields.py). The docstring
    `cls` was written with is kept for `attribute_docs`, so a field is still
    described by the class that declares it alone. Returns `cls`.
    """
    declared = _declared_doc(cls)
    lines = inspect.cleandoc(declared).splitlines()
    if "Attributes:" in lines:
        # The section runs to its first blank line (as `attribute_docs` reads it).
        start = lines.index("Attributes:")
        blank = [i for i in range(start, len(lines)) if not lines[i].strip()]
        lines = lines[:start] + lines[blank[0] + 1 if blank else len(lines) :]
    while lines and not lines[-1].strip():
        lines.pop()
    entries = [
        line
        for name, text in field_docs(cls).items()
        for line in textwrap.wrap(
            f"{name}: {text}",
            width=76,
            initial_indent="  ",
            subsequent_indent="    ",
            break_long_words=False,
            break_on_hyphens=False,
        )
    ]
    if entries:
        cls._declared_doc = declared
        cls.__doc__ = "\n".join([*lines, "", "Attributes:", *entries, ""])
    return cls


def _declared_doc(cls: type) -> str:
    """`cls`'s own docstring as written, before `document_fields` (or "")."""
    return cls.__dict__.get("_declared_doc", cls.__dict__.get("__doc__")) or ""


def field_descriptions(config: Any, prefix: str = "") -> dict[str, str]:
    """Dotted path -> description of every field of `config`, nested ones too.

    A field without a description maps to "" (a test keeps there being none).
    """
    docs = field_docs(type(config))
    out = {}
    for field in dataclasses.fields(config):
        path = f"{prefix}{field.name}"
        out[path] = docs.get(field.name, "")
        value = getattr(config, field.name)
        if dataclasses.is_dataclass(value):
            out.update(field_descriptions(value, f"{path}."))
    return out


# Fields whose flag is not their dotted path with dashes, and the value it
# takes: env.options takes one KEY=VALUE per (repeated) flag, so it is singular.
_RENAMED_FLAGS = {"env.options": ("--env.option", "KEY=VALUE")}


def flag(path: str) -> str:
    """The command-line flag of the field at dotted `path`.

    `--ppo.learning-rate` for `ppo.learning_rate`; `--env.option` for
    `env.options`.
    """
    renamed = _RENAMED_FLAGS.get(path)
    return renamed[0] if renamed else "--" + path.replace("_", "-")


# Abbreviations newcomers bring from other libraries, as the field they mean
# (CleanRL's and SB3's `alpha` is the temperature itself, not its rate): read
# by `apply_overrides`' and the command line's hints alike.
FIELD_ALIASES = {
    "lr": "learning_rate",
    "alpha": "init_alpha",
    "alpha_lr": "alpha_learning_rate",
    # A preset's promise names its budget: the steps a run trains for.
    "budget": "total_steps",
}


def did_you_mean(path: str) -> str:
    """The hint for a misspelt field: the field at `path` and its flag.

    `did you mean env.options (--env.option KEY=VALUE)? `: the flag as it is
    typed, with its value where the flag is not the field's name.
    """
    usage = " ".join(_RENAMED_FLAGS.get(path, (flag(path),)))
    return f"did you mean {path} ({usage})? "


def both_ways(flag_name: str, python: str, value: Any, py_value: Any = None) -> str:
    """A setting spelled for both audiences: `--seeds 8 (seeds=8 in Python)`.

    A rule is checked once, whether the command line or a Python call gave the
    value, and the check cannot tell which: its fix names the flag first and
    the keyword argument or config field after it, as every such message does.

    Args:
      flag_name: the option (`--seeds`), or a flag with its leading words.
      python: the keyword argument or dotted config field (`seeds`,
        `ppo.learning_rate`).
      value: the value as typed after the flag (`8`, `64 64`, `N`).
      py_value: the value as Python writes it, where it differs (`(64, 64)`).

    """
    shown = value if py_value is None else py_value
    return f"{flag_name} {value} ({python}={shown} in Python)"


def field_example(path: str, value: Any, py_value: Any = None) -> str:
    """`both_ways` for the config field at dotted `path`, with its own flag.

    `--num-envs 4 (num_envs=4 in Python)`: the field's name is its
    `apply_overrides` key.
    """
    return both_ways(flag(path), path, value, py_value)


# A fix as `both_ways` spells it, read back beside its writer: `--num-envs 4
# (num_envs=4 in Python)`; the flag's words end before its parenthesis.
_BOTH_WAYS = re.compile(r"--[\w.-]+(?: [^()]*?)? \(([\w.]+)=(.*?) in Python\)")
# `did_you_mean`'s hint: the field's flag, which a file spells as its key.
_FLAG_MEANT = re.compile(r"did you mean ([\w.]+) \(--[^()]*\)\?")


def in_yaml(message: str) -> str:
    """`message` with its fixes as a preset file spells them, for a file's error.

    `--network.hidden-sizes 64 64 (network.hidden_sizes=(64, 64) in Python)`
    becomes `network.hidden_sizes: [64, 64] in the file` (a section takes
    dotted keys), and `did you mean num_envs (--num-envs)?`, `did you mean
    num_envs (num_envs: in the file)?`.
    """

    def spelt(match: re.Match) -> str:
        try:  # a Python literal, as YAML writes it: tuples as lists
            value = json.loads(json.dumps(ast.literal_eval(match[2])))
            shown = yaml.safe_dump(value, default_flow_style=True, width=1000)
            shown = shown.removesuffix("\n").removesuffix("\n...")
        except (ValueError, SyntaxError, TypeError):
            shown = match[2]
        return f"{match[1]}: {shown} in the file"

    message = _BOTH_WAYS.sub(spelt, message)
    return _FLAG_MEANT.sub(r"did you mean \1 (\1: in the file)?", message)
