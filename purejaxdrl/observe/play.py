"""The `Player` interface: a run's deterministic policy played in fresh environments.

Training's evaluations, `purejaxdrl eval` and `eval --render` play through it,
whatever the run trained on: `render.DevicePlayer` plays device environments
(gymnax, brax) in compiled programs, `host_render.HostPlayer` plays host ones
(EnvPool, Gymnasium) on the host. The experiment picks one where it picks the
runner.
"""

import pathlib
from typing import Any, NamedTuple, Protocol

import numpy as np

from purejaxdrl.runners.base import Lowered
from purejaxdrl.types import PRNGKey


class Drawn(NamedTuple):
    """An episode drawn to a file: where, its steps and its return."""

    path: pathlib.Path
    length: int
    episode_return: float


class Player(Protocol):
    """Plays the policy of a run's state (its `.agent.params`) in fresh environments."""

    def training_evaluation(self, abstract: Any, key: PRNGKey) -> Lowered:
        """The run's evaluation (`config.eval`) as a program to compile.

        Compiled: `(state, chunk index) -> (returns [E], lengths [E])`, each
        chunk's episodes drawn from a stream of `key` (device) or the run's
        seed (host) of their own, never the training's.
        """
        ...

    def evaluate(
        self, state: Any, *, episodes: int, max_steps: int, seed: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The first episode's return and length in each of `episodes` envs."""
        ...

    def check_render(self, out: str | pathlib.Path) -> None:
        """Raises ConfigError, before anything plays, if `out` cannot be drawn."""
        ...

    def render(
        self, state: Any, out: str | pathlib.Path, *, max_steps: int, seed: int
    ) -> Drawn:
        """Plays one episode and draws it to `out` (GIF or HTML)."""
        ...
