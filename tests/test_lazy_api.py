"""The top level loads on first use: `import purejaxdrl` and `--help` load no JAX.

Each case runs in a fresh interpreter: this one has imported everything.
"""

import ast
import pathlib
import subprocess
import sys

import pytest

import purejaxdrl as pjd

INIT = pathlib.Path(pjd.__file__)


def _run(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_importing_the_package_loads_no_jax_until_a_name_is_used():
    code = """if True:
        import sys
        import purejaxdrl as pjd
        names = dir(pjd)
        print("jax" in sys.modules, set(pjd.__all__) <= set(names))
        import purejaxdrl.training.presets as presets
        from purejaxdrl import agents, train
        from purejaxdrl.training.train import train as defined
        print(train is pjd.train is defined, agents is pjd.agents)
        print(pjd.training.presets is presets, "jax" in sys.modules)
        print(pjd.load_preset is presets.load_preset, hasattr(pjd, "trian"))
    """
    result = _run(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True"] + ["True"] * 5 + ["False"]


@pytest.mark.parametrize(
    ("args", "status"), [(["--help"], 0), (["--version"], 0), ([], 2), (["lst"], 2)]
)
def test_the_commands_own_answers_load_no_jax(args, status):
    # `python -m purejaxdrl ARGS`, as the console script runs it, then a look.
    code = """if True:
        import runpy, sys
        sys.argv = ["purejaxdrl", *sys.argv[1:]]
        try:
            runpy.run_module("purejaxdrl", run_name="__main__")
        except SystemExit as e:
            print("status", e.code, "jax" in sys.modules, file=sys.stderr)
    """
    result = _run(code, *args)
    assert result.stderr.splitlines()[-1] == f"status {status} False", result.stderr
    assert "purejaxdrl" in result.stdout + result.stderr


def _guarded_imports() -> set[tuple[str, str]]:
    """(module, name) of each import in the `if TYPE_CHECKING:` block."""
    for node in ast.parse(INIT.read_text()).body:
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            return {
                (imported.module, alias.name)
                for imported in node.body
                if isinstance(imported, ast.ImportFrom)
                for alias in imported.names
            }
    return set()


def test_the_lazy_names_are_the_ones_the_api_reference_reads():
    # griffe (the API reference) reads the guarded imports; `__getattr__`
    # resolves the names by `_MODULES` and `_NAMES`: the same, name by name.
    lazy = {("purejaxdrl", name) for name in pjd._MODULES}
    lazy |= {(f"purejaxdrl.{m}", n) for m, names in pjd._NAMES.items() for n in names}
    assert _guarded_imports() == lazy
    assert set(pjd.__all__) == {n for _, n in lazy} | {"enable_compilation_cache"}
