"""`--env.option KEY=VALUE`'s values, read as YAML with exponent-notation floats."""

from typing import Any

from purejaxdrl.yaml_text import load_yaml


def read_option(text: str) -> Any:
    """`text` read as YAML: `2e-2`, `1.5E2` and `1e3` are floats; quoted, strings.

    PyYAML alone read `tau=2e-2` as the string '2e-2', then refused it as "not
    a number", where the rest of the CLI (`--grid learning_rate=1e-4,3e-4`)
    and preset files take it (`yaml_text.load_yaml`).

    Raises:
      yaml.YAMLError: `text` is no YAML (`[1,`).

    """
    return load_yaml(text)
