"""The public API: two tiers, every name documented, every algorithm reachable."""

import ast
import builtins
import dataclasses
import importlib
import importlib.util
import inspect
import pathlib
import pkgutil
import re
import textwrap
import typing

import pytest

import purejaxdrl as pjd
from purejaxdrl.agents.registry import algorithms

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Every package with an `__all__`, at any depth: the public tier and the
# builders' tier (purejaxdrl.env.host, purejaxdrl.cli included).
PUBLIC = ["purejaxdrl"] + sorted(
    m.name
    for m in pkgutil.walk_packages(pjd.__path__, "purejaxdrl.")
    if m.ispkg and hasattr(importlib.import_module(m.name), "__all__")
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


def test_the_public_packages_are_the_ones_found():
    # A package loses its `__all__` only on purpose: the list below says so.
    assert PUBLIC == [
        "purejaxdrl",
        "purejaxdrl.agents",
        "purejaxdrl.cli",
        "purejaxdrl.env",
        "purejaxdrl.env.host",
        "purejaxdrl.networks",
        "purejaxdrl.observe",
        "purejaxdrl.replay",
        "purejaxdrl.rl",
        "purejaxdrl.runners",
        "purejaxdrl.sweeps",
        "purejaxdrl.training",
    ]


@pytest.mark.parametrize("module", PUBLIC)
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


def test_the_optim_pieces_the_built_in_learners_use_are_exported_from_agents():
    # A user's learner is built as the built-ins are (PPO's epochs of
    # minibatch steps, A2C's one step): every name they import from
    # agents.optim is public, as the very object.
    used = set()
    for module in ("ppo", "a2c"):
        source = (ROOT / "purejaxdrl" / "agents" / f"{module}.py").read_text()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and node.module.endswith(".optim"):
                used |= {alias.name for alias in node.names}
    assert {"flat_gradient_epochs", "flat_learner_init", "learner_optimizer"} <= used
    optim = importlib.import_module("purejaxdrl.agents.optim")
    for name in sorted(used):
        assert name in pjd.agents.__all__, name
        assert getattr(pjd.agents, name) is getattr(optim, name), name


def test_the_top_level_docstring_names_every_public_module():
    # The shared records (types) are imported by the guides' examples.
    for name in ("training", "runners", "agents", "networks", "replay", "env"):
        assert f"`{name}`" in pjd.__doc__, name
    assert "`purejaxdrl.types`" in pjd.__doc__


def _site_hooks():
    spec = importlib.util.spec_from_file_location(
        "site_hooks", ROOT / "docs" / "site_hooks.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_api_reference_documents_every_public_package_and_name():
    pytest.importorskip("mkdocs")
    hooks = _site_hooks()
    modules = hooks.api_modules()
    assert set(PUBLIC) <= set(modules), "a public package has no API page"
    for module in PUBLIC:
        assert modules[module] == importlib.import_module(module).__all__, module
    # The modules a package exports (config, parallel, agents.ppo) and the
    # shared records (types): their `__all__`, or without one their public
    # functions, classes and type aliases.
    for module, names in modules.items():
        if module not in PUBLIC:
            loaded = importlib.import_module(module)
            assert names == getattr(loaded, "__all__", names), module
            assert names and all(callable(getattr(loaded, n)) for n in names)
    nav = (ROOT / "mkdocs.yml").read_text()
    missing = [m for m in modules if f"api/{m}.md" not in nav]
    assert not missing, f"mkdocs.yml's nav lacks the API pages of {missing}"


@pytest.mark.parametrize(
    "module", ["purejaxdrl.config", "purejaxdrl.parallel", "purejaxdrl.types"]
)
def test_the_public_modules_name_their_public_names(module):
    # `pjd.config` and `pjd.parallel` are exported, `purejaxdrl.types` named
    # by the package docstring: `dir()` mixed their names with `jax`, `Any`.
    loaded = importlib.import_module(module)
    assert loaded.__all__, module
    own = [
        name
        for name, value in vars(loaded).items()
        if not name.startswith("_")
        and (inspect.isfunction(value) or inspect.isclass(value))
        and value.__module__ == module
    ]
    assert set(own) <= set(loaded.__all__), module
    assert all(hasattr(loaded, name) for name in loaded.__all__), module
    assert not {"jax", "Any", "Mesh", "P"} & set(loaded.__all__)


PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
IMPORT = re.compile(
    r"^[ \t]*(?:from purejaxdrl[\w.]* import (?:\([^)]*\)|.*)|import purejaxdrl.*)$",
    re.MULTILINE,
)


def _doc_imports() -> list[tuple[str, str, str | None]]:
    """(file, module, name) for each purejaxdrl import the docs show a reader.

    The examples (docs/examples/*.py) and the Python blocks of the pages
    (docs/**/*.md, the README); `name` is None for `import module`.
    """
    sources = [(p, p.read_text()) for p in sorted(ROOT.glob("docs/examples/*.py"))]
    for page in [ROOT / "README.md", *sorted(ROOT.glob("docs/**/*.md"))]:
        blocks = PYTHON_BLOCK.findall(page.read_text())
        sources.append((page, "\n".join(blocks)))
    found = []
    for path, text in sources:
        for statement in IMPORT.findall(text):
            node = ast.parse(textwrap.dedent(statement)).body[0]
            where = str(path.relative_to(ROOT))
            if isinstance(node, ast.ImportFrom):
                found += [(where, node.module, a.name) for a in node.names]
            else:
                found += [(where, a.name, None) for a in node.names]
    return found


def test_every_name_the_docs_import_has_an_api_page():
    # A builder follows the guides' imports: each name (a function, a record,
    # a module) is on a page of the API reference, as the very object the
    # import gives, whichever path the guide takes to it.
    pytest.importorskip("mkdocs")
    modules = _site_hooks().api_modules()
    imports = _doc_imports()
    # The parser sees the example's multi-line imports and the pages' blocks.
    assert (
        "docs/examples/reinforce.py",
        "purejaxdrl.agents",
        "RunShape",
    ) in imports
    assert (
        "docs/guide/bring-your-own-env.md",
        "purejaxdrl.types",
        "TimeStep",
    ) in imports
    missing = []
    for where, module, name in imports:
        # From the module the reference lists it under, not a submodule
        # without a page (`purejaxdrl.agents.base`: ds18 #3).
        if module not in modules:
            missing.append(f"{where}: {module} has no page")
        if name is None:
            continue
        loaded = importlib.import_module(module)
        value = (
            getattr(loaded, name)
            if hasattr(loaded, name)
            else importlib.import_module(f"{module}.{name}")
        )
        if not any(
            name in names
            and getattr(importlib.import_module(page), name, None) is value
            for page, names in modules.items()
        ):
            missing.append(f"{where}: {module}.{name}")
    assert not missing, f"imported by the docs, on no API page: {sorted(set(missing))}"


def test_every_name_the_api_reference_renders_has_a_docstring():
    # What mkdocstrings renders: griffe's reading of the source, in which
    # constants and type aliases carry a docstring (a string after them) too.
    griffe = pytest.importorskip("griffe")
    package = griffe.load("purejaxdrl", search_paths=[str(ROOT)])
    hooks = _site_hooks()
    missing = []
    for module, names in hooks.api_modules().items():
        relative = module.removeprefix("purejaxdrl").lstrip(".")
        loaded = package[relative] if relative else package
        runtime = importlib.import_module(module)
        shadowed = hooks.shadowed_names(module, names)
        for name in names:
            member = loaded[name]
            target = member.final_target if member.is_alias else member
            if target.is_module and not inspect.ismodule(getattr(runtime, name)):
                # A function named as its module (`rl.vtrace`): rendered from a
                # block of its own, or not at all.
                assert name in shadowed, f"{module}.{name} would not render"
                assert f"::: {module}.{name}.{name}" in hooks._api_page(module, names)
                target = target[name]
            if not (target.docstring and target.docstring.value.strip()):
                missing.append(f"{module}.{name}")
    assert not missing, f"no docstring: {missing}"


def _rewritten(html: str, src_uri: str) -> str:
    """The site hook's rewrite of `html` on the page built from `src_uri`.

    The site has one page, guide/sweeps.md; the page's URL is its source's
    path without the suffix, as mkdocs makes it.
    """
    import types

    pages = {"guide/sweeps.md": types.SimpleNamespace(url="guide/sweeps/")}
    files = types.SimpleNamespace(get_file_from_path=pages.get)
    url = src_uri.rsplit(".", 1)[0] + "/"
    page = types.SimpleNamespace(file=types.SimpleNamespace(src_uri=src_uri), url=url)
    return _site_hooks().on_page_content(html, page, None, files)


def test_a_notebooks_links_to_the_guides_point_at_the_site_pages():
    # mkdocs-jupyter hands notebooks over as HTML: their `../docs/...` links
    # are rewritten there, or they resolve under the notebook's own URL.
    html = (
        '<a href="../docs/guide/sweeps.md#grids">x</a> <a href="#top">y</a> '
        '<a href="https://x.org/a.md">z</a> <a href="../docs/absent.md">w</a>'
    )
    assert _rewritten(html, "notebooks/02_sweeps.ipynb") == (
        '<a href="../../guide/sweeps/#grids">x</a> <a href="#top">y</a> '
        '<a href="https://x.org/a.md">z</a> <a href="../docs/absent.md">w</a>'
    )


def test_an_api_pages_guide_paths_link_to_the_guides():
    # A docstring names a guide by its path for help(): "More in
    # docs/guide/sweeps.md." rendered as a plain paragraph (ds18 #6).
    html = (
        "<p>More in docs/guide/sweeps.md.</p> <code>docs/guide/sweeps.md#grids"
        '</code> docs/absent.md <a href="../docs/guide/sweeps.md">x</a>'
    )
    assert _rewritten(html, "api/purejaxdrl.md") == (
        '<p>More in <a href="../../guide/sweeps/">docs/guide/sweeps.md</a>.</p> '
        '<code><a href="../../guide/sweeps/#grids">docs/guide/sweeps.md#grids</a>'
        '</code> docs/absent.md <a href="../docs/guide/sweeps.md">x</a>'
    )


def _purejaxdrl_classes(hint: object) -> set[type]:
    """The classes defined in purejaxdrl that a type hint names, at any depth."""
    if isinstance(hint, type) and hint.__module__.startswith("purejaxdrl"):
        return {hint}
    return set().union(*map(_purejaxdrl_classes, typing.get_args(hint)))


def _exported() -> set[int]:
    return {id(v) for m in PUBLIC for _, v in _public(importlib.import_module(m))}


@pytest.mark.parametrize(
    "record",
    [
        pjd.TrainConfig,
        pjd.TrainResult,
        pjd.SweepResult,
        pjd.PBTResult,
        pjd.training.Experiment,
    ],
)
def test_the_types_of_a_configs_and_a_results_fields_are_public(record):
    # `config.eval`, `result.plan`, `result.lineage[i]`, `exp.player` (the
    # guides' `exp.player.evaluate`): a reader looks their fields up in the
    # API reference, which has pages for public names only.
    hints = typing.get_type_hints(record)
    used = set().union(
        *(_purejaxdrl_classes(hints[f.name]) for f in dataclasses.fields(record))
    )
    exported = _exported()
    missing = sorted(c.__qualname__ for c in used if id(c) not in exported)
    assert not missing, f"{record.__name__}'s fields use unexported {missing}"


def _raises(doc: str) -> set[str]:
    """The exception names of a docstring's `Raises:` section."""
    names, inside = set(), False
    for line in inspect.cleandoc(doc).splitlines():
        if line.strip() == "Raises:":
            inside = True
        elif inside and line and not line.startswith(" "):
            inside = False  # the next section
        elif inside and (entry := re.match(r"  (\w+):", line)):
            names.add(entry[1])
    return names


def test_every_exception_a_public_function_raises_is_exported():
    # `except pjd.SweepStopped` must be possible wherever a docstring says it
    # comes: an exception named in a public function's `Raises:` is public.
    exported = {name for m in PUBLIC for name in importlib.import_module(m).__all__}
    named = set()
    for module in PUBLIC:
        for _, value in _public(importlib.import_module(module)):
            if inspect.isfunction(value) and value.__doc__:
                named |= _raises(value.__doc__)
    assert {"ConfigError", "SweepStopped", "NoSectionError"} <= named
    builtin = {n for n in named if isinstance(getattr(builtins, n, None), type)}
    assert named - builtin <= exported, sorted(named - builtin - exported)


def test_the_pieces_the_adding_an_algorithm_guide_calls_have_api_entries():
    # The guide tells a contributor to call these; they had no API page (the
    # replay learner's) or no entry (`rl.n_step_targets`, not exported).
    pytest.importorskip("mkdocs")
    guide = (ROOT / "docs" / "guide" / "adding-an-algorithm.md").read_text()
    pieces = {
        "purejaxdrl.rl": ["n_step_targets"],
        "purejaxdrl.agents.q_learning": [
            "target_network_step", "exported_epsilon_greedy", "exported_epsilon"
        ],
        "purejaxdrl.agents.replay_sizes": [
            "replay_shard_sizes", "stored_items", "learning_updates",
            "check_replay_sizes",
        ],
    }  # fmt: skip
    modules = _site_hooks().api_modules()
    for module, names in pieces.items():
        for name in names:
            assert name in guide, name
            assert name in modules.get(module, []), f"{module}.{name}"
            assert getattr(importlib.import_module(module), name), name
    assert (
        pjd.rl.n_step_targets
        is importlib.import_module("purejaxdrl.rl.nstep").n_step_targets
    )


def test_a_function_named_as_its_module_has_the_anchor_the_others_have():
    # `rl.vtrace` is rendered from `::: purejaxdrl.rl.vtrace.vtrace`, whose
    # heading id is that path; every other entry's is `purejaxdrl.rl.<name>`.
    pytest.importorskip("mkdocs")
    hooks = _site_hooks()
    page = hooks._api_page("purejaxdrl.rl", hooks.api_modules()["purejaxdrl.rl"])
    assert "[](){#purejaxdrl.rl.vtrace}" in page.splitlines()
    assert page.index("{#purejaxdrl.rl.vtrace}") < page.index(
        "::: purejaxdrl.rl.vtrace.vtrace"
    )
