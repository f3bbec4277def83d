"""Watching a policy: one episode recorded on device, drawn on the host.

`record_episode` plays the deterministic policy for one episode in one compiled
scan and returns the environment state before every step. `render` draws them:
a GIF for gymnax environments (gymnax's own matplotlib drawings: classic
control, MinAtar, ...), an HTML viewer for brax environments (brax's own).
"""

import os
import pathlib
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import Env, EnvParams, Wrapper
from purejaxdrl.env.brax_env import BraxEnv
from purejaxdrl.env.gymnax_env import GymnaxEnv
from purejaxdrl.networks import Network, RecurrentNetwork
from purejaxdrl.observe.evaluation import episode_ended, mode_policy
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


def render(env: Env, episode: Episode, out: str | pathlib.Path) -> pathlib.Path:
    """Draws `episode` to `out`: a GIF (gymnax) or an HTML viewer (brax).

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
        _gymnax_gif(base, episode, out)
    elif isinstance(base, BraxEnv):
        if suffix != ".html":
            raise ConfigError(
                f"--render {out}: brax/{base.env_id} renders to an HTML viewer; "
                "name the file *.html."
            )
        from brax.io import html

        pipeline = [s.pipeline_state for s in episode.states]
        page = html.render(base.env.sys, pipeline)
        # Name the system in the page's title (brax's says "Brax visualizer").
        title = f"brax/{base.env_id}: {episode.length} steps, return "
        title += f"{episode.rewards.sum():.1f} (purejaxdrl)"
        out.write_text(page.replace("<title>Brax visualizer</title>",
                                    f"<title>{title}</title>", 1))  # fmt: skip
    else:
        raise ConfigError(
            f"--render: no renderer for {type(base).__name__}; gymnax and brax "
            "environments render."
        )
    return out


# gymnax draws these with gymnasium's pygame renderer.
_PYGAME = ("Acrobot-v1", "CartPole-v1", "Pendulum-v1", "MountainCar-v0",
           "MountainCarContinuous-v0")  # fmt: skip


def _gymnax_gif(env: GymnaxEnv, episode: Episode, out: pathlib.Path) -> None:
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
    import matplotlib

    matplotlib.use("Agg")
    from gymnax.visualize import Visualizer

    rewards = np.cumsum(episode.rewards)
    vis = Visualizer(env.env, env.default_params, episode.states, rewards)
    vis.animate(str(out))
