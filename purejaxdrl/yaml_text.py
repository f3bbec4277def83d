"""Reading preset YAML: exponent floats, and a key written twice refused.

Preset files and `--env.option` values are read so: one spelling, one value.
PyYAML keeps the last of a mapping's repeated keys silently, so a user who
adds `gamma: 0.9` above a copied preset's `gamma: 0.99` trained with 0.99.
"""

import re
from collections.abc import Mapping
from typing import Any

import yaml


class _Loader(yaml.SafeLoader):
    """YAML's safe loader, reading exponent notation (`2e-2`, `1e3`) as floats.

    PyYAML's YAML 1.1 floats need a dot and a signed exponent (`1.0e+3`).
    """


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


class RepeatedKeyError(yaml.YAMLError):
    """A mapping writes one key twice; `line` is the second's (1-based)."""

    def __init__(self, key: str, section: str, first: int, line: int) -> None:
        where = f"in section {section}" if section else "at the top level"
        super().__init__(
            f"key {key!r} appears twice {where} (lines {first} and {line}); keep one"
        )
        self.line = line


def load_yaml(text: str) -> Any:
    """`text` read as safe YAML, `2e-2` and `1e3` floats (quoted, strings).

    Raises:
      RepeatedKeyError: (a yaml.YAMLError) a mapping repeats a key.
      yaml.YAMLError: `text` is no YAML (`[1,`).

    """
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_keys(node, "", set())
        return loader.construct_document(node)
    finally:
        loader.dispose()


def read_text(text: str) -> Any:
    """`text` as `--env.option` reads a value (YAML); itself where it is no YAML."""
    try:
        return load_yaml(text)
    except yaml.YAMLError:
        return text


def read_option_texts(options: Any) -> Any:
    """`env.options` text (from Python) read as `--env.option` reads it, at any depth.

    `{"episode_length": "25", "randomize": "true"}` built the same environment
    as the flag's `episode_length=25 randomize=true`, but was saved as text, so
    resuming with 25 and True was refused as a change. Text that YAML reads as
    a mapping (`"a: b"`) was meant as text, and stays text.
    """
    if isinstance(options, Mapping):
        return {key: read_option_texts(value) for key, value in options.items()}
    if not isinstance(options, str):
        return options
    value = read_text(options)
    return options if isinstance(value, Mapping) else value


def _check_keys(node: yaml.Node, section: str, walked: set[int]) -> None:
    """Raises RepeatedKeyError for the first key repeated in `node`'s mappings.

    `walked` holds the nodes seen: an alias is the node it names, so a node
    reached twice (`&x [*x]` names itself) is checked once, not forever.
    """
    if id(node) in walked:
        return
    walked.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _check_keys(item, section, walked)
    if not isinstance(node, yaml.MappingNode):
        return
    seen: dict[str, int] = {}
    for key_node, value_node in node.value:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
        line = key_node.start_mark.line + 1
        if key is not None and key != "<<":  # `<<` merges: YAML's own rule
            if key in seen:
                raise RepeatedKeyError(key, section, seen[key], line)
            seen[key] = line
        _check_keys(value_node, f"{section}.{key}".lstrip("."), walked)
