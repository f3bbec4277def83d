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


def missing_dependency(package: str, error: ImportError | None) -> str | None:
    """The module an installed `package` failed to import, if not itself.

    EnvPool imports gymnasium itself: a missing dependency of an installed
    library must not read as the library missing.
    """
    missing = (getattr(error, "name", None) or package).split(".")[0]
    return missing if missing != package.split(".")[0] else None


def package_refusal(env_id: str, error: ImportError | None = None) -> str:
    """The one line refusing `env_id`, whose optional package did not import.

    Args:
      env_id: an id with one of `OPTIONAL_PACKAGES`' prefixes.
      error: the import's error, if one was raised. Where it names another
        module than the package (a dependency of an installed package), the
        line says that one is missing instead.

    """
    package, extra = _needs(env_id) or (env_id, env_id)
    missing = missing_dependency(package, error)
    if missing:
        return (
            f"env.id={env_id!r} needs the {package} package, which is installed "
            f"but cannot import {missing} ({error}): pip install {missing}"
        )
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
