"""The "Bring your own environment" page, followed literally.

Writes the page's two modules (the Python blocks after "`jax_corridor.py`:"
and "`my_corridor.py`:") into a fresh folder, runs each of the page's commands
there in a fresh process and each of its Python runs in this one, as the page
says, and checks that every run ends at the final mean return the page states
for it, and that the Gymnasium corridor refuses the option the page says it
refuses. The JAX environment's Python run is in the fast suite; the four
others (three fresh processes that each start JAX and compile, and the
Gymnasium run, whose environments step in Python) take 20-40 s each on a
2-core CPU and are marked slow.
"""

import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

import purejaxdrl as pjd
from tests.helpers import env_registrations_undone

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guide" / "bring-your-own-env.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
MODULE = re.compile(r"`(\w+\.py)`:\s*\Z")
STATED_BY_COMMAND = re.compile(r"final mean return of ([\d.]+)")
STATED_BY_PRINT = re.compile(r"print\(result\.mean_return\)\s*#\s*([\d.]+)")
PRINTED_BY_COMMAND = re.compile(r"final mean return\s+([-\d.]+)")


def _page() -> tuple[dict[str, str], list[tuple[str, str, str, float]]]:
    """The page's modules (file name -> source) and runs.

    Blocks marked "not run" are fragments, skipped. A run is (section, kind,
    what, stated return): `kind` is "command" (a line of a bash block, the
    return from the sentence after the block) or "python" (a Python block that
    is not a module, the return from its comment).
    """
    text = PAGE.read_text()
    modules, runs = {}, []
    for block in BLOCK.finditer(text):
        language, code = block.groups()
        before = text[: block.start()]
        if re.search(r"<!-- not run:[^<]*-->\s*\Z", before):
            continue  # a fragment: tests/test_docs_blocks.py names its test
        section = re.findall(r"^## (.*)$", before, re.MULTILINE)[-1]
        # The sentence before the block, less the marker of tests/test_docs_blocks.py.
        sentence = re.sub(r"\s*<!--[^<]*-->\s*\Z", "", before)
        module = MODULE.search(sentence.rpartition("\n")[2])
        if module:
            modules[module.group(1)] = code
        elif language == "python":
            (stated,) = STATED_BY_PRINT.findall(code)
            runs.append((section, "python", code, float(stated)))
        else:
            stated = float(STATED_BY_COMMAND.search(text, block.end()).group(1))
            for line in code.strip().splitlines():
                runs.append((section, "command", line, stated))
    return modules, runs


MODULES, RUNS = _page()


def test_the_page_shows_both_modules_and_trains_each_both_ways():
    assert sorted(MODULES) == ["jax_corridor.py", "my_corridor.py"]
    kinds = {(section, kind) for section, kind, _, _ in RUNS}
    assert kinds == {
        (section, kind)
        for section in ("A JAX environment", "A Gymnasium environment")
        for kind in ("command", "python")
    }


def _id(run) -> str:
    section, kind, what, _ = run
    env = "jax" if "JAX" in section else "gymnasium"
    return f"{env}-{kind}-{'module-in-id' if ':my_corridor:' in what else 'imports'}"


def _marks(run):
    section, kind, _, _ = run
    fast = "JAX" in section and kind == "python"
    return () if fast else (pytest.mark.slow,)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A folder holding the page's modules, current; undoes what they register."""
    for name, source in MODULES.items():
        (tmp_path / name).write_text(source)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    pjd.env.registered()  # the built-in names, registered before the snapshot
    modules = set(sys.modules)
    gym = pytest.importorskip("gymnasium") if "my_corridor.py" in MODULES else None
    gym_ids = set(gym.registry) if gym else set()
    # Its ids leave the registry's names and their modules both (deleting
    # the names alone left ids a later test's snapshot could not restore).
    with env_registrations_undone():
        yield tmp_path
    own = {name.removesuffix(".py") for name in MODULES}
    for name in (set(sys.modules) - modules) & own:
        del sys.modules[name]
    if gym is not None:
        for name in set(gym.registry) - gym_ids:
            del gym.registry[name]


def _command(line: str, cwd: pathlib.Path) -> str:
    """The page's `purejaxdrl ...` line in a fresh process in `cwd`."""
    args = shlex.split(line)
    assert args[0] == "purejaxdrl", line
    # The test session's compilation cache rather than the user's ~/.cache.
    cache = os.environ.get("JAX_COMPILATION_CACHE_DIR")
    cache_flags = ["--compile-cache", cache] if cache else ["--no-compile-cache"]
    # This checkout's package; -P: the folder is not on the path, as the
    # `purejaxdrl` console script starts.
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    result = subprocess.run(
        [sys.executable, "-P", "-m", "purejaxdrl.cli", *args[1:], *cache_flags],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": path},
        timeout=280,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "run", [pytest.param(r, id=_id(r), marks=_marks(r)) for r in RUNS]
)
def test_each_run_of_the_page_reaches_the_stated_return(run, folder, capsys):
    _, kind, what, stated = run
    if kind == "command":
        printed = PRINTED_BY_COMMAND.findall(_command(what, folder))
    else:
        exec(compile(what, f"{PAGE.name} (Python)", "exec"), {"__name__": "__main__"})
        printed = capsys.readouterr().out.split()[-1:]
    assert printed, "no final mean return printed"
    assert float(printed[-1]) == stated


def test_the_jax_corridor_takes_its_length_as_an_option(folder):
    # It kept the length in its params alone, so `--env.option length=6`, the
    # flag that sets a gymnax id's params, was refused: "it takes no options".
    from purejaxdrl.env.imports import import_modules

    assert any("--env.option length=6" in what for _, _, what, _ in RUNS)
    import_modules(["jax_corridor"])
    assert pjd.env.make("JaxCorridor-v0").default_params.length == 4
    assert pjd.env.make("JaxCorridor-v0", length=6).default_params.length == 6
    with pytest.raises(
        pjd.ConfigError, match=r"^env.options length=2.5 is not a whole number"
    ):
        pjd.env.make("JaxCorridor-v0", length=2.5)


def test_the_gymnasium_corridor_refuses_a_fractional_length(folder, capsys):
    # The page's class annotates `length: int = 4`, and says that this makes
    # `length=2.5` a one-line refusal; unannotated, the option trained towards
    # a goal of 2.5 that the corridor never reaches (every return 0). Both
    # checks stop before anything is built or compiled.
    from purejaxdrl.cli import main
    from purejaxdrl.env.host import make_host_env
    from purejaxdrl.env.imports import import_modules

    assert "length: int = 4" in MODULES["my_corridor.py"]
    import_modules(["my_corridor"])
    with pytest.raises(pjd.ConfigError, match=r"^env.options length=2.5 is not an"):
        make_host_env("gymnasium:Corridor-v0", 1, 0, length=2.5)
    argv = ["train", "--env", "cartpole_envpool", "--algo", "ppo",
            "--env.imports", "my_corridor", "--env.id", "gymnasium:Corridor-v0",
            "--env.option", "length=2.5", "--no-files"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == (
        "purejaxdrl: error: env.options length=2.5 is not an integer "
        "(gymnasium:Corridor-v0's default: 4); pass one, e.g. --env.option "
        "length=4 (env.options={'length': 4} in Python).\n"
    )
