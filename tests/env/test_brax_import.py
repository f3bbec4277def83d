"""Importing brax through purejaxdrl prints nothing about MJX's optional `warp`."""

import os
import subprocess
import sys
import textwrap

import pytest

WARP = ("Failed to import warp", "Failed to import mujoco_warp")


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, **env},
    )


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "code",
    [
        "import purejaxdrl as pjd; pjd.env.make('brax/inverted_pendulum')",
        "from purejaxdrl.env.brax_env import BraxEnv; BraxEnv('inverted_pendulum')",
    ],
)
def test_making_a_brax_env_prints_nothing_about_warp(code):
    done = _python(code)
    assert done.returncode == 0, done.stderr
    for message in WARP:
        assert message not in done.stdout + done.stderr


def test_only_the_warp_lines_are_dropped(tmp_path):
    # A stand-in brax whose import prints MJX's two lines among others.
    envs = tmp_path / "brax" / "envs"
    envs.mkdir(parents=True)
    (tmp_path / "brax" / "__init__.py").write_text("")
    (envs / "__init__.py").write_text(
        "print('before')\n"
        "print('Failed to import warp:', \"No module named 'warp'\")\n"
        "print('Failed to import mujoco_warp:', \"No module named 'warp'\")\n"
        "print('a warning that mentions Failed to import warp: kept')\n"
    )
    done = _python(
        """
        from purejaxdrl.env.brax_env import import_brax_envs
        print(import_brax_envs().__file__)
        """,
        PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "before",
        "a warning that mentions Failed to import warp: kept",
        str(envs / "__init__.py"),
    ]
