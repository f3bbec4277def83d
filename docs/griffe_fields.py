"""A griffe extension: the API reference shows every field of a config class.

mkdocstrings renders griffe's reading of the source, in which a config's
`Attributes:` section describes the fields its own class declares only.
The run config and each registered algorithm's config describe every
field, inherited ones too, at run time (`purejaxdrl.config_docs.
document_fields`, which builds the section from the same texts `--help`
shows); this extension hands that docstring to the page, so the site, the
command line and `help()` read one text. mkdocs.yml names it.
"""

import dataclasses
import importlib
import inspect

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
