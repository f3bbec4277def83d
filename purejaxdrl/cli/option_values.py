"""`--env.option KEY=VALUE`'s values, read as YAML with exponent-notation floats."""

import re
from typing import Any

import yaml


class _OptionLoader(yaml.SafeLoader):
    """YAML's safe loader, with numbers in exponent notation (`2e-2`) floats.

    PyYAML reads YAML 1.1, whose floats need a dot and a signed exponent, so
    `tau=2e-2` was the string '2e-2', then refused as "not a number", where
    the rest of the CLI (`--grid learning_rate=1e-4,3e-4`) takes them.
    """


_OptionLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def read_option(text: str) -> Any:
    """`text` read as YAML: `2e-2`, `1.5E2` and `1e3` are floats; quoted, strings.

    Raises:
      yaml.YAMLError: `text` is no YAML (`[1,`).

    """
    return yaml.load(text, Loader=_OptionLoader)  # noqa: S506 (a SafeLoader)
