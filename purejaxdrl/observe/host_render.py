"""Watching a policy on host environments: one episode drawn as a GIF.

Frames come from one of two places:

- pixel observations (uint8 frames, e.g. EnvPool Atari's stacks of four 84x84
  grey frames, [4, 84, 84], or [84, 84, 4]): the newest frame of each stack,
  upscaled 3x (nearest). That is what the agent sees, not the emulator's colour
  screen.
- `gymnasium:` ids with other observations (CartPole's four numbers cannot be
  drawn): the environment's own `rgb_array` drawing, from a second environment
  made with `render_mode="rgb_array"`, seeded as the first evaluation
  environment and played with the same deterministic policy.

EnvPool draws nothing else (classic control, MuJoCo): a one-line ConfigError.
GIFs are written with Pillow, the library matplotlib's PillowWriter writes
gymnax's GIFs with (`render.py`), so no new dependency. `HostPlayer` is the
`play.Player` of host runs: their evaluations and drawings.
"""

import os
import pathlib
import warnings
from typing import Any, NamedTuple

import jax
import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.env.host import HostSpec, make_host_env
from purejaxdrl.env.host.base import import_optional, rescale_actions
from purejaxdrl.env.host.envpool import env_seeds
from purejaxdrl.networks import Network, RecurrentNetwork
from purejaxdrl.observe.host_evaluation import (
    HostModePolicy,
    evaluate_host,
    host_evaluation,
    host_mode_policy,
    play_host,
)
from purejaxdrl.observe.play import Drawn
from purejaxdrl.runners.base import Ready
from purejaxdrl.types import Params

SCALE = 3
# Atari runs at 60 frames/s and EnvPool skips 4: a step is 67 ms of play. GIF
# delays are in hundredths of a second.
PIXEL_FRAME_MS = 70


class HostEpisode(NamedTuple):
    """One drawn episode.

    Attributes:
      frames: uint8 [H, W] (grey) or [H, W, 3] (RGB), one per step: what was
        on screen before it.
      length: its steps (the episode ended, or was cut, on the last).
      episode_return: the sum of its rewards.
      frame_ms: how long a frame shows in the GIF.

    """

    frames: list[np.ndarray]
    length: int
    episode_return: float
    frame_ms: int


def is_pixels(spec: HostSpec) -> bool:
    """Whether observations are images: uint8 [H, W] or a stack of frames."""
    return spec.observation_dtype == np.uint8 and len(spec.observation.shape) in (2, 3)


def newest_frame(obs: np.ndarray) -> np.ndarray:
    """The newest frame of a pixel observation, uint8 [H, W] or [H, W, 3].

    A stack's frames lie along its shorter end axis, oldest first (EnvPool's
    [4, 84, 84]; also [84, 84, 4]); [H, W, 3] is taken for one RGB image.
    """
    if obs.ndim == 2 or (obs.ndim == 3 and obs.shape[-1] == 3 < obs.shape[0]):
        return obs
    return obs[-1] if obs.shape[0] <= obs.shape[-1] else obs[..., -1]


def upscale(frame: np.ndarray, scale: int = SCALE) -> np.ndarray:
    """`frame` [H, W, ...] as [scale H, scale W, ...], each pixel a square."""
    return np.repeat(np.repeat(frame, scale, axis=0), scale, axis=1)


def check_renderable(
    env_id: str, spec: HostSpec, out: str | pathlib.Path
) -> pathlib.Path:
    """`out` as a path, when a host run on `env_id` can be drawn there.

    Raises:
      ConfigError: `out` is no GIF, or `env_id` draws no frames.

    """
    out = pathlib.Path(out)
    if out.suffix.lower() != ".gif":
        raise ConfigError(
            f"--render {out}: {env_id} renders to a GIF; name the file *.gif."
        )
    kind, _, name = env_id.partition(":")
    if kind == "envpool" and not is_pixels(spec):
        raise ConfigError(
            f"--render: EnvPool draws no frames of {name} (it has no renderer, and "
            f"observations of shape {spec.observation.shape} are no image); train on "
            f"--env.id gymnasium:{name} to render it, or leave out --render."
        )
    return out


def record_host_episode(
    env_id: str,
    options: dict[str, Any],
    network: Network | RecurrentNetwork,
    params: Params,
    *,
    seed: int,
    max_steps: int,
) -> HostEpisode:
    """Plays the deterministic policy for one episode (`max_steps` at most); draws it.

    Not jittable. Seeded as environment 0 of `evaluate_host(..., seed=seed)`.

    Raises:
      ConfigError: the environment draws no frames (see the module), or its
        renderer is not installed.

    """
    env = make_host_env(env_id, 1, seed, **options)
    policy = host_mode_policy(network)
    try:
        spec = env.spec
        if is_pixels(spec):
            played = play_host(env, policy, params, max_steps, record=True)
            frames = [upscale(newest_frame(o)) for o in played.observations]
            return HostEpisode(
                frames, int(played.lengths[0]), float(played.returns[0]), PIXEL_FRAME_MS
            )
    finally:
        env.close()
    check_renderable(env_id, spec, "episode.gif")
    return _gymnasium_episode(
        env_id.partition(":")[2], options, policy, params, seed, max_steps
    )


def _gymnasium_episode(
    name: str,
    options: dict[str, Any],
    policy: HostModePolicy,
    params: Params,
    seed: int,
    max_steps: int,
) -> HostEpisode:
    # Headless: no window, no sound card (pygame draws classic control).
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    gym = import_optional("gymnasium", "gymnasium")
    with warnings.catch_warnings():  # an unknown render mode only warns
        warnings.simplefilter("ignore")
        # One environment, not a vector: the vector's own option goes.
        kwargs = {k: v for k, v in options.items() if k != "vectorization_mode"}
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
    try:
        if "rgb_array" not in env.metadata.get("render_modes", ()):
            raise ConfigError(
                f"--render: gymnasium:{name} draws no frames (render modes "
                f"{env.metadata.get('render_modes', [])}; a GIF needs 'rgb_array', "
                "or pixel observations); evaluate without --render."
            )
        obs, _ = env.reset(seed=env_seeds(seed, 1)[0])
        frames, episode_return = [], 0.0
        state = policy.initial_state(1)
        for _ in range(max_steps):
            frames.append(_draw(env, name))
            state, action = policy.act(params, state, np.asarray(obs)[None])
            step = env.step(rescale_actions(env.action_space, action)[0])
            obs, reward, terminated, truncated, _ = step
            episode_return += float(reward)
            if terminated or truncated:
                break
    finally:
        env.close()
    fps = env.metadata.get("render_fps") or 30
    frame_ms = max(20, int(round(100 / fps)) * 10)
    return HostEpisode(frames, len(frames), episode_return, frame_ms)


def _draw(env: Any, name: str) -> np.ndarray:
    gym = import_optional("gymnasium", "gymnasium")
    try:
        return np.asarray(env.render(), np.uint8)
    except gym.error.DependencyNotInstalled as e:
        raise ConfigError(
            f"--render: gymnasium draws {name} with a package that is not "
            f"installed ({e}); pip install 'purejaxdrl[render]'."
        ) from None


def write_gif(episode: HostEpisode, out: str | pathlib.Path) -> pathlib.Path:
    """Writes `episode`'s frames to the GIF `out`, `frame_ms` each.

    Pillow merges a frame identical to the one before into it (their times
    add), so a GIF may hold fewer frames than steps; it plays as long.
    """
    from PIL import Image

    out = pathlib.Path(out)
    images = [Image.fromarray(frame) for frame in episode.frames]
    images[0].save(
        out,
        save_all=True,
        append_images=images[1:],
        duration=episode.frame_ms,
        loop=0,
    )
    return out


class HostPlayer:
    """The `Player` of a run on host environments (`play.py`).

    Each call makes its own environments (closed after), seeded as asked; the
    state's learner parameters are replicated, this process's copy plays.

    Args:
      config: the run's TrainConfig (its `env`, `eval` and `seed`).
      network: the acting network.
      spec: the environments' spaces.

    """

    def __init__(self, config: Any, network: Network | RecurrentNetwork, spec: Any):
        self.config, self.network, self.spec = config, network, spec

    def training_evaluation(self, abstract: Any, key: Any) -> Ready:
        """The run's evaluation program (`host_evaluation.host_evaluation`)."""
        return host_evaluation(self.config, self.network, abstract, key)

    def evaluate(
        self, state: Any, *, episodes: int, max_steps: int, seed: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """`episodes` fresh environments seeded with `seed`."""
        result = evaluate_host(
            self.config.env.id,
            dict(self.config.env.options),
            self.network,
            _local(state.agent.params),
            episodes=episodes,
            seed=seed,
            max_steps=max_steps,
        )
        return result.returns, result.lengths

    def check_render(self, out: str | pathlib.Path) -> None:
        """See `check_renderable`."""
        check_renderable(self.config.env.id, self.spec, out)

    def render(
        self, state: Any, out: str | pathlib.Path, *, max_steps: int, seed: int
    ) -> Drawn:
        """One episode seeded as the first of `evaluate(seed=seed)`'s, drawn."""
        episode = record_host_episode(
            self.config.env.id,
            dict(self.config.env.options),
            self.network,
            _local(state.agent.params),
            seed=seed,
            max_steps=max_steps,
        )
        return Drawn(write_gif(episode, out), episode.length, episode.episode_return)


def _local(params: Params) -> Params:
    # This process's copy of replicated parameters.
    return jax.tree.map(lambda x: x.addressable_data(0), params)
