"""Evaluation episodes: the deterministic policy on separate environments.

One compiled call plays one episode in each of E fresh environments with the
mode of the policy's distribution, entirely on device (`lax.while_loop` until
every environment has finished its first episode, or a step cap), and returns
their returns and lengths. It never touches the training environments, keys or
observation statistics, so turning evaluation on does not change training.
"""

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from purejaxdrl._platform import compiler_options
from purejaxdrl.env.base import Env, EnvParams
from purejaxdrl.networks import Network, RecurrentNetwork
from purejaxdrl.runners.base import Lowered
from purejaxdrl.types import Params, PRNGKey, PyTree, TimeStep


@dataclasses.dataclass(frozen=True, kw_only=True)
class EvalConfig:
    """When and how a training run evaluates its policy.

    Attributes:
      episodes: evaluation episodes (one per evaluation environment) each time;
        0 turns evaluation off.
      every: evaluate after every N chunks (and always at the end); 0 only at
        the end.
      max_steps: steps after which an episode that has not ended is cut short
        (counted with the return it has so far).
      stop_at: end the run early once an evaluation's mean return reaches this
        (the chunk queued behind it still completes); None trains to the end.

    """

    episodes: int = 0
    every: int = 0
    max_steps: int = 100_000
    stop_at: float | None = None


class EvalResult(NamedTuple):
    """Per evaluation environment: the first episode's return and length, [E]."""

    returns: jax.Array
    lengths: jax.Array


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


def mode_policy(network: Network | RecurrentNetwork) -> ModePolicy:
    """The mode of `network`'s policy, carrying the core state of recurrent ones."""
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


def episode_ended(ts: TimeStep) -> jax.Array:
    """Whether the step that produced `ts` ended an episode (either way)."""
    return (ts.discount == 0.0) | ts.truncated


def make_evaluate(
    env: Env, network: Network, *, episodes: int, max_steps: int = 100_000
) -> Callable[[Params, EnvParams, PRNGKey], EvalResult]:
    """Builds `evaluate(params, env_params, key) -> EvalResult`, jitted.

    Args:
      env: the training environment as wrapped for training (observation
        normalisation, if any, reads its statistics from `env_params`).
      network: the actor-critic network; actions are `to_env(mode(policy))`,
        and a recurrent core's state is carried through each episode.
      episodes: E, environments played once each.
      max_steps: cap on the steps of the loop.

    Returns:
      The jitted function: float32 [E] returns, int32 [E] lengths.

    Raises:
      ValueError: for episodes < 1 or max_steps < 1.

    """
    if episodes < 1 or max_steps < 1:
        raise ValueError(
            f"eval.episodes={episodes} and eval.max_steps={max_steps} must be >= 1."
        )
    policy = mode_policy(network)

    def evaluate(params: Params, env_params: EnvParams, key: PRNGKey) -> EvalResult:
        key_reset, key_steps = jax.random.split(key)
        keys = jax.random.split(key_reset, episodes)
        env_state, ts = jax.vmap(env.reset, in_axes=(0, None))(keys, env_params)
        zeros = jnp.zeros(episodes, jnp.float32)
        running = jnp.ones(episodes, bool)
        core = policy.initial_state(episodes)
        carry = (env_state, core, ts.observation, zeros, jnp.zeros(episodes, jnp.int32),
                 running, jnp.zeros((), jnp.int32))  # fmt: skip

        def go_on(carry: tuple) -> jax.Array:
            *_, running, t = carry
            return jnp.any(running) & (t < max_steps)

        def step(carry: tuple) -> tuple:
            env_state, core, obs, ret, length, running, t = carry
            # The core state is carried through the first episode; nothing
            # after it counts, so no reset is ever needed.
            core, action = policy.act(params, core, obs, jnp.zeros(episodes, bool))
            keys = jax.random.split(jax.random.fold_in(key_steps, t), episodes)
            env_state, ts = env.step_batch(keys, env_state, action, env_params)
            # Only the first episode counts: after it ends, the (auto-reset)
            # environment runs on but adds nothing.
            ret = ret + jnp.where(running, ts.reward, 0.0)
            length = length + running.astype(jnp.int32)
            ended = episode_ended(ts)
            running = running & ~ended
            return env_state, core, ts.observation, ret, length, running, t + 1

        _, _, _, ret, length, _, _ = jax.lax.while_loop(go_on, step, carry)
        return EvalResult(ret, length)

    return jax.jit(evaluate, compiler_options=compiler_options(jax.default_backend()))


class _ChunkEvaluation:
    """A run's evaluation, lowered; compiled, it takes (state, chunk index)."""

    def __init__(self, lowered: Lowered, key: PRNGKey):
        self.lowered, self.key = lowered, key

    def compile(self) -> Callable[[Any, int], EvalResult]:
        compiled, key = self.lowered.compile(), self.key

        def evaluate(state: Any, index: int) -> EvalResult:
            # A key of its own per chunk: training is the same with or without it.
            key_index = jax.random.fold_in(key, index)
            return compiled(state.agent.params, state.env_params, key_index)

        return evaluate


def device_evaluation(
    env: Env, network: Network, config: Any, abstract: Any, key: PRNGKey
) -> Lowered:
    """A device run's evaluation program, lowered against its `abstract` state.

    Compiled, it is `evaluate(state, chunk_index) -> EvalResult`: `config`'s
    (`EvalConfig`) episodes, each call with `fold_in(key, chunk_index)`.
    """
    evaluate = make_evaluate(
        env, network, episodes=config.episodes, max_steps=config.max_steps
    )
    lowered = evaluate.lower(abstract.agent.params, abstract.env_params, key)
    return _ChunkEvaluation(lowered, key)
