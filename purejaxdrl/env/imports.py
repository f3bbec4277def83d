"""The user's own modules, imported before an environment id is resolved.

A module that registers environments when imported (`purejaxdrl.env.register`
for a JAX `Env`, `gymnasium.register` for a Gymnasium one) must be imported
before its names mean anything: `env.imports` lists such modules, and a
Gymnasium id may name one itself (`gymnasium:my_pkg.envs:MyCorridor-v0`).
The current folder is searched first, as `python -m` does, so a file next to
where the command runs is found without installing it.
"""

import importlib
import os
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
            stem = name.removesuffix(".py").replace("/", ".").strip(".")
            example = stem if _is_module_name(stem) else "my_envs"
            raise ConfigError(
                f"{source}: {name!r} is not a module name; pass a dotted Python "
                "module name, e.g. "
                f"{both_ways('--env.imports', 'env.imports', example, [example])} "
                f"for {example.replace('.', '/')}.py in the current folder."
            )
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
