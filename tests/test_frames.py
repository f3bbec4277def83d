"""Whose code a file is: the one rule the CLI, warnings and env errors share."""

import os
import sys

import jax
import numpy as np
import pytest

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


@pytest.mark.parametrize(
    "body, line",
    [
        ("    raise ValueError('bad')\n", "corridor.py:2: raise ValueError('bad')"),
        # Raised inside JAX, the usual case: JAX's frames, innermost, are
        # passed over for the user's line that called it.
        (
            "    import jax.numpy as jnp\n    return jnp.reshape(jnp.zeros(4), (3,))\n",
            "corridor.py:3: return jnp.reshape(jnp.zeros(4), (3,))",
        ),
    ],
    ids=["raised-by-the-user", "raised-inside-jax"],
)
def test_the_user_frame_is_the_innermost_of_the_users_code(tmp_path, body, line):
    from purejaxdrl.env.user_frames import user_frame

    source = tmp_path / "corridor.py"
    source.write_text("def step():\n" + body)
    sys.path.insert(0, str(tmp_path))
    try:
        import corridor

        try:
            corridor.step()
        except (TypeError, ValueError) as e:
            error = e
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("corridor", None)
    assert user_frame(error).endswith(line)


def _raised_through_json(filename: str) -> ValueError:
    """The ValueError of `json.loads` called from a function whose code is
    `filename`'s: the standard library's frames are the innermost."""
    namespace = {}
    source = "import json\ndef load(text):\n    return json.loads(text)\n"
    exec(compile(source, filename, "exec"), namespace)
    with pytest.raises(ValueError) as caught:
        namespace["load"]("{damaged")
    return caught.value


def test_raised_here_passes_over_pythons_frames_to_whose_code_called_them(tmp_path):
    from purejaxdrl.cli import raised_here

    # Code of purejaxdrl's (compiled as frames.py's) whose json.loads raised:
    # one line, as purejaxdrl's checks are, not json's traceback.
    ours = _raised_through_json(frames.__file__)
    tb, owners = ours.__traceback__, []
    while tb is not None:
        owners.append(owner(tb.tb_frame.f_code.co_filename))
        tb = tb.tb_next
    assert owners[-1] == "python" and "purejaxdrl" in owners
    assert raised_here(ours)
    # The same standard-library frames below a user's code: their traceback.
    assert not raised_here(_raised_through_json(str(tmp_path / "mine.py")))
