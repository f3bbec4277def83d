"""The two `play.Player`s: a run's episodes played on device or on the host.

`DevicePlayer` plays device environments (gymnax, brax) in compiled programs;
`HostPlayer` plays host ones (EnvPool, Gymnasium) in fresh pools, closed
after, with this process's copy of the learner's replicated parameters. The
experiment picks one where it picks the runner.
"""

import pathlib
from typing import Any

import jax

from purejaxdrl.env.base import Env
from purejaxdrl.networks import Network, RecurrentNetwork
from purejaxdrl.observe.evaluation import (
    device_evaluation,
    evaluate_host,
    host_evaluation,
    make_evaluate,
)
from purejaxdrl.observe.gif import write_gif
from purejaxdrl.observe.play import EPISODES, RENDER_STEPS, SEED, Drawn, EvalResult
from purejaxdrl.observe.play_args import check_play_args
from purejaxdrl.observe.progress import counting
from purejaxdrl.observe.render import (
    check_host_renderable,
    check_renderable,
    record_episode,
    record_host_episode,
    render,
)
from purejaxdrl.runners.base import Lowered, Ready
from purejaxdrl.types import PRNGKey


class DevicePlayer:
    """The `Player` of a run on device environments.

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
        self,
        state: Any,
        *,
        episodes: int = EPISODES,
        max_steps: int | None = None,
        seed: int = SEED,
    ) -> EvalResult:
        """`episodes` environments, reset with `jax.random.key(seed)`.

        `max_steps` None: the run's `eval.max_steps`, as `purejaxdrl eval`.

        Raises:
          ConfigError: a value `play_args.check_play_args` refuses.

        """
        check_play_args(episodes, max_steps, seed, flags=False)
        if max_steps is None:
            max_steps = self.config.max_steps
        evaluate = make_evaluate(
            self.env, self.network, episodes=episodes, max_steps=max_steps
        )
        key = jax.random.key(seed)
        return jax.device_get(evaluate(state.agent.params, state.env_params, key))

    def check_render(self, out: str | pathlib.Path) -> None:
        """See `render.check_renderable`."""
        check_renderable(self.env, out)

    def render(
        self,
        state: Any,
        out: str | pathlib.Path,
        *,
        max_steps: int | None = RENDER_STEPS,
        seed: int = SEED,
        episodes: int = 1,
        console: bool = True,
    ) -> Drawn:
        """The first episode of `evaluate(episodes=episodes, seed=seed)`, drawn.

        With `console`, a count of the frames drawn (`progress.counting`: on
        stderr, or one display in a Jupyter cell); without it, nothing.
        `max_steps` None: `RENDER_STEPS`.

        Raises:
          ConfigError: a value `play_args.check_play_args` refuses.

        """
        check_play_args(episodes, max_steps, seed, flags=False)
        max_steps = RENDER_STEPS if max_steps is None else max_steps
        params, env_params = state.agent.params, state.env_params
        key = jax.random.key(seed)
        episode = record_episode(
            self.env, self.network, params, env_params, key, max_steps, episodes
        )
        if not console:
            path = render(self.env, episode, out)
            return Drawn(path, episode.length, float(episode.rewards.sum()))
        drawing = f"drawing {pathlib.Path(out).name}"
        with counting(drawing, episode.length, "frames") as update:
            path = render(self.env, episode, out, progress=update)
        return Drawn(path, episode.length, float(episode.rewards.sum()))


class HostPlayer:
    """The `Player` of a run on host environments.

    Args:
      config: the run's TrainConfig (its `env`, `eval` and `seed`).
      network: the acting network.
      spec: the environments' spaces.

    """

    def __init__(self, config: Any, network: Network | RecurrentNetwork, spec: Any):
        self.config, self.network, self.spec = config, network, spec

    def training_evaluation(self, abstract: Any, key: Any) -> Ready:
        """The run's evaluation program (`evaluation.host_evaluation`)."""
        return host_evaluation(self.config, self.network, abstract, key)

    def evaluate(
        self,
        state: Any,
        *,
        episodes: int = EPISODES,
        max_steps: int | None = None,
        seed: int = SEED,
    ) -> EvalResult:
        """`episodes` fresh environments seeded with `seed`.

        `max_steps` None: the run's `eval.max_steps`, as `purejaxdrl eval`.

        Raises:
          ConfigError: a value `play_args.check_play_args` refuses.

        """
        check_play_args(episodes, max_steps, seed, flags=False)
        if max_steps is None:
            max_steps = self.config.eval.max_steps
        args = self._play_args(state)
        result = evaluate_host(*args, episodes=episodes, seed=seed, max_steps=max_steps)
        return EvalResult(result.returns, result.lengths, result.metrics, result.ended)

    def check_render(self, out: str | pathlib.Path) -> None:
        """See `render.check_host_renderable`."""
        options = dict(self.config.env.options)
        check_host_renderable(self.config.env.id, self.spec, out, options)

    def render(
        self,
        state: Any,
        out: str | pathlib.Path,
        *,
        max_steps: int | None = RENDER_STEPS,
        seed: int = SEED,
        episodes: int = 1,
        console: bool = True,
    ) -> Drawn:
        """One episode seeded as the first of `evaluate(seed=seed)`'s, drawn.

        (Host environments are seeded one by one: `episodes` changes nothing.
        Nothing counts their frames as they are drawn, so neither does
        `console`.) `max_steps` None: `RENDER_STEPS`.

        Raises:
          ConfigError: a value `play_args.check_play_args` refuses.

        """
        check_play_args(episodes, max_steps, seed, flags=False)
        max_steps = RENDER_STEPS if max_steps is None else max_steps
        del episodes, console
        args = self._play_args(state)
        episode = record_host_episode(*args, seed=seed, max_steps=max_steps)
        path = write_gif(episode.frames, out, episode.frame_ms)
        return Drawn(path, episode.length, episode.episode_return)

    def _play_args(self, state: Any) -> tuple:
        # The environment, the network and this process's copy of the
        # replicated parameters.
        local = jax.tree.map(lambda x: x.addressable_data(0), state.agent.params)
        return self.config.env.id, dict(self.config.env.options), self.network, local
