"""A griffe extension: the API reference shows every field of a config class.

mkdocstrings renders griffe's reading of the source, in which a config's
`Attributes:` section describes the fields its own class declares only.
The run config and each registered algorithm's config describe every
field, inherited ones too, at run time (`purejaxdrl.config_docs.
document_fields`, which builds the section from the same texts `--help`
shows); this extension hands that docstring to the page, so the site, the
command line and `help()` read one text. mkdocs.yml names it.

It also shows a default given by a module's constant (`episodes: int =
EPISODES`) as its value (`= 5`), as `inspect.signature` does: a reader of the
site cannot look the name up.
"""

import dataclasses
import importlib
import inspect
from typing import Any

import griffe


class FieldDocs(griffe.Extension):
    """Replaces a purejaxdrl dataclass's docstring with its run-time one."""

    def on_class(self, *, cls: griffe.Class, **kwargs: object) -> None:
        """Hands `cls` the run-time docstring where it differs from the source's."""
        del kwargs
        if not cls.path.startswith("purejaxdrl.") or cls.docstring is None:
            return
        runtime = getattr(importlib.import_module(cls.module.path), cls.name, None)
        if not (isinstance(runtime, type) and dataclasses.is_dataclass(runtime)):
            return
        doc = inspect.cleandoc(runtime.__dict__.get("__doc__") or "")
        if doc and doc != cls.docstring.value:
            cls.docstring.value = doc

    def on_function(self, *, func: griffe.Function, **kwargs: object) -> None:
        """Shows each default that names a constant as the constant's value."""
        del kwargs
        if not func.path.startswith("purejaxdrl."):
            return
        named = [p for p in func.parameters if isinstance(p.default, griffe.ExprName)]
        runtime = _runtime(func) if named else None
        if runtime is None:
            return
        try:
            defaults = inspect.signature(runtime).parameters
        except (TypeError, ValueError):
            return
        for parameter in named:
            value = getattr(defaults.get(parameter.name), "default", None)
            if type(value) in (int, float, str):  # a literal, not a bool's name
                parameter.default = repr(value)


def _runtime(func: griffe.Function) -> Any:
    """The object `func` reads, imported; None where it cannot be."""
    try:
        obj: Any = importlib.import_module(func.module.path)
    except ImportError:
        return None
    for name in func.path.removeprefix(func.module.path + ".").split("."):
        obj = getattr(obj, name, None)
    return obj if callable(obj) else None
