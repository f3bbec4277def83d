"""Watching a policy: one episode recorded on device, drawn on the host.

`record_episode` plays the deterministic policy for one episode in one compiled
scan and returns the environment state before every step. `render` draws them:
a GIF for gymnax environments (gymnax's own matplotlib drawings: classic
control, MinAtar, ...), an HTML viewer for brax environments (brax's own).
`DevicePlayer` is the `play.Player` of device runs: their evaluations and
drawings.
"""

import os
import pathlib
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import Env, EnvParams, Wrapper
from purejaxdrl.env.brax_env import BraxEnv
from purejaxdrl.env.gymnax_env import GymnaxEnv
from purejaxdrl.networks import Network, RecurrentNetwork
from purejaxdrl.observe.evaluation import (
    device_evaluation,
    episode_ended,
    make_evaluate,
    mode_policy,
)
from purejaxdrl.observe.play import Drawn
from purejaxdrl.observe.progress import counting
from purejaxdrl.runners.base import Lowered
from purejaxdrl.types import Params, PRNGKey


class Episode(NamedTuple):
    """One recorded episode.

    Attributes:
      states: the environment states before each step, one per step (host
        pytrees of the innermost environment: gymnax states, brax States).
      rewards: float32 [length].
      length: number of steps; the episode ended (or was cut at the step cap)
        on the last one.

    """

    states: list[Any]
    rewards: np.ndarray
    length: int


def _base(env: Env) -> Env:
    while isinstance(env, Wrapper):
        env = env.env
    return env


def _inner_state(state: Any) -> Any:
    # Our wrappers and adapters keep the wrapped state in `inner`.
    while hasattr(state, "inner"):
        state = state.inner
    return state


def record_episode(
    env: Env,
    network: Network | RecurrentNetwork,
    params: Params,
    env_params: EnvParams,
    key: PRNGKey,
    max_steps: int = 1000,
) -> Episode:
    """Plays the deterministic policy for one episode (at most `max_steps`).

    Not jittable (returns host data); the episode itself is one compiled scan.
    """
    policy = mode_policy(network)

    @jax.jit
    def play(params: Params, env_params: EnvParams, key: PRNGKey) -> tuple:
        key_reset, key_steps = jax.random.split(key)
        state, ts = env.reset(key_reset, env_params)

        def step(carry: tuple, key_t: PRNGKey) -> tuple:
            state, core, obs, running = carry
            # A batch of one for the policy; its core state goes on through
            # the episode (nothing after the episode is kept).
            core, action = policy.act(params, core, obs[None], jnp.zeros(1, bool))
            new, ts = env.step(key_t, state, action[0], env_params)
            ended = episode_ended(ts)
            out = (state, jnp.where(running, ts.reward, 0.0), running)
            return (new, core, ts.observation, running & ~ended), out

        carry = (state, policy.initial_state(1), ts.observation, jnp.ones((), bool))
        keys = jax.random.split(key_steps, max_steps)
        _, (states, rewards, running) = jax.lax.scan(step, carry, keys)
        return states, rewards, running

    states, rewards, running = jax.device_get(play(params, env_params, key))
    length = int(np.sum(running))
    inner = _inner_state(states)
    frames = [jax.tree.map(lambda x, t=t: x[t], inner) for t in range(length)]
    return Episode(frames, np.asarray(rewards[:length]), length)


def render(
    env: Env,
    episode: Episode,
    out: str | pathlib.Path,
    progress: Callable[[int], None] | None = None,
) -> pathlib.Path:
    """Draws `episode` to `out`: a GIF (gymnax) or an HTML viewer (brax).

    Args:
      env: the environment that played it.
      episode: from `record_episode`.
      out: the file, *.gif or *.html.
      progress: called with the number of GIF frames drawn so far, after each
        (`episode.length` in all).

    Raises:
      ConfigError: the file type does not suit the environment, or the
        environment has no renderer.

    """
    out = check_renderable(env, out)
    base = _base(env)
    if isinstance(base, GymnaxEnv):
        _gymnax_gif(base, episode, out, progress)
    else:
        from brax.io import html

        pipeline = [s.pipeline_state for s in episode.states]
        page = html.render(base.env.sys, pipeline)
        # Name the system in the page's title (brax's says "Brax visualizer").
        title = f"brax/{base.env_id}: {episode.length} steps, return "
        title += f"{episode.rewards.sum():.1f} (purejaxdrl)"
        out.write_text(page.replace("<title>Brax visualizer</title>",
                                    f"<title>{title}</title>", 1))  # fmt: skip
    return out


def check_renderable(env: Env, out: str | pathlib.Path) -> pathlib.Path:
    """`out` as a path, when an episode of `env` can be drawn there.

    Raises:
      ConfigError: the file type does not suit the environment, or the
        environment has no renderer.

    """
    out = pathlib.Path(out)
    base = _base(env)
    suffix = out.suffix.lower()
    if isinstance(base, GymnaxEnv):
        if suffix != ".gif":
            raise ConfigError(
                f"--render {out}: {base.env_id} renders to a GIF; name the file *.gif."
            )
    elif isinstance(base, BraxEnv):
        if suffix != ".html":
            raise ConfigError(
                f"--render {out}: brax/{base.env_id} renders to an HTML viewer; "
                "name the file *.html."
            )
    else:
        raise ConfigError(
            f"--render: no renderer for {type(base).__name__}; gymnax and brax "
            "environments render."
        )
    return out


class DevicePlayer:
    """The `Player` of a run on device environments (`play.py`).

    Args:
      env: the environment as wrapped for training (normalisation statistics
        are read from the state's `env_params`).
      network: the acting network.
      config: the run's EvalConfig (`training_evaluation`'s episodes).

    """

    def __init__(self, env: Env, network: Network, config: Any):
        self.env, self.network, self.config = env, network, config

    def training_evaluation(self, abstract: Any, key: PRNGKey) -> Lowered:
        """The run's evaluation program (`evaluation.device_evaluation`)."""
        return device_evaluation(self.env, self.network, self.config, abstract, key)

    def evaluate(
        self, state: Any, *, episodes: int, max_steps: int, seed: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """`episodes` environments, reset with `jax.random.key(seed)`."""
        evaluate = make_evaluate(
            self.env, self.network, episodes=episodes, max_steps=max_steps
        )
        key = jax.random.key(seed)
        return jax.device_get(evaluate(state.agent.params, state.env_params, key))

    def check_render(self, out: str | pathlib.Path) -> None:
        """See `check_renderable`."""
        check_renderable(self.env, out)

    def render(
        self, state: Any, out: str | pathlib.Path, *, max_steps: int, seed: int
    ) -> Drawn:
        """One episode played with `jax.random.key(seed)`, drawn to `out`."""
        episode = record_episode(
            self.env,
            self.network,
            state.agent.params,
            state.env_params,
            jax.random.key(seed),
            max_steps,
        )
        drawing = f"drawing {pathlib.Path(out).name}"
        with counting(drawing, episode.length, "frames") as update:
            path = render(self.env, episode, out, progress=update)
        return Drawn(path, episode.length, float(episode.rewards.sum()))


# gymnax draws these with gymnasium's pygame renderer.
_PYGAME = ("Acrobot-v1", "CartPole-v1", "Pendulum-v1", "MountainCar-v0",
           "MountainCarContinuous-v0")  # fmt: skip
# How long a frame shows (gymnax's Visualizer's intervals), milliseconds.
_PYGAME_FRAME_MS, _FIGURE_FRAME_MS = 50, 100
# The title band above a classic-control drawing, pixels.
_TITLE_HEIGHT = 28
# gymnax's figures (MinAtar, Catch, mazes): its 6 x 5 inches at 200 / 3 dots
# per inch, 400 x 333 pixels, not 600 x 500; the same layout, fewer pixels.
_FIGURE_DPI = 200 / 3


def _gymnax_gif(
    env: GymnaxEnv,
    episode: Episode,
    out: pathlib.Path,
    progress: Callable[[int], None] | None,
) -> None:
    if env.env_id in _PYGAME:
        # Headless: no window, no sound card.
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
        os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
        try:
            import pygame  # noqa: F401
        except ImportError:
            raise ConfigError(
                f"--render: gymnax draws {env.env_id} with pygame, which is not "
                "installed; pip install 'purejaxdrl[render]'."
            ) from None
        frames, frame_ms = _classic_control_frames(env, episode), _PYGAME_FRAME_MS
    else:
        frames, frame_ms = _figure_frames(env, episode), _FIGURE_FRAME_MS
    # Pillow takes the frames one by one as it compares each with the last, so
    # they are drawn as it goes; only the final encoding (~1 ms a frame) is left
    # when the count is done.
    frames = _counted(frames, progress)
    first = next(frames)
    first.save(out, save_all=True, append_images=frames, duration=frame_ms, loop=0)


def _counted(
    frames: Iterator[Any], progress: Callable[[int], None] | None
) -> Iterator[Any]:
    """`frames`, calling `progress(n)` once the n-th frame has been taken."""
    for done, frame in enumerate(frames, 1):
        yield frame
        if progress is not None:
            progress(done)


def _font(size: int) -> Any:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except ImportError:  # a Pillow without FreeType: its small bitmap font
        return ImageFont.load_default()


def _classic_control_frames(env: GymnaxEnv, episode: Episode) -> Iterator[Any]:
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
    returns = np.cumsum(episode.rewards)
    drawer = gymnasium.make(name, render_mode="rgb_array")
    try:
        drawer.reset(seed=0)
        inner = drawer.unwrapped
        vis_gym.set_gym_params(inner, name, env.default_params)
        for t, state in enumerate(episode.states):
            inner.state = vis_gym.get_gym_state(state, name)
            if name == "Pendulum-v1":  # its torque arrow
                inner.last_u = np.asarray(state.last_u, dtype=np.float64)
            drawing = np.asarray(drawer.render(), np.uint8)
            height, width = drawing.shape[:2]
            frame = Image.new("RGB", (width, height + _TITLE_HEIGHT), "white")
            frame.paste(Image.fromarray(drawing), (0, _TITLE_HEIGHT))
            title = f"{name}: step {t + 1}, return {returns[t]:.1f}"
            ImageDraw.Draw(frame).text((8, 5), title, fill="black", font=font)
            yield frame.convert(
                "P", palette=Image.Palette.WEB, dither=Image.Dither.NONE
            )
    finally:
        drawer.close()


def _figure_frames(env: GymnaxEnv, episode: Episode) -> Iterator[Any]:
    """The matplotlib drawing of each state by gymnax: one figure, redrawn.

    Yields:
      PIL images, RGB, 400 x 333 pixels.

    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from gymnax.visualize import Visualizer
    from PIL import Image

    rewards = np.cumsum(episode.rewards)
    vis = Visualizer(env.env, env.default_params, episode.states, rewards)
    try:
        vis.fig.set_dpi(_FIGURE_DPI)
        vis.init()
        for t in range(episode.length):
            vis.update(t)
            vis.fig.canvas.draw()
            rgba = np.asarray(vis.fig.canvas.buffer_rgba())
            yield Image.fromarray(rgba[..., :3].copy())
    finally:
        plt.close(vis.fig)
