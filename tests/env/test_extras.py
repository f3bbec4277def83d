"""The optional package each kind of id needs: one line, wherever it is said."""

import sys

import pytest

import purejaxdrl as pjd
from purejaxdrl.env.craftax_env import CraftaxEnv
from purejaxdrl.env.extras import (
    OPTIONAL_PACKAGES,
    missing_package,
    needed_extra,
    package_refusal,
)
from purejaxdrl.env.playground_env import import_registry


@pytest.mark.parametrize(
    ("env_id", "package", "extra"),
    [
        ("playground/CartpoleBalance", "mujoco_playground", "playground"),
        ("envpool:Pong-v5", "envpool", "envpool"),
        ("gymnasium:CartPole-v1", "gymnasium", "gymnasium"),
        ("Craftax-Classic-Symbolic-v1", "craftax", "craftax"),
    ],
)
def test_each_kind_of_id_names_its_package_and_extra(
    env_id, package, extra, monkeypatch
):
    assert needed_extra(env_id) == extra
    monkeypatch.setitem(sys.modules, package, None)  # as if not installed
    assert missing_package(env_id) == (
        f"env.id={env_id!r} needs the {package} package, which is not "
        f"installed: pip install 'purejaxdrl[{extra}]'"
    )
    assert set(OPTIONAL_PACKAGES.values()) >= {(package, extra)}


def test_gymnax_and_user_ids_need_no_extra():
    assert needed_extra("CartPole-v1") is None
    assert missing_package("my-env") is None


@pytest.mark.parametrize(
    ("env_id", "package", "make"),
    [
        ("Craftax-Classic-Symbolic-v1", "craftax", CraftaxEnv),
        ("playground/CartpoleBalance", "mujoco_playground", import_registry),
    ],
)
def test_an_adapter_whose_import_fails_says_what_the_check_before_it_says(
    env_id, package, make, monkeypatch
):
    # The check before a run and the adapter's own refusal (a notebook
    # building the env itself) are one line from one table. Its modules too:
    # one imported already (by another test) would import without its package.
    for name in [m for m in sys.modules if m.startswith(package + ".")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, package, None)
    with pytest.raises(pjd.ConfigError) as e:
        make(env_id)
    assert str(e.value) == missing_package(env_id)


def test_a_missing_dependency_of_an_installed_package_is_named():
    error = ModuleNotFoundError("No module named 'mujoco'", name="mujoco")
    line = package_refusal("playground/CartpoleBalance", error)
    assert line == (
        "env.id='playground/CartpoleBalance' needs the mujoco_playground package: "
        "mujoco_playground is installed but cannot import mujoco, which it needs "
        "(No module named 'mujoco'); pip install mujoco"
    )


@pytest.mark.parametrize(
    "error",
    [
        ImportError("cannot import name 'Foo' from 'craftax.x'", name="craftax.x"),
        ImportError("libGL.so.1: cannot open shared object file"),
    ],
)
def test_an_installed_package_that_fails_to_import_is_not_called_missing(error):
    # rd21 #2: a broken install was told to install what it has, and its own
    # error was dropped.
    line = package_refusal("Craftax-Classic-Symbolic-v1", error)
    assert "is not installed" not in line
    assert line.startswith(
        "env.id='Craftax-Classic-Symbolic-v1' needs the craftax package: craftax "
        f"is installed but failed to import (ImportError: {error})"
    )
