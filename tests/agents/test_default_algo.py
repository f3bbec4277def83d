"""One default algorithm, `agents.registry.DEFAULT_ALGO`, wherever one is assumed."""

import argparse
import inspect
import pathlib
import re

import purejaxdrl as pjd
from purejaxdrl.agents import registry
from purejaxdrl.agents.registry import DEFAULT_ALGO
from purejaxdrl.training.presets.load import load_preset, read_preset


def test_the_configs_and_presets_default_is_the_constant():
    assert DEFAULT_ALGO in registry.names()
    assert pjd.TrainConfig().algo == DEFAULT_ALGO
    for function in (load_preset, read_preset):
        assert inspect.signature(function).parameters["algo"].default == DEFAULT_ALGO


def test_a_command_without_algo_or_env_starts_from_it(monkeypatch):
    from purejaxdrl.cli.start import command_start

    monkeypatch.setattr(registry, "DEFAULT_ALGO", "a2c")  # read when it starts
    known = argparse.Namespace(algo=None, env=None, **{"env.id": None})
    assert command_start(known)[1] == "a2c"


def test_no_module_outside_agents_writes_the_default_itself():
    # `algo: str = "ppo"`, `algo or "ppo"`: a default of its own, which a
    # change of the library's default would miss.
    package = pathlib.Path(pjd.__file__).parent
    default = re.compile(r"""(\balgo\b[^=\n]*=|\bor)\s*["']ppo["']""")
    found = [
        f"{path.relative_to(package)}:{number}"
        for path in package.rglob("*.py")
        if "agents" not in path.relative_to(package).parts
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if default.search(line) and not line.lstrip().startswith("#")
    ]
    assert found == []
