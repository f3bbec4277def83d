"""Drawing MuJoCo Playground episodes with MuJoCo's own renderer, off screen.

Playground's tasks draw a state with `mujoco.Renderer`, which needs an OpenGL
context. A machine without a display has one through EGL (a GPU driver's, or
Mesa's) or OSMesa (Mesa's software renderer). MuJoCo picks its context from
`MUJOCO_GL` when it is first imported; unset, it picks GLFW, which needs a
display. So `check_gl` keeps a `MUJOCO_GL` the user set, and otherwise tries
EGL, then OSMesa, each in a fresh Python (a process cannot switch OpenGL
platforms once one is loaded), and points this process's MuJoCo at the first
that draws. Frames are written to a GIF by Pillow, or to an MP4 where
imageio-ffmpeg is installed.
"""

import contextlib
import ctypes.util
import importlib
import importlib.util
import io
import os
import pathlib
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from purejaxdrl.config import ConfigError

HEADLESS = ("egl", "osmesa")
# Playground's own default frame size (`MjxEnv.render`).
HEIGHT, WIDTH = 240, 320
# Browsers show GIF frames shorter than 20 ms at 100 ms; shorter steps slow.
MIN_FRAME_MS = 20
# States drawn per `render` call: one OpenGL context for each batch.
_BATCH = 64
# MuJoCo's reasons run to ~200 characters ("... which is required for device
# rendering."); longer ones (a traceback's last line) are cut at a word.
_REASON_CHARS = 300
_PROBE = (
    "import mujoco; m = mujoco.MjModel.from_xml_string("
    "'<mujoco><worldbody><geom size=\".1\"/></worldbody></mujoco>'); "
    "r = mujoco.Renderer(m, 8, 8); d = mujoco.MjData(m); mujoco.mj_forward(m, d); "
    "r.update_scene(d); r.render(); r.close()"
)


def check_video(out: pathlib.Path) -> None:
    """Refuses an MP4 where imageio-ffmpeg, which writes it, is missing.

    Raises:
      ConfigError: `out` is an MP4 and imageio-ffmpeg is not installed.

    """
    if out.suffix.lower() == ".mp4" and not (
        importlib.util.find_spec("imageio")
        and importlib.util.find_spec("imageio_ffmpeg")
    ):
        raise ConfigError(
            f"--render {out}: an MP4 needs imageio-ffmpeg, which is not installed; "
            "pip install imageio imageio-ffmpeg, or name the file *.gif."
        )


def _probe(backend: str) -> str:
    """Why a fresh Python's MuJoCo cannot draw with `backend`; "" if it can."""
    env = {**os.environ, "MUJOCO_GL": backend}
    env.pop("PYOPENGL_PLATFORM", None)  # MuJoCo sets it for EGL and OSMesa
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        return "timed out"
    if done.returncode == 0:
        return ""
    lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
    return _clip(lines[-1])


def _draws_here() -> str:
    """Why this process's MuJoCo cannot draw a tiny scene; "" if it can."""
    try:
        import mujoco

        model = mujoco.MjModel.from_xml_string(
            '<mujoco><worldbody><geom size=".1"/></worldbody></mujoco>'
        )
        renderer = mujoco.Renderer(model, 8, 8)
        renderer.close()
    except Exception as e:  # noqa: BLE001 (every failure becomes one line)
        lines = str(e).strip().splitlines() or [""]
        return _clip(f"{type(e).__name__}: {lines[0]}")
    return ""


def _clip(reason: str) -> str:
    """`reason` whole, or cut at a word with "…" past `_REASON_CHARS`.

    It was cut at 160 characters, mid-word: "which is required fo".
    """
    reason = " ".join(reason.split())
    if len(reason) <= _REASON_CHARS:
        return reason
    return reason[:_REASON_CHARS].rsplit(" ", 1)[0] + " …"


def _fix() -> str:
    """What to do when no backend draws, for the libraries found here.

    Where libEGL is installed, EGL failed for want of a device or driver
    (`Cannot initialize a EGL device display`), which `apt-get install
    libegl1` does not mend.
    """
    egl = (
        "libEGL is installed but no EGL driver works here (a GPU's driver, or "
        "Mesa's software one: apt-get install libegl-mesa0)"
        if ctypes.util.find_library("EGL")
        else "install EGL (apt-get install libegl1)"
    )
    osmesa = (
        "OSMesa is installed but did not draw"
        if ctypes.util.find_library("OSMesa")
        else "install OSMesa (apt-get install libosmesa6) and set MUJOCO_GL=osmesa"
    )
    return f"{egl}; {osmesa}; or evaluate without --render"


def _use(backend: str) -> None:
    """Makes this process's MuJoCo draw with `backend` (egl or osmesa)."""
    if "mujoco" not in sys.modules:
        os.environ["MUJOCO_GL"] = backend  # read when MuJoCo is imported
        return
    try:
        from mujoco.rendering.classic import gl_context
    except ImportError:  # MuJoCo before 3.3: the module sat at the top
        from mujoco import gl_context
    if getattr(gl_context, "_MUJOCO_GL", None) == backend:
        return
    module = importlib.import_module(f"mujoco.{backend}")
    # MuJoCo chose its context class at import (unset MUJOCO_GL: GLFW); its
    # Renderer reads this module global each time one is made.
    gl_context.GLContext = module.GLContext
    os.environ["MUJOCO_GL"] = backend


def check_gl() -> str:
    """The OpenGL backend MuJoCo draws with here (`MUJOCO_GL`'s value).

    A `MUJOCO_GL` the user set is checked as it is; else EGL, then OSMesa.

    Raises:
      ConfigError: MuJoCo cannot draw here; one line naming each backend's
        failure and the missing piece.

    """
    chosen = os.environ.get("MUJOCO_GL", "").strip().lower()
    if chosen:
        why = _draws_here()
        if why:
            raise ConfigError(
                f"--render: MuJoCo cannot draw with MUJOCO_GL={chosen} ({why}); "
                f"{_fix()}."
            )
        return chosen
    failures = []
    for backend in HEADLESS:
        why = _probe(backend)
        if not why:
            _use(backend)
            why = _draws_here()
            if not why:
                return backend
        failures.append(f"MUJOCO_GL={backend}: {why}")
    raise ConfigError(
        f"--render: MuJoCo found no OpenGL to draw with off screen "
        f"({'; '.join(failures)}); {_fix()}."
    )


def frame_ms(env: Any) -> int:
    """How long a frame shows: one control step (`env.dt`), at least 20 ms."""
    return max(MIN_FRAME_MS, 10 * round(float(env.dt) * 100))


def playground_frames(env: Any, states: list[Any]) -> Iterator[np.ndarray]:
    """Playground's drawing of each state, uint8 [240, 320, 3], lazily.

    Args:
      env: Playground's `MjxEnv`.
      states: its `State`s on the host, one per step.

    The camera is the model's first (DM Control's track the body), else
    MuJoCo's free camera.

    """
    camera = 0 if env.mj_model.ncam > 0 else None
    for start in range(0, len(states), _BATCH):
        batch = states[start : start + _BATCH]
        # Playground draws a tqdm bar on stderr; ours counts the frames.
        with contextlib.redirect_stderr(io.StringIO()):
            frames = env.render(batch, height=HEIGHT, width=WIDTH, camera=camera)
        yield from frames


def write_video(
    frames: Iterable[np.ndarray],
    out: pathlib.Path,
    ms: int,
    progress: Callable[[int], None] | None = None,
) -> pathlib.Path:
    """Writes `frames` to the MP4 `out` (H.264 by imageio-ffmpeg), `ms` each."""
    import imageio.v2 as imageio

    with imageio.get_writer(out, fps=1000 / ms, macro_block_size=8) as writer:
        for done, frame in enumerate(frames, 1):
            writer.append_data(frame)
            if progress is not None:
                progress(done)
    return out
