"""Every package's `__init__` docstring is its map: it names each of its modules."""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "purejaxdrl"


def _unnamed(package: pathlib.Path) -> list[str]:
    """The modules and subpackages of `package` its docstring leaves unnamed."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    modules = [p.stem for p in package.glob("*.py") if not p.name.startswith("_")]
    modules += [p.parent.name for p in package.glob("*/__init__.py")]
    return sorted(m for m in modules if f"`{m}`" not in doc)


def test_every_package_docstring_names_each_of_its_modules():
    missing = {
        str(init.parent.relative_to(PACKAGE.parent)): unnamed
        for init in sorted(PACKAGE.rglob("*/__init__.py"))  # the top level: its API
        if (unnamed := _unnamed(init.parent))
    }
    assert not missing, f"name these modules in their package's docstring: {missing}"
