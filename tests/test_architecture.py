"""The package's shape: small modules and functions, layers, one place per algorithm.

These read the source (no JAX runs), so they are the cheapest tests to keep the
house readable: a module past 400 lines or a function past 80 lines of its own
code holds two concepts; an import circle or an upward import breaks the layers
of DESIGN.md; a branch on an algorithm's name (or a test of its config's type)
outside `agents/` means adding an algorithm touches more than its own module.
"""

import ast
import pathlib
import re

import pytest

from purejaxdrl.agents.registry import algorithms, names

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "purejaxdrl"
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 400, 80
# Each layer may import itself and the layers after it, never those before it.
LAYERS = (
    ("cli",),
    ("sweeps",),
    ("training",),
    ("observe",),
    ("runners",),
    ("agents",),
    ("rl", "replay", "env", "networks"),
    (
        "config",
        "config_checks",
        "config_types",
        "yaml_text",
        "config_docs",
        "setup_warnings",
        "signal_holds",
        "field_roles",
        "types",
        "parallel",
        "coordination",
        "rng",
        "scans",
        "_platform",
        "frames",
    ),
)


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(module: str, path: pathlib.Path) -> set[str]:
    """The package's modules that `module` imports (at any depth of its code)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            named = {f"{base}.{alias.name}" for alias in node.names}
            # `from purejaxdrl import env` imports the module env, not the root.
            found |= named if named & MODULES.keys() else {base}
    return {m for m in found if m in MODULES and m != module}


def _own_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of a function, less its docstring and nested functions / classes."""
    lines = set(range(node.lineno, node.end_lineno + 1))
    body = node.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
    ):
        lines -= set(range(body[0].lineno, body[0].end_lineno + 1))
    for child in ast.walk(node):
        nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        if child is not node and isinstance(child, nested):
            lines -= set(range(child.lineno, child.end_lineno + 1))
    return len(lines)


def _layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for index, group in enumerate(LAYERS):
        if top in group:
            return index
    return -1  # the package's __init__: the public API, above everything


def test_no_module_over_400_lines():
    long = {
        m: n
        for m, p in MODULES.items()
        if (n := p.read_text().count("\n")) > MAX_MODULE_LINES
    }
    assert not long, f"split these by concept: {long}"


def test_no_function_over_80_lines_of_its_own_code():
    long = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            is_function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            if is_function and (n := _own_lines(node)) > MAX_FUNCTION_LINES:
                long.append(f"{module}:{node.lineno} {node.name}() {n} lines")
    assert not long, long


def test_the_import_graph_has_no_circle():
    graph = {m: _imports(m, p) for m, p in MODULES.items()}
    # A package's __init__ re-exports its submodules: not a circle.
    graph = {m: {d for d in ds if not m.startswith(d + ".")} for m, ds in graph.items()}
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycle = path[path.index(module) :] + [module]
            pytest.fail("import circle: " + " -> ".join(cycle))
        if module in done:
            return
        for dep in sorted(graph[module]):
            visit(dep, [*path, module])
        done.add(module)

    for module in graph:
        visit(module, [])


def test_layers_import_only_downward():
    upward = [
        f"{m} imports {d}"
        for m, p in MODULES.items()
        for d in _imports(m, p)
        if _layer(m) >= 0 and _layer(d) < _layer(m)
    ]
    assert not upward, upward


def test_the_architecture_page_draws_these_layers():
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    line = next(x for x in page.splitlines() if x.startswith("cli  ->"))
    drawn = [{m.strip() for m in layer.split(",")} for layer in line.split("->")]
    assert drawn == [set(layer) for layer in LAYERS]


def test_no_algorithm_name_is_named_outside_agents():
    alternatives = "|".join(names())
    patterns = [
        # algo == "ppo", config.algo in ("dqn", ...), algo != 'sac'
        re.compile(r"algo\w*\s*(==|!=|in|not in)\s*[\(\[\"']"),
        # a literal list of two names
        re.compile(rf"[\"']({alternatives})[\"']\s*,\s*[\"']({alternatives})[\"']"),
        re.compile(rf"==\s*[\"']({alternatives})[\"']"),
    ]
    found = []
    for module, path in MODULES.items():
        if module.startswith("purejaxdrl.agents"):
            continue
        text = path.read_text()
        for pattern in patterns:
            for match in pattern.finditer(text):
                line = text[: match.start()].count("\n") + 1
                found.append(f"{path.name}:{line}: {match.group(0)}")
    assert not found, f"ask agents.registry instead: {found}"


def _config_types() -> set[str]:
    """The names of the algorithms' config types and of the field groups in them."""
    return {
        base.__name__
        for record in algorithms()
        for base in record.config_type.__mro__
        if base is not object
    }


def config_type_tests(text: str, types: set[str]) -> list[tuple[int, str]]:
    """(line, type) of each isinstance / issubclass in `text` against one of `types`."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("isinstance", "issubclass")
            and len(node.args) == 2
        ):
            continue
        for name in ast.walk(node.args[1]):
            named = getattr(name, "id", None) or getattr(name, "attr", None)
            if named in types:
                found.append((node.lineno, named))
    return found


def test_no_algorithm_config_type_is_tested_outside_agents():
    # `isinstance(section, EpsilonFields)` outside agents/ is a branch on an
    # algorithm's kind, as a branch on its name is: ask its record instead
    # (as export asks `Algorithm.exported_sampler`).
    types = _config_types()
    assert {"EpsilonFields", "DQNConfig", "PPOConfig"} <= types
    said = "if isinstance(config.algo_config, fields.EpsilonFields):\n    pass\n"
    assert config_type_tests(said, types) == [(1, "EpsilonFields")]
    found = [
        f"{path.name}:{line}: {name}"
        for module, path in MODULES.items()
        if not module.startswith("purejaxdrl.agents")
        for line, name in config_type_tests(path.read_text(), types)
    ]
    assert not found, f"ask the algorithm's record instead: {found}"


def test_every_algorithm_module_registers_one_record():
    modules = {
        p.stem
        for p in (PACKAGE / "agents").glob("*.py")
        if "\nALGORITHM = " in p.read_text()  # an Algorithm(...) or another's, changed
    }
    assert modules == set(names())
    assert [a.name for a in algorithms()] == list(names())


def test_every_subpackage_says_what_it_owns():
    for module, path in MODULES.items():
        if path.name == "__init__.py":
            doc = ast.get_docstring(ast.parse(path.read_text())) or ""
            assert len(doc.split()) >= 20, f"{module}'s docstring: {doc!r}"
