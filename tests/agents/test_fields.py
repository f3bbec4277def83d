"""The shared field groups: one declaration each, redeclared only for a default."""

import dataclasses

import pytest

from purejaxdrl.agents import fields
from purejaxdrl.agents.registry import algorithms

GROUPS = [
    cls
    for cls in vars(fields).values()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls)
]


def _declared(cls: type) -> dict[str, tuple[object, bool]]:
    """Fields `cls` itself declares: name -> (annotation, static)."""
    own = cls.__dict__.get("__annotations__", {})
    kinds = {f.name: f.metadata.get("static", False) for f in dataclasses.fields(cls)}
    return {name: (hint, kinds[name]) for name, hint in own.items()}


@pytest.mark.parametrize("record", algorithms(), ids=lambda r: r.name)
def test_a_redeclared_field_keeps_its_groups_type_and_kind(record):
    # A config may redeclare a shared field to change its default, never its
    # type or whether it is static (a static field read as a leaf would trace).
    config_type = record.config_type
    for klass in config_type.__mro__[1:]:
        if not dataclasses.is_dataclass(klass):
            continue
        for name, kind in _declared(klass).items():
            for other in config_type.__mro__[: config_type.__mro__.index(klass)]:
                if dataclasses.is_dataclass(other) and name in _declared(other):
                    assert _declared(other)[name] == kind, (other, klass, name)


def test_every_group_is_shared():
    users = {
        group: [r.name for r in algorithms() if issubclass(r.config_type, group)]
        for group in GROUPS
    }
    assert all(len(names) >= 2 for names in users.values()), users


def test_the_groups_are_not_pytrees_but_the_configs_are():
    import jax

    for record in algorithms():
        config = record.default_config()
        fields_ = dataclasses.fields(config)
        dynamic = [f.name for f in fields_ if not f.metadata.get("static")]
        assert len(jax.tree.leaves(config)) == len(dynamic), record.name
