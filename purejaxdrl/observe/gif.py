"""Frames of an episode and the GIF they make.

gymnax environments are drawn by gymnax's own drawings (gymnasium's pygame
renderer for classic control, matplotlib figures for MinAtar, Catch, mazes),
where it has one (`_PYGAME`, `_FIGURE`: the others are refused);
`gymnasium:` environments by their own `rgb_array` drawing; pixel
observations of host environments by their newest frame, upscaled.
Pillow writes every GIF (matplotlib's PillowWriter uses it too), so there is
no new dependency.
"""

import os
import pathlib
import warnings
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.env.gymnax_env import GymnaxEnv
from purejaxdrl.env.host.base import import_optional
from purejaxdrl.observe.numbers import return_text

SCALE = 3
# Atari runs at 60 frames/s and EnvPool skips 4: a step is 67 ms of play. GIF
# delays are in hundredths of a second.
PIXEL_FRAME_MS = 70
# What gymnax draws: its Visualizer (gymnax/visualize/visualizer.py, `init`
# and `update`) picks a drawing by the environment's `name` and has these
# alone; any other name (the bsuite chains and bandits, FrozenLake, Reacher,
# a user's own class) falls through and leaves blank axes, so those are
# refused (`check_drawable`). Classic control, by gymnasium's pygame renderer
# (`_classic_control_frames`, one environment for every frame):
_PYGAME = ("Acrobot-v1", "CartPole-v1", "Pendulum-v1", "MountainCar-v0",
           "MountainCarContinuous-v0")  # fmt: skip
# and the others, in the Visualizer's matplotlib figure (`_figure_frames`):
_FIGURE = ("Catch-bsuite", "Asterix-MinAtar", "Breakout-MinAtar",
           "Freeway-MinAtar", "Seaquest-MinAtar", "SpaceInvaders-MinAtar",
           "Pong-misc", "PointRobot-misc", "MetaMaze-misc",
           "FourRooms-misc")  # fmt: skip
# How long a frame shows (gymnax's Visualizer's intervals), milliseconds.
_PYGAME_FRAME_MS, _FIGURE_FRAME_MS = 50, 100
# The title band above a classic-control drawing, pixels.
_TITLE_HEIGHT = 28
# gymnax's figures (MinAtar, Catch, mazes): its 6 x 5 inches at 200 / 3 dots
# per inch, 400 x 333 pixels, not 600 x 500; the same layout, fewer pixels.
_FIGURE_DPI = 200 / 3


def write_gif(
    frames: Iterable[Any],
    out: str | pathlib.Path,
    frame_ms: int,
    progress: Callable[[int], None] | None = None,
) -> pathlib.Path:
    """Writes `frames` (PIL images or uint8 arrays) to the GIF `out`, `frame_ms` each.

    Frames are taken one by one as Pillow compares each with the last, so a
    generator's frames are drawn as it goes, and `progress(n)` is called once
    the n-th has been taken. Pillow merges a frame identical to the one before
    into it (their times add), so a GIF may hold fewer frames than steps; it
    plays as long.
    """
    from PIL import Image

    def images() -> Iterator[Any]:
        for done, frame in enumerate(frames, 1):
            yield frame if isinstance(frame, Image.Image) else Image.fromarray(frame)
            if progress is not None:
                progress(done)

    out, stream = pathlib.Path(out), images()
    try:
        first = next(stream)
        first.save(out, save_all=True, append_images=stream, duration=frame_ms, loop=0)
    finally:
        # A failed save leaves the frames half drawn; close their generator
        # now (a gymnasium drawer's `finally`), not at interpreter shutdown,
        # where closing it fails with a second traceback.
        stream.close()
        if isinstance(frames, Generator):
            frames.close()
    return out


def headless() -> None:
    """No window, no sound card: pygame draws off screen."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")


def newest_frame(obs: np.ndarray) -> np.ndarray:
    """The newest frame of a pixel observation, uint8 [H, W] or [H, W, 3].

    A stack's frames lie along its channel axis, oldest first, read as the
    pixel torsos read it (`networks.pixels.channels_first`): first where that
    axis is the smallest (EnvPool's [4, 84, 84]), last otherwise ([84, 84, 4],
    and [8, 8, 16] as the `cnn` torso takes it); [H, W, 3] is one RGB image.
    """
    if obs.ndim == 2:
        return obs
    if obs.shape[0] < min(obs.shape[1:]):
        return obs[-1]
    return obs if obs.shape[-1] == 3 else obs[..., -1]


def upscale(frame: np.ndarray, scale: int = SCALE) -> np.ndarray:
    """`frame` [H, W, ...] as [scale H, scale W, ...], each pixel a square."""
    return np.repeat(np.repeat(frame, scale, axis=0), scale, axis=1)


def gymnax_frames(
    env: GymnaxEnv, states: list[Any], rewards: np.ndarray
) -> tuple[Iterator[Any], int]:
    """Gymnax's drawing of each state, lazily, and how long a frame shows (ms).

    Raises:
      ConfigError: gymnax has no drawing of `env`, or draws it with pygame,
        which is not installed.

    """
    check_drawable(env)
    if env.env_id in _PYGAME:
        return _classic_control_frames(env, states, rewards), _PYGAME_FRAME_MS
    return _figure_frames(env, states, rewards), _FIGURE_FRAME_MS


def check_drawable(env: GymnaxEnv) -> None:
    """Raises ConfigError unless gymnax can draw `env` here.

    Classic control (`_PYGAME`, by its id) needs pygame; the Visualizer's
    figures (`_FIGURE`) go by the gymnax environment's own `name`, as the
    Visualizer does (a wrapped class's name, not the id it was registered
    under). `render.check_renderable` asks before anything plays;
    `gymnax_frames` again, for callers that draw without asking first.

    Raises:
      ConfigError: gymnax has no drawing of `env` (naming it and what gymnax
        draws), or draws it with pygame, which is not installed.

    """
    if env.env_id not in _PYGAME:
        if getattr(env.env, "name", None) not in _FIGURE:
            raise ConfigError(
                f"--render: gymnax has no drawing of {env.env_id} (its drawings "
                f"are of {', '.join(_PYGAME + _FIGURE)}); evaluate without --render."
            )
        return
    headless()
    try:
        import pygame  # noqa: F401
    except ImportError:
        raise ConfigError(
            f"--render: gymnax draws {env.env_id} with pygame, which is not "
            "installed; pip install 'purejaxdrl[render]'."
        ) from None


def gymnasium_drawer(name: str, options: dict[str, Any]) -> Any:
    """One `gymnasium:<name>` environment that draws RGB frames.

    Raises:
      ConfigError: its constructor takes no `render_mode`, or it draws no
        `rgb_array` frames.

    """
    headless()  # pygame draws classic control
    gym = import_optional("gymnasium", "gymnasium")
    with warnings.catch_warnings():  # an unknown render mode only warns
        warnings.simplefilter("ignore")
        # One environment, not a vector: the vector's own option goes, and
        # the run's render mode (if it set one) gives way to rgb_array.
        drop = ("vectorization_mode", "render_mode")
        kwargs = {k: v for k, v in options.items() if k not in drop}
        try:
            env = gym.make(name, render_mode="rgb_array", **kwargs)
        except TypeError as e:
            if "render_mode" not in str(e):
                raise
            # Gymnasium passes render_mode to the constructor, which refused it.
            raise ConfigError(
                f"--render: gymnasium:{name}'s constructor takes no render_mode, "
                "so it cannot draw frames; give its __init__ a render_mode "
                "argument (Gymnasium's API, with 'rgb_array' in "
                "metadata['render_modes']) or evaluate without --render."
            ) from None
    if "rgb_array" not in env.metadata.get("render_modes", ()):
        env.close()
        raise ConfigError(
            f"--render: gymnasium:{name} draws no frames (render modes "
            f"{env.metadata.get('render_modes', [])}; a GIF needs 'rgb_array', "
            "or pixel observations); evaluate without --render."
        )
    return env


def draw_frame(env: Any, name: str) -> np.ndarray:
    """`env`'s drawing of its present state, uint8 [H, W, 3].

    Raises:
      ConfigError: the package it draws with is not installed.

    """
    gym = import_optional("gymnasium", "gymnasium")
    try:
        return np.asarray(env.render(), np.uint8)
    except gym.error.DependencyNotInstalled as e:
        raise ConfigError(
            f"--render: gymnasium draws {name} with a package that is not "
            f"installed ({e}); pip install 'purejaxdrl[render]'."
        ) from None


def _font(size: int) -> Any:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except ImportError:  # a Pillow without FreeType: its small bitmap font
        return ImageFont.load_default()


def _classic_control_frames(
    env: GymnaxEnv, states: list[Any], rewards: np.ndarray
) -> Iterator[Any]:
    """Gymnasium's drawing of each state under a title (step, return so far).

    gymnax's own Visualizer makes and closes a gymnasium environment for every
    frame, then redraws it in a matplotlib figure (~0.2 s a frame); here one
    environment draws them all and Pillow adds the title (~10 ms a frame).
    Frames are palette images on the fixed web palette: any colour keeps its
    place, and converting costs ~1 ms (an adaptive palette per frame, ~20 ms).

    Yields:
      PIL images, mode "P", 600 x 428 pixels for CartPole.

    """
    import gymnasium
    from gymnax.visualize import vis_gym
    from PIL import Image, ImageDraw

    name, font = env.env_id, _font(16)
    returns = np.cumsum(rewards)
    drawer = gymnasium.make(name, render_mode="rgb_array")
    try:
        drawer.reset(seed=0)
        inner = drawer.unwrapped
        vis_gym.set_gym_params(inner, name, env.default_params)
        for t, state in enumerate(states):
            inner.state = vis_gym.get_gym_state(state, name)
            if name == "Pendulum-v1":  # its torque arrow
                inner.last_u = np.asarray(state.last_u, dtype=np.float64)
            drawing = np.asarray(drawer.render(), np.uint8)
            height, width = drawing.shape[:2]
            frame = Image.new("RGB", (width, height + _TITLE_HEIGHT), "white")
            frame.paste(Image.fromarray(drawing), (0, _TITLE_HEIGHT))
            title = f"{name}: step {t + 1}, return {return_text(float(returns[t]))}"
            ImageDraw.Draw(frame).text((8, 5), title, fill="black", font=font)
            yield frame.convert(
                "P", palette=Image.Palette.WEB, dither=Image.Dither.NONE
            )
    finally:
        drawer.close()


def _figure_frames(
    env: GymnaxEnv, states: list[Any], rewards: np.ndarray
) -> Iterator[Any]:
    """The matplotlib drawing of each state by gymnax: one figure, redrawn.

    gymnax's Visualizer makes its figure with pyplot, so under the caller's
    backend: switching it (`matplotlib.use`) would close the caller's open
    figures and leave a notebook's later ones blank. The figure is drawn on
    an Agg canvas of its own instead, the same pixels whatever the backend,
    and closed when the frames end.

    Yields:
      PIL images, RGB, 400 x 333 pixels.

    """
    import matplotlib.pyplot as plt
    from gymnax.visualize import Visualizer
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    with plt.ioff():  # an interactive window backend would show the figure
        vis = Visualizer(env.env, env.default_params, states, np.cumsum(rewards))
    try:
        # Before `init`, whose tight layout measures text with the canvas's
        # renderer. pyplot still lists the figure (PointRobot's drawing
        # calls `plt.axis`, on the current figure) until it is closed.
        canvas = FigureCanvasAgg(vis.fig)
        vis.fig.set_dpi(_FIGURE_DPI)
        vis.init()
        for t in range(len(states)):
            vis.update(t)
            canvas.draw()
            rgba = np.asarray(canvas.buffer_rgba())
            yield Image.fromarray(rgba[..., :3].copy())
    finally:
        plt.close(vis.fig)
