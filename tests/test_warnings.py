"""purejaxdrl's setup warnings: Python warnings, one line in the command's output."""

import dataclasses
import importlib.abc
import importlib.util
import inspect
import subprocess
import sys
import types
import warnings
from pathlib import Path

import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.agents import registry
from purejaxdrl.setup_warnings import (
    SetupWarning,
    forget_warnings,
    warn_once,
)


def test_the_command_shows_a_setup_warning_as_one_line_and_others_as_pythons():
    original = warnings.formatwarning
    with cli._setup_warnings_as_one_line():
        shown = warnings.formatwarning(
            SetupWarning("dqn.epsilon is set\n  but unused."), SetupWarning, "q.py", 5
        )
        assert shown == "purejaxdrl: warning: dqn.epsilon is set but unused.\n"
        other = warnings.formatwarning("a user's", UserWarning, "mine.py", 3, "line")
        assert other == "mine.py:3: UserWarning: a user's\n  line\n"
    assert warnings.formatwarning is original  # the command's process only


_SCRIPT = """
import gc, sys, warnings
if sys.argv[1] == "import":
    import purejaxdrl
    from purejaxdrl.setup_warnings import warn_once
    warn_once("advice to a library user", key="test_warnings")
import tracemalloc
tracemalloc.start(5)  # after the import: tracing it would take 30 s
def leak():
    open(sys.executable, "rb")  # unclosed: a ResourceWarning, traced
leak()
gc.collect()
warnings.warn("a user's own")
"""


@pytest.mark.timeout(300)
def test_importing_the_library_leaves_other_warnings_as_python_shows_them(tmp_path):
    # Python shows tracemalloc's "Object allocated at" only while
    # warnings.formatwarning is its own: importing must not replace it.
    (tmp_path / "w.py").write_text(_SCRIPT)

    def stderr(argument):
        command = [sys.executable, "-W", "always", "w.py"]
        ran = subprocess.run(
            [*command, argument], cwd=tmp_path, capture_output=True, text=True,
            timeout=280,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        return ran.stderr

    plain, imported = stderr("plain"), stderr("import")
    assert "Object allocated at (most recent call last)" in plain
    # A Python caller's SetupWarning is a normal one, with its place.
    lines = imported.splitlines(keepends=True)
    where = tmp_path / "w.py"
    assert lines[0] == f"{where}:6: SetupWarning: advice to a library user\n"
    assert "".join(lines[2:]) == plain  # after the warning's source line


def test_a_setup_warning_is_a_user_warning_to_filter_record_or_raise():
    forget_warnings()
    with pytest.warns(UserWarning, match="^advice$") as caught:
        warn_once("advice", key="test_warnings")
    assert caught[0].category is SetupWarning
    forget_warnings()
    with warnings.catch_warnings():
        warnings.simplefilter("error", SetupWarning)
        with pytest.raises(SetupWarning, match="advice"):
            warn_once("advice", key="test_warnings")
    forget_warnings()


@pytest.mark.timeout(300)
def test_the_command_line_shows_a_setup_warning_as_one_line(tmp_path):
    # The warning comes as the config is checked, before the error that ends
    # the command (no training): neither a file path nor a source line.
    flags = ["--dqn.epsilon", "0.2", "--host.queue-size", "0"]
    ran = subprocess.run(
        [sys.executable, "-m", "purejaxdrl", "train", "--env", "cartpole",
         "--algo", "dqn", *flags],
        cwd=tmp_path, capture_output=True, text=True, timeout=280,
    )  # fmt: skip
    assert ran.returncode == 2, ran.stderr
    warning, error = ran.stderr.splitlines()
    assert warning.startswith("purejaxdrl: warning: dqn.epsilon is set (by a preset")
    assert warning.endswith("for Ape-X's per-actor ε_i instead.")
    assert error == (
        "purejaxdrl: error: host.queue_size=0 must be >= 1; pass e.g. "
        "--host.queue-size 1 (host.queue_size=1 in Python)."
    )


def test_a_setup_warning_from_python_names_the_callers_line_not_the_librarys():
    # Python showed "purejaxdrl/training/presets/sections.py:114: ... warn_once("
    # and ".../q_learning.py:...": a check's line, of no use to the caller.
    a2c = registry.algorithm("a2c")
    forget_warnings()
    mine = registry.registered(dataclasses.replace(a2c, name="mine"))
    with mine, pytest.warns(SetupWarning, match="^Preset 'cartpole' has no mine") as w:
        pjd.load_preset("cartpole", algo="mine")
        line = inspect.currentframe().f_lineno - 1
    assert (w[0].filename, w[0].lineno) == (__file__, line)
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", algo="dqn").config, {"dqn": {"epsilon": 0.2}}
    )
    with pytest.warns(SetupWarning, match=r"^dqn.epsilon is set") as w:
        pjd.validate(config)  # as train checks it
        line = inspect.currentframe().f_lineno - 1
    assert (w[0].filename, w[0].lineno) == (__file__, line)
    forget_warnings()


# Library code that warns through frames of Python's and JAX's, compiled under
# a file name inside the package so that `frames.owner` takes it for
# purejaxdrl's (no check of the library warns there yet).
_WRAPPED = """
import contextlib
import dataclasses
import jax
from purejaxdrl.setup_warnings import warn_once

@contextlib.contextmanager
def _warned():
    warn_once("warned inside contextlib", key=("test", "contextlib"))
    yield

def through_contextlib():
    with _warned():
        pass

def _traced(x):
    warn_once("warned inside jax.jit", key=("test", "jit"))
    return x

def through_jit():
    return jax.jit(_traced)(1)

@dataclasses.dataclass
class Checked:
    x: int = 1

    def __post_init__(self):
        warn_once("warned inside a dataclass", key=("test", "dataclass"))
"""


@pytest.mark.parametrize("through", ["through_contextlib", "through_jit", "Checked"])
def test_a_setup_warning_through_other_libraries_frames_names_the_callers_line(
    through, monkeypatch
):
    # The walk stopped at the first frame outside purejaxdrl: contextlib.py's
    # __enter__, a frame of JAX's tracing, or the "<string>" __init__ that
    # dataclasses generates, not the caller's line.
    library = types.ModuleType("purejaxdrl._wrapped_in_a_test")
    library.__file__ = str(Path(pjd.__file__).parent / "_wrapped_in_a_test.py")
    monkeypatch.setitem(sys.modules, library.__name__, library)
    exec(compile(_WRAPPED, library.__file__, "exec"), vars(library))
    forget_warnings()
    with pytest.warns(SetupWarning, match="^warned inside") as w:
        getattr(library, through)()
        line = inspect.currentframe().f_lineno - 1
    assert (w[0].filename, w[0].lineno) == (__file__, line)
    forget_warnings()


def test_changing_algo_alone_names_the_presets_tuned_config_of_it():
    # The command line's --algo dqn reads the preset's dqn section;
    # apply_overrides keeps ppo's run sizes, and says so where a preset has one.
    ppo = pjd.load_preset("cartpole").config
    tuned = pjd.load_preset("cartpole", "dqn").config
    forget_warnings()
    with pytest.warns(SetupWarning) as caught:
        switched = pjd.apply_overrides(ppo, {"algo": "dqn"})
    assert (switched.num_envs, switched.unroll_length) == (4, 128)
    assert (tuned.num_envs, tuned.unroll_length) == (16, 4)
    said = str(caught[0].message)
    assert said.startswith("algo 'ppo' -> 'dqn' keeps this config's run settings ")
    assert "(num_envs=4, unroll_length=128, total_steps=500000, network)" in said
    assert said.endswith("start from pjd.load_preset('cartpole', algo='dqn').config.")
    assert caught[0].filename == __file__  # the caller's line
    forget_warnings()
    with warnings.catch_warnings():  # built on purpose, or nothing tuned: quiet
        warnings.simplefilter("error", SetupWarning)
        pjd.apply_overrides(ppo, {"algo": "dqn", "dqn": {"n_step": 1}})
        pjd.apply_overrides(ppo, {"algo": "dqn", "env.id": "CartPole-v1"})
        pjd.apply_overrides(pjd.load_preset("acrobot").config, {"algo": "a2c"})
        pjd.load_preset("cartpole", "dqn")
        pjd.apply_overrides(ppo, {"algo": "ppo"})
    forget_warnings()


def _library_module(monkeypatch, name: str, code: str) -> types.ModuleType:
    """`code` run as purejaxdrl's module `name` (its file inside the package)."""
    library = types.ModuleType(f"purejaxdrl.{name}")
    library.__file__ = str(Path(pjd.__file__).parent / f"{name}.py")
    monkeypatch.setitem(sys.modules, library.__name__, library)
    exec(compile(code, library.__file__, "exec"), vars(library))
    return library


def test_code_of_no_file_the_user_execs_is_where_the_warning_points(monkeypatch):
    # A notebook's or a tool's exec, `python -c`: its line, not the caller's.
    library = _library_module(monkeypatch, "_wrapped_for_exec", _WRAPPED)
    source = "\n\nthrough_contextlib()\n"  # line 3
    namespace = {**vars(library), "__name__": "a_users_exec"}  # of no module
    forget_warnings()
    with pytest.warns(SetupWarning, match="^warned inside") as w:
        exec(compile(source, "<string>", "exec"), namespace)
    assert (w[0].filename, w[0].lineno) == ("<string>", 3)
    forget_warnings()


_WARNS_ON_IMPORT = """
import importlib.abc
from purejaxdrl.setup_warnings import warn_once

class Loader(importlib.abc.Loader):
    def __init__(self, filename):
        self.filename = filename

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        code = 'warn_once("warned on import", key=("test", "import"))'
        module.__dict__["warn_once"] = warn_once
        exec(compile(code, self.filename, "exec"), module.__dict__)
"""


def test_a_warning_while_a_module_imports_names_the_import_line(monkeypatch):
    # warnings.warn counts no importlib frame but the first: the walk counts
    # them as it does, or the warning points a frame or more off.
    name = "purejaxdrl._warns_on_import"
    library = _library_module(monkeypatch, "_import_loader", _WARNS_ON_IMPORT)
    loader = library.Loader(str(Path(pjd.__file__).parent / "_warns_on_import.py"))
    spec = importlib.util.spec_from_loader(name, loader, origin=loader.filename)

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            return spec if fullname == name else None

    monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
    monkeypatch.delitem(sys.modules, name, raising=False)
    forget_warnings()
    try:
        with pytest.warns(SetupWarning, match="^warned on import") as w:
            line = inspect.currentframe().f_lineno + 1
            import purejaxdrl._warns_on_import  # noqa: F401
    finally:
        sys.modules.pop(name, None)
        vars(pjd).pop("_warns_on_import", None)
    assert (w[0].filename, w[0].lineno) == (__file__, line)
    forget_warnings()
