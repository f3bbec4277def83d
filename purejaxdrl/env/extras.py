"""The optional package each kind of environment id needs, and its extra.

One table for every place that says so: `purejaxdrl list`'s `needs` column,
the check made before a run is built (`missing_package`), and the adapters'
own refusal when their import fails (`package_refusal`).
"""

import importlib.util

# An id's prefix: (the package it imports, the extra that installs it).
OPTIONAL_PACKAGES = {
    "playground/": ("mujoco_playground", "playground"),
    "envpool:": ("envpool", "envpool"),
    "gymnasium:": ("gymnasium", "gymnasium"),
    "Craftax-": ("craftax", "craftax"),
}


def _needs(env_id: str) -> tuple[str, str] | None:
    for prefix, needs in OPTIONAL_PACKAGES.items():
        if env_id.startswith(prefix):
            return needs
    return None


def needed_extra(env_id: str) -> str | None:
    """The extra that installs the optional package `env_id` needs, if any."""
    needs = _needs(env_id)
    return needs[1] if needs else None


def import_failure(package: str, error: ImportError | None) -> str | None:
    """Why an installed `package` did not import; None where it is not installed.

    A ModuleNotFoundError naming the package (or a module of it) is its
    absence. One naming another module is a missing dependency of the
    installed package (EnvPool imports gymnasium itself), which must not read
    as the package missing. Any other ImportError is the package's own
    failure, told with its error.
    """
    if error is None:
        return None
    top = (getattr(error, "name", None) or "").split(".")[0]
    if isinstance(error, ModuleNotFoundError) and top == package.split(".")[0]:
        return None
    if isinstance(error, ModuleNotFoundError) and top:
        return (
            f"{package} is installed but cannot import {top}, which it needs "
            f"({error}); pip install {top}"
        )
    return (
        f"{package} is installed but failed to import ({type(error).__name__}: "
        f"{error}); reinstall it, or see its own install notes"
    )


def package_refusal(env_id: str, error: ImportError | None = None) -> str:
    """The one line refusing `env_id`, whose optional package did not import.

    Args:
      env_id: an id with one of `OPTIONAL_PACKAGES`' prefixes.
      error: the import's error, if one was raised: where the package is
        installed but failed (`import_failure`), the line says why.

    """
    package, extra = _needs(env_id) or (env_id, env_id)
    if (why := import_failure(package, error)) is not None:
        return f"env.id={env_id!r} needs the {package} package: {why}"
    return (
        f"env.id={env_id!r} needs the {package} package, which is not "
        f"installed: pip install 'purejaxdrl[{extra}]'"
    )


def missing_package(env_id: str) -> str | None:
    """The refusal of `env_id` where its optional package is not installed.

    Found without importing it (Playground's import alone takes seconds).
    """
    needs = _needs(env_id)
    if needs and importlib.util.find_spec(needs[0]) is None:
        return package_refusal(env_id)
    return None
