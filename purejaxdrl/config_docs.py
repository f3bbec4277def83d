"""Field descriptions read from the config classes' docstrings, and their flags.

Every config dataclass documents its fields once, in the `Attributes:` section
of the class that declares them; the command line's `--help` and the docs show
those descriptions, so what a field means is written in one place. `flag` is
each field's command-line flag, for the command line and for every hint that
names one.
"""

import dataclasses
import functools
import inspect
import re
from typing import Any

# An entry of an `Attributes:` section: `name: text` or `a, b: text`.
_ENTRY = re.compile(r"(\w+(?:, \w+)*):(?: (.*))?")


def attribute_docs(cls: type) -> dict[str, str]:
    """The entries of the `Attributes:` section of `cls`'s own docstring.

    Google style, as every config class writes them: one `name: text` entry
    per field (or `a, b: text` for several), continued on more-indented lines,
    up to the first blank line. Whitespace is collapsed; inherited docstrings
    are not read (see `field_docs`).
    """
    lines = inspect.cleandoc(cls.__dict__.get("__doc__") or "").splitlines()
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


def did_you_mean(path: str) -> str:
    """The hint for a misspelt field: the field at `path` and its flag.

    `did you mean env.options (--env.option KEY=VALUE)? `: the flag as it is
    typed, with its value where the flag is not the field's name.
    """
    usage = " ".join(_RENAMED_FLAGS.get(path, (flag(path),)))
    return f"did you mean {path} ({usage})? "
