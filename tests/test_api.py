"""The public API: two tiers, every name documented, every algorithm reachable."""

import importlib
import inspect
import pkgutil

import pytest

import purejaxdrl as pjd
from purejaxdrl.agents.registry import algorithms

SUBPACKAGES = sorted(
    m.name
    for m in pkgutil.iter_modules(pjd.__path__)
    if m.ispkg and m.name not in ("cli", "observe")
)


def _public(module) -> list[tuple[str, object]]:
    return [(name, getattr(module, name)) for name in module.__all__]


def test_no_subpackage_is_shadowed():
    # `import purejaxdrl.x as m` must bind the module x, whatever the top
    # level exports.
    for info in pkgutil.iter_modules(pjd.__path__):
        module = importlib.import_module(f"purejaxdrl.{info.name}")
        if hasattr(pjd, info.name):
            assert getattr(pjd, info.name) is module, info.name


@pytest.mark.parametrize(
    "module", ["purejaxdrl", *(f"purejaxdrl.{m}" for m in SUBPACKAGES)]
)
def test_every_public_name_exists_and_has_a_docstring(module):
    module = importlib.import_module(module)
    assert module.__doc__, module.__name__
    for name, value in _public(module):
        if inspect.ismodule(value) or not callable(value):
            continue  # modules are checked as modules; constants need no text
        assert inspect.getdoc(value), f"{module.__name__}.{name} has no docstring"


def test_the_top_level_is_the_user_tier():
    # Builders reach experiments, runners and agents through their subpackage.
    for name in ("make_experiment", "make_runner", "make_ppo", "unroll", "Agent"):
        assert not hasattr(pjd, name), name
    assert pjd.training.make_experiment and pjd.runners.make_runner


def test_every_algorithm_is_reachable_from_agents():
    exported = {id(v) for _, v in _public(pjd.agents)}
    for record in algorithms():
        assert id(record.config_type) in exported, record.name
        assert id(record.make_agent) in exported, record.name
