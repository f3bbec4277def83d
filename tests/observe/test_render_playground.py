"""MuJoCo Playground episodes drawn by MuJoCo's renderer, off screen.

Where this machine can draw off screen (EGL or OSMesa, found here by a fresh
Python apart from the code under test), an episode becomes a GIF of
240 x 320 frames, one per step; where it cannot, `--render` is one line naming
what is missing. Each test asserts the path this machine takes.
"""

import importlib.util
import os
import subprocess
import sys

import jax
import pytest
from PIL import Image

pytest.importorskip("mujoco_playground")

import purejaxdrl as pjd  # noqa: E402
from purejaxdrl import env as envs  # noqa: E402
from purejaxdrl.config import ConfigError  # noqa: E402
from purejaxdrl.observe import mujoco_render  # noqa: E402
from purejaxdrl.observe.render import (  # noqa: E402
    check_renderable,
    record_episode,
    render,
)

DRAW = """
import mujoco
m = mujoco.MjModel.from_xml_string(
    '<mujoco><worldbody><geom size="1"/></worldbody></mujoco>')
r = mujoco.Renderer(m, 16, 16)
d = mujoco.MjData(m)
mujoco.mj_forward(m, d)
r.update_scene(d)
assert r.render().shape == (16, 16, 3)
"""
HAS_MP4 = all(map(importlib.util.find_spec, ("imageio", "imageio_ffmpeg")))


def _machine_draws() -> bool:
    """Whether MuJoCo draws off screen here (the user's MUJOCO_GL, else EGL, OSMesa)."""
    chosen = os.environ.get("MUJOCO_GL")
    for backend in [chosen] if chosen else ["egl", "osmesa"]:
        env = {**os.environ, "MUJOCO_GL": backend}
        env.pop("PYOPENGL_PLATFORM", None)
        done = subprocess.run([sys.executable, "-c", DRAW], env=env, timeout=120)
        if done.returncode == 0:
            return True
    return False


@pytest.fixture
def gl_env(monkeypatch):
    """MUJOCO_GL as it was before the test, whatever `check_gl` sets."""
    if "MUJOCO_GL" in os.environ:
        monkeypatch.setenv("MUJOCO_GL", os.environ["MUJOCO_GL"])
    else:
        monkeypatch.delenv("MUJOCO_GL", raising=False)


def _episode(steps):
    """An untrained policy's episode of CartpoleBalance, `steps` long."""
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole_balance").config,
        {
            "env": {"options": {"episode_length": steps}},
            "devices": 1,
            "num_envs": 1,
            "unroll_length": 1,
            "total_steps": 1,
            # One sample per update: nothing trains, so nothing to normalise.
            "ppo": {"num_minibatches": 1, "normalize_advantages": False},
        },
    )
    exp = pjd.training.make_experiment(config)
    state = exp.runner.init(jax.random.key(0))
    key = jax.random.key(1)
    episode = record_episode(
        exp.env, exp.network, state.agent.params, state.env_params, key, steps + 2
    )
    return exp, episode


# MJX compiles the episode's scan for about a minute on 2 CPU cores.
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_an_episode_is_a_gif_of_playgrounds_frames_or_one_line_on_what_lacks(
    tmp_path, gl_env
):
    exp, episode = _episode(6)
    assert episode.length == 6
    gif = tmp_path / "balance.gif"
    if not _machine_draws():
        with pytest.raises(ConfigError) as error:
            render(exp.env, episode, gif)
        message = str(error.value)
        assert "\n" not in message and "MUJOCO_GL=egl" in message
        assert "libegl" in message and "osmesa" in message.lower()
        assert not gif.exists()
        return
    drawn = []
    render(exp.env, episode, gif, progress=drawn.append)
    assert drawn == list(range(1, 7))
    with Image.open(gif) as image:
        assert image.size == (320, 240)  # Playground's 240 x 320 frames
        assert image.n_frames == 6  # the cart moves: no two frames alike
        assert image.info["duration"] == 20  # 10 ms steps, shown 20 ms
        image.seek(3)
        colours = image.convert("RGB").getcolors(320 * 240)
        assert len(colours) > 20, "a blank frame"
    mp4 = tmp_path / "balance.mp4"
    if not HAS_MP4:
        with pytest.raises(ConfigError, match="an MP4 needs imageio-ffmpeg"):
            render(exp.env, episode, mp4)
        return
    render(exp.env, episode, mp4)
    import imageio.v3 as iio

    assert iio.imread(mp4).shape == (6, 240, 320, 3)


def test_no_opengl_is_one_line_naming_each_backend_and_the_fix(monkeypatch, gl_env):
    monkeypatch.delenv("MUJOCO_GL", raising=False)
    monkeypatch.setattr(mujoco_render, "_probe", lambda b: f"no lib for {b}")
    monkeypatch.setattr(mujoco_render.ctypes.util, "find_library", lambda n: None)
    with pytest.raises(ConfigError) as error:
        mujoco_render.check_gl()
    message = str(error.value)
    assert "\n" not in message
    assert "MUJOCO_GL=egl: no lib for egl; MUJOCO_GL=osmesa: no lib for osmesa" in (
        message
    )
    assert "apt-get install libegl1" in message and "libosmesa6" in message


# MuJoCo's own reason where libEGL loads but finds no EGL device (pg16 #4).
NO_DEVICE = (
    "ImportError: Cannot initialize a EGL device display. This likely means "
    "that your EGL driver does not support the PLATFORM_DEVICE extension, "
    "which is required for device rendering."
)


def test_with_libegl_installed_the_reason_is_whole_and_no_package_is_prescribed(
    monkeypatch, gl_env
):
    # The reason was cut at 160 characters ("which is required fo"), and the
    # fix said `apt-get install libegl1` where libEGL was installed.
    monkeypatch.delenv("MUJOCO_GL", raising=False)
    failed = subprocess.CompletedProcess([], 1, "", f"Traceback...\n{NO_DEVICE}\n")
    monkeypatch.setattr(mujoco_render.subprocess, "run", lambda *a, **k: failed)
    found = {"EGL": "libEGL.so.1"}
    monkeypatch.setattr(mujoco_render.ctypes.util, "find_library", found.get)
    with pytest.raises(ConfigError) as error:
        mujoco_render.check_gl()
    message = str(error.value)
    assert "\n" not in message and f"MUJOCO_GL=egl: {NO_DEVICE};" in message
    assert "libegl1" not in message
    assert "libEGL is installed but no EGL driver works here" in message
    assert "apt-get install libosmesa6" in message


def test_a_reason_past_its_length_is_cut_at_a_word():
    reason = mujoco_render._clip("word " * 100)
    assert reason.endswith("word …") and len(reason) <= 302


def test_a_users_mujoco_gl_is_checked_as_it_is(monkeypatch, gl_env):
    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    monkeypatch.setattr(mujoco_render, "_draws_here", lambda: "ImportError: no GL")
    probed = []
    monkeypatch.setattr(mujoco_render, "_probe", probed.append)
    with pytest.raises(ConfigError, match=r"MUJOCO_GL=osmesa \(ImportError: no GL\)"):
        mujoco_render.check_gl()
    assert probed == []  # no other backend is tried


def test_check_renderable_takes_a_gif_or_an_mp4(tmp_path, gl_env):
    env = envs.make("playground/CartpoleBalance")
    with pytest.raises(ConfigError, match=r"GIF or an MP4; name the file \*.gif"):
        check_renderable(env, tmp_path / "x.html")
    if not HAS_MP4:
        with pytest.raises(ConfigError) as error:
            check_renderable(env, tmp_path / "x.mp4")
        assert "pip install imageio imageio-ffmpeg" in str(error.value)
    if _machine_draws():
        assert check_renderable(env, tmp_path / "x.gif") == tmp_path / "x.gif"
    else:
        with pytest.raises(ConfigError, match="libegl"):
            check_renderable(env, tmp_path / "x.gif")


def test_a_mujoco_gl_without_its_library_is_one_line_on_making_a_task():
    # MuJoCo loads MUJOCO_GL's OpenGL library when imported (PyOpenGL without
    # OSMesa fails there with an AttributeError): making a task says so.
    env = {**os.environ, "MUJOCO_GL": "osmesa"}
    env.pop("PYOPENGL_PLATFORM", None)
    imports = subprocess.run(
        [sys.executable, "-c", "import mujoco"], env=env, capture_output=True
    )
    make = "from purejaxdrl import env; env.make('playground/CartpoleBalance')"
    done = subprocess.run(
        [sys.executable, "-c", make], env=env, capture_output=True, text=True
    )
    if imports.returncode == 0:  # OSMesa is installed here
        assert done.returncode == 0, done.stderr[-2000:]
        return
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("purejaxdrl.config.ConfigError: importing MuJoCo with "
                           "MUJOCO_GL=osmesa failed"), done.stderr[-2000:]  # fmt: skip
    assert "libosmesa6" in last
