"""The user tier's docstrings: every parameter described, a default shown, examples."""

import ast
import importlib
import inspect
import json
import re
import textwrap

import pytest

# The functions the guides name, whose API entries had no parameter table.
GUIDED = ["load_preset", "load_policy", "load_sweep", "load_pbt",
          "sweeps.export_run", "sweeps.export_member", "sweeps.best_run",
          "observe.plot_curves", "observe.load_curves", "observe.record_episode",
          "env.make", "env.register", "validate",
          "enable_compilation_cache"]  # fmt: skip
# The top level's entry points: each shows how it is called.
EXAMPLED = ["train", "load_preset", "sweep", "pbt", "evaluate_policy",
            "export_policy", "load_policy", "apply_overrides", "load_sweep",
            "resume_sweep", "load_pbt", "resume_pbt", "validate",
            "resume_config", "preset_names", "enable_compilation_cache"]  # fmt: skip


def _function(path: str):
    module, _, name = f"purejaxdrl.{path}".rpartition(".")
    return getattr(importlib.import_module(module), name)


def _args(function) -> str:
    """The `Args:` section of `function`'s docstring ('' without one)."""
    doc = inspect.getdoc(function)
    return re.split(r"\n\n(?=\w+:\n)", doc.partition("\nArgs:\n")[2])[0]


def _named_defaults(function) -> set[str]:
    """The parameters whose default the source spells as a name (`EPISODES`)."""
    node = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
    arguments = node.args
    positional = arguments.posonlyargs + arguments.args
    pairs = list(zip(positional[::-1], arguments.defaults[::-1], strict=False))
    pairs += list(zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True))
    return {a.arg for a, d in pairs if isinstance(d, ast.Name | ast.Attribute)}


@pytest.mark.parametrize("path", sorted(set(GUIDED + EXAMPLED)))
def test_every_parameter_has_an_args_entry(path):
    function = _function(path)
    args = _args(function)
    for name, parameter in inspect.signature(function).parameters.items():
        stars = "**" if parameter.kind is parameter.VAR_KEYWORD else ""
        entry = rf"^  {re.escape(stars + name)}: "
        assert re.search(entry, args, re.M), f"{path}: no Args entry for {name}"


@pytest.mark.parametrize("path", sorted(set(GUIDED + EXAMPLED)))
def test_a_default_the_signature_shows_as_a_name_is_stated(path):
    # The site renders `episodes: int = EPISODES`, `algo: str = DEFAULT_ALGO`:
    # the entry says the value (`default 5`, `default "ppo"`).
    function = _function(path)
    args = " ".join(_args(function).split())
    parameters = inspect.signature(function).parameters
    for name in _named_defaults(function):
        entry = args.partition(f" {name}: ")[2].split(": ")[0]
        said = f"default {json.dumps(parameters[name].default)}"
        assert said in entry, f"{path}: the entry of {name} does not say {said}"


def test_the_named_defaults_are_found():
    assert _named_defaults(_function("evaluate_policy")) == {"episodes"}
    assert _named_defaults(_function("load_preset")) == {"algo"}
    assert _named_defaults(_function("observe.plot_curves")) == {"metric"}


@pytest.mark.parametrize("path", EXAMPLED)
def test_the_entry_points_show_an_example(path):
    doc = inspect.getdoc(_function(path))
    examples = doc.partition("\nExamples:\n")[2]
    assert re.search(r"^  >>> .*\n  >>> ", examples, re.M), path


def test_the_site_shows_a_default_named_by_a_constant_as_its_value():
    # ds20 #5: the API reference rendered `episodes: int = EPISODES`, a name
    # a reader of the site cannot look up; `inspect.signature` shows 5.
    import pathlib
    import sys

    import griffe

    root = pathlib.Path(__file__).parent.parent
    sys.path.insert(0, str(root / "docs"))
    try:
        from griffe_fields import FieldDocs
    finally:
        sys.path.remove(str(root / "docs"))
    package = griffe.load(
        "purejaxdrl",
        search_paths=[str(root)],
        extensions=griffe.load_extensions(FieldDocs()),
    )
    for path, name, shown in [
        ("training.policy.evaluate.evaluate_policy", "episodes", "5"),
        ("training.presets.load.load_preset", "algo", "'ppo'"),
        ("observe.plot_curves", "metric", "'episode/mean_return'"),
    ]:
        default = package[path].parameters[name].default
        assert str(default) == shown, (path, name, default)
