"""Whose code a file is: the one rule the CLI, warnings and env errors share."""

import os
import sys

import jax
import numpy as np

import purejaxdrl
from purejaxdrl import frames
from purejaxdrl.frames import owner


def test_each_kind_of_file_has_its_owner(tmp_path):
    mine = tmp_path / "my_env.py"
    mine.write_text("x = 1\n")
    assert owner(purejaxdrl.__file__) == "purejaxdrl"
    assert owner(frames.__file__) == "purejaxdrl"
    assert owner(jax.__file__) == "library"
    assert owner(np.__file__) == "library"
    assert owner(os.__file__) == "python"
    assert owner(str(mine)) == "user"


def test_names_that_are_no_file_are_pythons():
    for name in ("<frozen importlib._bootstrap>", "<string>", "numpy/random/x.pyx"):
        assert owner(name) == "python"


def test_a_file_inside_an_installed_package_is_a_librarys(tmp_path):
    # A virtual environment outside this interpreter's own prefix.
    lib = tmp_path / "venv" / "lib" / "python3" / "site-packages" / "gym" / "core.py"
    lib.parent.mkdir(parents=True)
    lib.write_text("")
    assert owner(str(lib)) == "library"


def test_a_symlinked_path_to_the_package_is_still_the_packages(tmp_path):
    link = tmp_path / "linked"
    link.symlink_to(os.path.dirname(purejaxdrl.__file__))
    assert owner(str(link / "config.py")) == "purejaxdrl"


def test_the_user_frame_is_the_innermost_of_the_users_code(tmp_path):
    from purejaxdrl.env.user_frames import user_frame

    source = tmp_path / "corridor.py"
    source.write_text("def step():\n    raise ValueError('bad')\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import corridor

        try:
            corridor.step()
        except ValueError as e:
            error = e
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("corridor", None)
    assert user_frame(error).endswith("corridor.py:2: raise ValueError('bad')")
