"""Watching a policy: one episode played and drawn to a file.

- Device environments: `record_episode` plays the deterministic policy for
  one episode in one compiled scan and keeps the environment state before
  every step; `render` draws them, a GIF for the gymnax environments gymnax
  draws (its own drawings, `gif.py`; the others, such as the bsuite chains or
  a gymnax class of a user's own, are refused), an HTML viewer for brax
  environments (brax's own), a GIF or MP4 for MuJoCo Playground ones
  (MuJoCo's renderer, off screen: `mujoco_render.py`).
- Host environments: `record_host_episode` plays one on the host and keeps
  its frames. Pixel observations (uint8 frames, e.g. EnvPool Atari's stacks of
  four 84x84 grey frames) give their newest frame of each stack, upscaled 3x:
  what the agent sees, not the emulator's colour screen. `gymnasium:` ids with
  other observations (CartPole's four numbers cannot be drawn) give the
  environment's own `rgb_array` drawing, from a second environment made with
  `render_mode="rgb_array"`, seeded as the first evaluation environment and
  played with the same policy. EnvPool draws nothing else (classic control,
  MuJoCo): a one-line ConfigError.
"""

import pathlib
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import Env, EnvParams, Wrapper
from purejaxdrl.env.brax_env import BraxEnv
from purejaxdrl.env.gymnax_env import GymnaxEnv
from purejaxdrl.env.host import HostSpec, synchronous
from purejaxdrl.env.host.base import rescale_actions
from purejaxdrl.env.host.envpool import env_seeds
from purejaxdrl.env.host.gymnasium import MASK_KEY, flattened, with_mask
from purejaxdrl.env.playground_env import PlaygroundEnv
from purejaxdrl.networks import Network, RecurrentNetwork
from purejaxdrl.observe.evaluation import HostModePolicy, host_mode_policy, play_host
from purejaxdrl.observe.gif import (
    PIXEL_FRAME_MS,
    check_drawable,
    draw_frame,
    gymnasium_drawer,
    gymnax_frames,
    newest_frame,
    upscale,
    write_gif,
)
from purejaxdrl.observe.mujoco_render import (
    check_gl,
    check_video,
    frame_ms,
    playground_frames,
    write_video,
)
from purejaxdrl.observe.numbers import return_text
from purejaxdrl.observe.play import mode_policy
from purejaxdrl.runners.placement import make_host_pool
from purejaxdrl.types import Params, PRNGKey

# Steps `record_episode` plays in one compiled block: its states are kept on
# the device until the block ends, so memory is bounded by the block, not by
# the step cap (eval --max-steps may be 2**31-1).
RECORD_BLOCK = 1000


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
    episodes: int = 1,
) -> Episode:
    """Plays the deterministic policy for one episode (at most `max_steps`).

    The episode is the first of `episodes` that `evaluation.make_evaluate`
    plays with `key`: its reset and step keys are derived as there, so
    `purejaxdrl eval --render` draws an episode it scored.
    Not jittable (returns host data). The episode plays in compiled blocks of
    `RECORD_BLOCK` steps (fewer if `max_steps` is), and stops after the block
    it ends in: a large `max_steps` costs nothing once the episode is over,
    and only the episode's states are kept.

    Args:
      env: the (unbatched) device environment.
      network: the acting network (`Experiment.network`), recurrent or not.
      params: its parameters (a run state's `agent.params`).
      env_params: the environment's parameters.
      key: the evaluation's key (`jax.random.key(seed)` for `--seed`).
      max_steps: steps after which the episode is cut, default 1000.
      episodes: how many episodes `evaluate` plays with `key`; the first is
        drawn (default 1).

    Returns:
      The Episode: its states, rewards and length.

    """
    policy = mode_policy(network)
    block = min(max_steps, RECORD_BLOCK)

    @jax.jit
    def start(env_params: EnvParams, key: PRNGKey) -> tuple:
        key_reset, key_steps = jax.random.split(key)
        state, ts = env.reset(jax.random.split(key_reset, episodes)[0], env_params)
        running = jnp.ones((), bool)
        return (state, policy.initial_state(1), ts.observation, running), key_steps

    @jax.jit
    def play(
        params: Params,
        env_params: EnvParams,
        key_steps: PRNGKey,
        carry: tuple,
        t0: jax.Array,
        left: jax.Array,
    ) -> tuple:
        def step(carry: tuple, i: jax.Array) -> tuple:
            # The step's key as evaluate derives it, from the step's number.
            keys = jax.random.split(jax.random.fold_in(key_steps, t0 + i), episodes)
            state, core, obs, running = carry
            running = running & (i < left)  # the cap falls inside this block
            # A batch of one for the policy (of each entry of a dict
            # observation); its core state goes on through the episode
            # (nothing after the episode is kept).
            batch = jax.tree.map(lambda x: x[None], obs)
            core, action = policy.act(params, core, batch, jnp.zeros(1, bool))
            new, ts = env.step(keys[0], state, action[0], env_params)
            out = (state, jnp.where(running, ts.reward, 0.0), running)
            return (new, core, ts.observation, running & ~ts.last()), out

        return jax.lax.scan(step, carry, jnp.arange(block))

    carry, key_steps = start(env_params, key)
    kept = []
    for t0 in range(0, max_steps, block):
        left = np.int32(min(block, max_steps - t0))
        carry, out = play(params, env_params, key_steps, carry, np.int32(t0), left)
        states, rewards, running = jax.device_get(out)
        length = int(np.sum(running))
        inner = _inner_state(states)
        kept.append(jax.tree.map(lambda x, n=length: x[:n], (inner, rewards)))
        if not jax.device_get(carry[-1]):  # ended (or cut) in this block
            break
    inner, rewards = jax.tree.map(lambda *xs: np.concatenate(xs), *kept)
    length = len(rewards)
    frames = [jax.tree.map(lambda x, t=t: x[t], inner) for t in range(length)]
    return Episode(frames, np.asarray(rewards), length)


def render(
    env: Env,
    episode: Episode,
    out: str | pathlib.Path,
    progress: Callable[[int], None] | None = None,
) -> pathlib.Path:
    """Draws `episode` to `out`: GIF (gymnax), HTML (brax), GIF or MP4 (Playground).

    Args:
      env: the environment that played it.
      episode: from `record_episode`.
      out: the file, *.gif, *.html or *.mp4.
      progress: called with the number of frames drawn so far, after each
        (`episode.length` in all; an HTML page's, once it is written).

    Raises:
      ConfigError: the file type does not suit the environment, or the
        environment has no renderer.

    """
    out = check_renderable(env, out)
    base = _base(env)
    if isinstance(base, GymnaxEnv):
        frames, ms = gymnax_frames(base, episode.states, episode.rewards)
        write_gif(frames, out, ms, progress)
    elif isinstance(base, PlaygroundEnv):
        frames, ms = playground_frames(base.env, episode.states), frame_ms(base.env)
        write = write_video if out.suffix.lower() == ".mp4" else write_gif
        write(frames, out, ms, progress)
    else:
        from brax.io import html

        pipeline = [s.pipeline_state for s in episode.states]
        page = html.render(base.env.sys, pipeline)
        # Name the system in the page's title (brax's says "Brax visualizer").
        title = f"brax/{base.env_id}: {episode.length} steps, return "
        title += f"{return_text(float(episode.rewards.sum()))} (purejaxdrl)"
        out.write_text(page.replace("<title>Brax visualizer</title>",
                                    f"<title>{title}</title>", 1))  # fmt: skip
        if progress is not None:  # one page: all drawn at once (nb21 #4)
            progress(episode.length)
    return out


def check_renderable(env: Env, out: str | pathlib.Path) -> pathlib.Path:
    """`out` as a path, when an episode of `env` can be drawn there.

    Raises:
      ConfigError: the file type does not suit the environment, the
        environment has no renderer (a gymnax one gymnax has no drawing
        of too), or its renderer is not installed.

    """
    out = pathlib.Path(out)
    base = _base(env)
    suffix = out.suffix.lower()
    if isinstance(base, GymnaxEnv):
        if suffix != ".gif":
            raise ConfigError(
                f"--render {out}: {base.env_id} renders to a GIF; name the file *.gif."
            )
        check_drawable(base)
    elif isinstance(base, BraxEnv):
        if suffix != ".html":
            raise ConfigError(
                f"--render {out}: brax/{base.env_id} renders to an HTML viewer; "
                "name the file *.html."
            )
    elif isinstance(base, PlaygroundEnv):
        if suffix not in (".gif", ".mp4"):
            raise ConfigError(
                f"--render {out}: {base.env_id} renders to a GIF or an MP4; name "
                "the file *.gif or *.mp4."
            )
        check_video(out)
        check_gl()
    else:
        raise ConfigError(
            f"--render: no renderer for {type(base).__name__} (a JAX Env of "
            "your own has none); gymnax, brax, MuJoCo Playground and host "
            "(envpool:, gymnasium:) environments render; evaluate this run "
            "without --render."
        )
    return out


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


def check_host_renderable(
    env_id: str,
    spec: HostSpec,
    out: str | pathlib.Path,
    options: dict[str, Any] | None = None,
) -> pathlib.Path:
    """`out` as a path, when a host run on `env_id` can be drawn there.

    With `options` (the run's environment options), a Gymnasium environment
    without pixel observations is made once with `render_mode="rgb_array"`, so
    that one that cannot draw is refused before anything is evaluated.

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
    if kind == "gymnasium" and options is not None and not is_pixels(spec):
        gymnasium_drawer(name, options).close()
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
    env = make_host_pool(env_id, 1, seed, **synchronous(options))
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
    check_host_renderable(env_id, spec, "episode.gif")
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
    env, flat = flattened(gymnasium_drawer(name, options), f"gymnasium:{name}")

    def observe(obs: Any, info: dict[str, Any]) -> np.ndarray:
        # What the policy saw in training: flat float32 where the space is
        # not a Box, the legal-action flags appended.
        obs = np.asarray(obs, np.float32) if flat else np.asarray(obs)
        return with_mask(obs, info) if masks else obs

    try:
        obs, info = env.reset(seed=env_seeds(seed, 1)[0])
        masks = MASK_KEY in info
        obs = observe(obs, info)
        frames, episode_return = [], 0.0
        state = policy.initial_state(1)
        for _ in range(max_steps):
            frames.append(draw_frame(env, name))
            state, action = policy.act(params, state, np.asarray(obs)[None])
            step = env.step(rescale_actions(env.action_space, action)[0])
            obs, reward, terminated, truncated, info = step
            obs = observe(obs, info)
            episode_return += float(reward)
            if terminated or truncated:
                break
    finally:
        env.close()
    fps = env.metadata.get("render_fps") or 30
    frame_ms = max(20, int(round(100 / fps)) * 10)
    return HostEpisode(frames, len(frames), episode_return, frame_ms)
