"""Playing a run's deterministic policy: the `Player` interface and the mode policy.

Training's evaluations, `purejaxdrl eval` and `eval --render` play through a
`Player`, whatever the run trained on (`players.py`): device environments
(gymnax, brax) are played in compiled programs, host ones (EnvPool, Gymnasium)
in a loop on the host. The experiment picks one where it picks the runner.
Both act with `mode_policy`, the mode of the policy's distribution.

Not through `Agent.acting`: that is the behaviour policy (a sample, ε-greedy
for a Q-learner, with policy lag or Ape-X's per-environment ε_i), of acting
parameters taken from a whole agent state, and it has no deterministic form.
The mode is of the same acting network (`Algorithm.make_networks`' first) the
agent acts with: argmax Q for a Q-learner, the most likely action otherwise.
Exported policies sample as their record says (`Algorithm.exported_sampler`).
"""

import pathlib
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import jax

from purejaxdrl.networks import Network, RecurrentNetwork
from purejaxdrl.runners.base import Lowered
from purejaxdrl.types import Params, PRNGKey, PyTree

# A Player's defaults, and `purejaxdrl eval`'s: episodes scored, their seed,
# and the step cap of an episode drawn (`evaluate` caps at `eval.max_steps`).
EPISODES = 5
SEED = 0
RENDER_STEPS = 1000


class Drawn(NamedTuple):
    """An episode drawn to a file: where, its steps and its return."""

    path: pathlib.Path
    length: int
    episode_return: float


class EvalResult(NamedTuple):
    """Per evaluation environment, its first episode's totals, [E] each.

    Its return and length, the episode sums of the environment's own
    metrics (name -> [E]; {} where it reports none, `env.base.METRICS`), and
    whether it ended (bool [E]; False: cut at the step cap, its return
    partial; None where the player does not say).
    """

    returns: jax.Array
    lengths: jax.Array
    metrics: dict[str, jax.Array] = {}
    ended: jax.Array | None = None


class AgentParams(NamedTuple):
    """An agent's state as a Player reads it: its `params`, nothing else."""

    params: Params


class PlayState(NamedTuple):
    """What a Player's `evaluate` and `render` read of the `state` they play.

    A run's state has both fields (its agent's state, its environments'
    parameters); a PlayState holds only them, for a policy played without a
    run: an exported one (`training.policy.evaluate`), whose parameters are its
    own, so `agent.params` is (). Host players read `agent.params` only.
    """

    agent: AgentParams
    env_params: PyTree = ()


class Player(Protocol):
    """Plays the policy of a run's state in fresh environments.

    `evaluate` and `render` take a run's state or a `PlayState`: they read
    its `agent.params` (the parameters acted with) and, on device
    environments, its `env_params`.
    """

    def training_evaluation(self, abstract: Any, key: PRNGKey) -> Lowered:
        """The run's evaluation (`config.eval`) as a program to compile.

        Compiled: `(state, updates done) -> EvalResult` ([E] each), each
        chunk's episodes drawn from a stream of `key` (device) or the run's
        seed (host) of their own, never the training's.
        """
        ...

    def evaluate(
        self,
        state: Any,
        *,
        episodes: int = EPISODES,
        max_steps: int | None = None,
        seed: int = SEED,
    ) -> EvalResult:
        """The first episode's totals in each of `episodes` envs, host arrays.

        `max_steps` None: the run's `eval.max_steps`.
        """
        ...

    def check_render(self, out: str | pathlib.Path) -> None:
        """Raises ConfigError, before anything plays, if `out` cannot be drawn."""
        ...

    def render(
        self,
        state: Any,
        out: str | pathlib.Path,
        *,
        max_steps: int = RENDER_STEPS,
        seed: int = SEED,
        episodes: int = 1,
        console: bool = True,
    ) -> Drawn:
        """Draws to `out` (GIF, MP4 or HTML) the first episode `evaluate` scores.

        `evaluate(episodes=episodes, seed=seed)`'s first: `eval --render`
        draws an episode it just scored. `console`: show the frames drawn so
        far (on stderr, or in place in a Jupyter cell), as `pjd.train` shows
        its progress; False shows nothing.
        """
        ...


def mode_action(network: Network) -> Callable[[Params, jax.Array], jax.Array]:
    """`act(params, obs) -> env action`: the mode of the policy's distribution."""
    dist = network.distribution

    def act(params: Params, obs: jax.Array) -> jax.Array:
        return dist.to_env(dist.mode(network.apply(params, obs)[0]))

    return act


class ModePolicy(NamedTuple):
    """The deterministic policy of a network, with or without a recurrent core.

    `initial_state(E)` is the core state of E environments (() without a
    core); `act(params, state, obs [E, ...], reset bool [E]) -> (state, env
    action [E, ...])`, where `reset` marks observations that start an episode.
    """

    initial_state: Callable[[int], PyTree]
    act: Callable[..., tuple[PyTree, jax.Array]]


def mode_policy(network: Network | RecurrentNetwork | ModePolicy) -> ModePolicy:
    """The mode of `network`'s policy, carrying the core state of recurrent ones.

    A ModePolicy is its own (an exported policy's, which holds its parameters).
    """
    if isinstance(network, ModePolicy):
        return network
    dist = network.distribution
    if isinstance(network, RecurrentNetwork):

        def act_core(
            params: Params, state: PyTree, obs: jax.Array, reset: jax.Array
        ) -> tuple[PyTree, jax.Array]:
            state, (policy, _) = network.step(params, state, obs, reset)
            return state, dist.to_env(dist.mode(policy))

        return ModePolicy(network.initial_state, act_core)
    act = mode_action(network)

    def act_stateless(
        params: Params, state: PyTree, obs: jax.Array, reset: jax.Array
    ) -> tuple[PyTree, jax.Array]:
        del reset
        return state, act(params, obs)

    return ModePolicy(lambda batch: (), act_stateless)
