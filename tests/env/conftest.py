"""Fixtures the environment tests share."""

import pytest


@pytest.fixture
def no_menagerie(monkeypatch, tmp_path):
    """No MuJoCo Menagerie anywhere the Playground adapter looks, and no clone."""
    import subprocess

    from etils import epath
    from mujoco_playground._src import mjx_env

    from purejaxdrl.env import menagerie

    def no_clone(*args, **kwargs):
        raise AssertionError("Playground tried to clone Menagerie")

    monkeypatch.setattr(subprocess, "Popen", no_clone)
    monkeypatch.setattr(mjx_env, "MENAGERIE_PATH", epath.Path(tmp_path / "none"))
    monkeypatch.delenv(menagerie.MENAGERIE_VARIABLE, raising=False)
