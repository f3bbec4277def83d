"""The user's own modules, imported before an environment id is resolved.

A module that registers environments when imported (`purejaxdrl.env.register`
for a JAX `Env`, `gymnasium.register` for a Gymnasium one) must be imported
before its names mean anything: `env.imports` lists such modules, and a
Gymnasium id may name one itself (`gymnasium:my_pkg.envs:MyCorridor-v0`).
The current folder is searched first, as `python -m` does, so a file next to
where the command runs is found without installing it.
"""

import importlib
import importlib.util
import os
import pathlib
import sys
import traceback
from collections.abc import Sequence

from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways


def _is_module_name(name: str) -> bool:
    # `my_corridor.py` is a file name (the module `py` of a package is unlikely).
    parts = name.split(".")
    return all(p.isidentifier() for p in parts) and parts[-1] != "py"


def _search_current_folder() -> None:
    # Kept on the path after the import, not only during it: Gymnasium resolves
    # an entry point given as a string ("my_corridor:Corridor") only when it
    # makes the environment, and modules may import their siblings lazily.
    cwd = os.getcwd()
    if not any(os.path.abspath(p or os.curdir) == cwd for p in sys.path):
        sys.path.insert(0, cwd)


def _where(error: BaseException) -> str:
    """` (at file:line)` of the innermost frame `error` was raised in, if any."""
    if isinstance(error, SyntaxError) and error.filename:
        return f" (at {error.filename}:{error.lineno})"
    # The import machinery's own frames say nothing about the user's code.
    frames = [
        f
        for f in traceback.extract_tb(error.__traceback__)
        if not f.filename.startswith("<frozen") and f.filename != importlib.__file__
    ]
    if not frames:
        return ""
    return f" (at {frames[-1].filename}:{frames[-1].lineno})"


def _fix(name: str) -> str:
    """What to pass instead of `name`, a path: the module name that imports it.

    A file under the current folder is imported by its dotted path from there
    (when that finds this very file); any other by its stem, run from its
    folder or with that folder on PYTHONPATH.
    """
    path = pathlib.Path(name).expanduser()
    file = path if path.suffix == ".py" else path.with_name(path.name + ".py")
    if not file.is_file():
        stem = name.removesuffix(".py").replace("/", ".").strip(".")
        example = stem if _is_module_name(stem) else "my_envs"
        return (
            "pass a dotted Python module name, e.g. "
            f"{both_ways('--env.imports', 'env.imports', example, [example])} "
            f"for {example.replace('.', '/')}.py in the current folder."
        )
    file = file.resolve()
    dotted = _dotted_from_cwd(file)
    if dotted is not None:
        said = both_ways("--env.imports", "env.imports", dotted, [dotted])
        shown = dotted.replace(".", "/") + ".py"
        return f"{shown} in the current folder imports as {said}."
    module = file.stem if file.stem.isidentifier() else "my_envs"
    renamed = "" if module == file.stem else f"rename it {module}.py, "
    said = both_ways("--env.imports", "env.imports", module, [module])
    return (
        f"{renamed}run from its folder {file.parent} (or add that folder to "
        f"PYTHONPATH), then pass {said}."
    )


def _dotted_from_cwd(file: pathlib.Path) -> str | None:
    # The module name of `file` from the current folder, if that imports it.
    try:
        parts = file.with_suffix("").relative_to(pathlib.Path.cwd().resolve()).parts
    except ValueError:  # not under the current folder
        return None
    dotted = ".".join(parts)
    if not _is_module_name(dotted):
        return None
    _search_current_folder()
    try:
        spec = importlib.util.find_spec(dotted)
    except Exception:  # a parent package that fails to import, say
        return None
    found = spec is not None and spec.origin and pathlib.Path(spec.origin).resolve()
    return dotted if found == file else None


def import_modules(names: Sequence[str], source: str = "env.imports") -> None:
    """Imports each module of `names`, searching the current folder first.

    Not pure: it imports (running the modules' registrations) and puts the
    current folder on `sys.path`, as `python -m` does. Importing a module
    twice is a no-op, so every command that resolves an environment id may
    call it.

    Args:
      names: dotted module names, e.g. ("my_corridor", "my_pkg.envs").
      source: the config value the names come from, for error messages
        (`env.imports`, or `env.id='gymnasium:my_pkg.envs:Id'`).

    Raises:
      ConfigError: a name that is no module name, a module that is not found,
        or one whose import raised; one line naming the module and the fix.

    """
    for name in names:
        if not _is_module_name(name):
            raise ConfigError(f"{source}: {name!r} is not a module name; {_fix(name)}")
        _search_current_folder()
        importlib.invalidate_caches()  # a file written since the last import
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name is not None and (name == e.name or name.startswith(e.name + ".")):
                raise ConfigError(
                    f"{source}: no module named {name!r} (looked in the current "
                    f"folder {os.getcwd()}, PYTHONPATH and installed packages); run "
                    "from the folder that holds it, add that folder to PYTHONPATH, "
                    "or install it."
                ) from None
            raise ConfigError(
                f"{source}: importing {name!r} failed: it imports {e.name!r}, which "
                f"is not installed{_where(e)}; install it (pip install ...)."
            ) from None
        except Exception as e:  # the user's code: any error, said in one line
            message = e.msg if isinstance(e, SyntaxError) else str(e)
            message = " ".join(str(message).split())
            raise ConfigError(
                f"{source}: importing {name!r} raised {type(e).__name__}: {message}"
                f"{_where(e)}; fix the module (python -c 'import {name}' shows the "
                "whole traceback)."
            ) from None
