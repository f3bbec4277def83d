"""Evaluation episodes: the deterministic policy on environments of its own.

Each environment of E fresh ones plays its first episode with the mode of the
policy's distribution (`play.mode_policy`) until it ends or a step cap, and
the episodes' returns and lengths come back. Evaluation never touches the
training environments, keys, parameters or observation statistics, so turning
it on does not change training.

- Device environments (gymnax, brax): one compiled `lax.while_loop`
  (`make_evaluate`, `device_evaluation`).
- Host environments (`envpool:`, `gymnasium:`): a fresh pool, seeded apart
  from the training pools, stepped in a Python loop with the policy jitted once
  (`play_host`, `make_host_evaluate`, `host_evaluation`). Host environments
  reset on the step after an episode ends (`env/host/base.py`): an environment
  stops counting at the step that ends its first episode, so that reset step
  (reward 0, action ignored, `first`) never reaches a return or a length.
"""

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl._platform import compiler_options
from purejaxdrl.env.base import METRICS, Env, EnvParams
from purejaxdrl.env.host import HostEnv, synchronous
from purejaxdrl.networks import Network, RecurrentNetwork
from purejaxdrl.observe.play import EvalResult, mode_policy
from purejaxdrl.runners.base import Lowered, Ready
from purejaxdrl.runners.placement import make_host_pool
from purejaxdrl.types import Params, PRNGKey

# Tags the host evaluation pools' seeds, a stream apart from the training pools'.
_EVAL_STREAM = 0x65766131


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
      The jitted function: float32 [E] returns, int32 [E] lengths, bool [E]
      whether each episode ended (not cut at `max_steps`).

    Raises:
      ValueError: for episodes < 1 or max_steps < 1.

    """
    _check_counts(episodes, max_steps)
    policy = mode_policy(network)

    def evaluate(params: Params, env_params: EnvParams, key: PRNGKey) -> EvalResult:
        key_reset, key_steps = jax.random.split(key)
        keys = jax.random.split(key_reset, episodes)
        env_state, ts = jax.vmap(env.reset, in_axes=(0, None))(keys, env_params)
        zeros = jnp.zeros(episodes, jnp.float32)
        running = jnp.ones(episodes, bool)
        core = policy.initial_state(episodes)
        sums = {k: zeros for k in ts.info.get(METRICS, {})}
        carry = (env_state, core, ts.observation, zeros, jnp.zeros(episodes, jnp.int32),
                 sums, running, jnp.zeros((), jnp.int32))  # fmt: skip

        def go_on(carry: tuple) -> jax.Array:
            *_, running, t = carry
            return jnp.any(running) & (t < max_steps)

        def step(carry: tuple) -> tuple:
            env_state, core, obs, ret, length, sums, running, t = carry
            # The core state is carried through the first episode; nothing
            # after it counts, so no reset is ever needed.
            core, action = policy.act(params, core, obs, jnp.zeros(episodes, bool))
            keys = jax.random.split(jax.random.fold_in(key_steps, t), episodes)
            env_state, ts = env.step_batch(keys, env_state, action, env_params)
            # Only the first episode counts: after it ends, the (auto-reset)
            # environment runs on but adds nothing.
            ret = ret + jnp.where(running, ts.reward, 0.0)
            length = length + running.astype(jnp.int32)
            sums = {
                k: v + jnp.where(running, ts.info[METRICS][k], 0.0)
                for k, v in sums.items()
            }
            running = running & ~ts.last()
            obs = ts.observation
            return env_state, core, obs, ret, length, sums, running, t + 1

        _, _, _, ret, length, sums, running, _ = jax.lax.while_loop(go_on, step, carry)
        # An episode that ends on the capped step itself ended: only one still
        # running was cut (CartPole-v1 truncates itself at 500 steps).
        return EvalResult(ret, length, sums, ~running)

    return jax.jit(evaluate, compiler_options=compiler_options(jax.default_backend()))


def _check_counts(episodes: int, max_steps: int) -> None:
    if episodes < 1 or max_steps < 1:
        raise ValueError(
            f"eval.episodes={episodes} and eval.max_steps={max_steps} must be >= 1."
        )


class _ChunkEvaluation:
    """A run's evaluation, lowered; compiled, it takes (state, updates done)."""

    def __init__(self, lowered: Lowered, key: PRNGKey):
        self.lowered, self.key = lowered, key

    def compile(self) -> Callable[[Any, int], EvalResult]:
        compiled, key = self.lowered.compile(), self.key
        # Compiled too: on CPU the eager fold_in waited for the chunk queued
        # before it, so the host stalled and its wait looked like training.
        fold_in = jax.jit(jax.random.fold_in).lower(key, np.uint32(0)).compile()

        def evaluate(state: Any, updates: int) -> EvalResult:
            # A key of its own per chunk: training is the same with or without it.
            key_index = fold_in(key, np.uint32(updates))
            return compiled(state.agent.params, state.env_params, key_index)

        return evaluate


def device_evaluation(
    env: Env, network: Network, config: Any, abstract: Any, key: PRNGKey
) -> Lowered:
    """A device run's evaluation program, lowered against its `abstract` state.

    Compiled, it is `evaluate(state, updates) -> EvalResult`: `config`'s
    (`EvalConfig`) episodes, each call with `fold_in(key, updates)` (the
    updates done when it is called).
    """
    evaluate = make_evaluate(
        env, network, episodes=config.episodes, max_steps=config.max_steps
    )
    lowered = evaluate.lower(abstract.agent.params, abstract.env_params, key)
    return _ChunkEvaluation(lowered, key)


class HostEvalResult(NamedTuple):
    """Per evaluation environment, its first episode (numpy).

    Attributes:
      returns: float32 [E], the sum of its rewards (so far, when cut short).
      lengths: int32 [E], its steps (at most the step cap).
      observations: with `record`, environment 0's observations before each
        step of its first episode ([lengths[0]] arrays, in the environment's
        dtype); else None.
      metrics: the episode sums of the environment's own metrics (a
        Gymnasium environment's `info["metrics"]`), float32 [E] by name.
      ended: bool [E], whether it ended (False: cut at the step cap).

    """

    returns: np.ndarray
    lengths: np.ndarray
    observations: list[np.ndarray] | None
    metrics: dict[str, np.ndarray] = {}
    ended: np.ndarray | None = None


class HostModePolicy(NamedTuple):
    """The deterministic policy for host environments (not jittable itself).

    `initial_state(E)`: the core state of E episodes about to start (() for a
    policy without a recurrent core); `act(params, state, obs [E, ...]) ->
    (state, env actions [E, ...] numpy)` steps them, carrying the state.
    """

    initial_state: Callable[[int], Any]
    act: Callable[[Params, Any, np.ndarray], tuple[Any, np.ndarray]]


def host_mode_policy(network: Network | RecurrentNetwork) -> HostModePolicy:
    """The mode of `network`'s policy for host observations, jitted once.

    Observations arrive in their host dtype (uint8 frames stay uint8 on the
    host) and become float32 on the device, as the actors' policy does
    (`runners/actor.py`). A recurrent core's state is carried from step to
    step: the callers play each environment's first episode only, so it is
    never reset.
    """
    mode = mode_policy(network)

    def policy(params: Params, state: Any, obs: jax.Array) -> tuple[Any, jax.Array]:
        no_reset = jnp.zeros(obs.shape[:1], bool)
        return mode.act(params, state, obs.astype(jnp.float32), no_reset)

    jitted = jax.jit(policy, compiler_options=compiler_options(jax.default_backend()))

    def act(params: Params, state: Any, obs: np.ndarray) -> tuple[Any, np.ndarray]:
        state, action = jitted(params, state, obs)
        return state, np.asarray(action)

    return HostModePolicy(mode.initial_state, act)


def play_host(
    env: HostEnv,
    policy: HostModePolicy,
    params: Params,
    max_steps: int,
    record: bool = False,
) -> HostEvalResult:
    """Plays every environment of `env` (reset here) until its first episode ends.

    Not jittable: steps host environments in a Python loop.

    Args:
      env: a synchronous pool (batch_size == num_envs) of E environments.
      policy: `host_mode_policy(network)`.
      params: the network's parameters.
      max_steps: steps after which the loop stops, episodes ended or not.
      record: keep environment 0's observations (see `HostEvalResult`).

    Returns:
      The first episodes' returns, lengths and whether they ended, [E].

    """
    n = env.num_envs
    ts = env.reset()
    obs = np.empty((n, *ts.observation.shape[1:]), ts.observation.dtype)
    obs[ts.env_id] = ts.observation
    returns, lengths = np.zeros(n, np.float32), np.zeros(n, np.int32)
    sums = {name: np.zeros(n, np.float32) for name in env.spec.metrics}
    running = np.ones(n, bool)
    state = policy.initial_state(n)
    observations = [] if record else None
    for _ in range(max_steps):
        if not running.any():
            break
        if record and running[0]:
            observations.append(obs[0].copy())
        state, action = policy.act(params, state, obs)
        ts = env.step(action)
        ids = ts.env_id
        # A reset step is no transition of any episode; a finished first
        # episode counts nothing more.
        live = running[ids] & ~ts.first
        returns[ids] += np.where(live, ts.reward, 0.0).astype(np.float32)
        for name, total in sums.items():
            total[ids] += np.where(live, ts.metrics[name], 0.0).astype(np.float32)
        lengths[ids] += live
        running[ids] = running[ids] & ~(live & ts.game_over())
        obs[ids] = ts.observation
    return HostEvalResult(returns, lengths, observations, sums, ~running)


def make_host_evaluate(
    env_id: str,
    options: dict[str, Any],
    network: Network | RecurrentNetwork,
    *,
    episodes: int,
    max_steps: int,
) -> Callable[..., HostEvalResult]:
    """Builds `evaluate(params, seed, record=False) -> HostEvalResult`.

    Each call plays `episodes` environments made afresh with `seed` (and
    closed after); the policy is jitted once, here.

    Args:
      env_id: `envpool:<task>` or `gymnasium:<id>`.
      options: the environment's options (`config.env.options`).
      network: the acting network (recurrent or not); actions are
        `to_env(mode(policy))`.
      episodes: E, environments played once each.
      max_steps: cap on the steps of the loop.

    Raises:
      ValueError: for episodes < 1 or max_steps < 1.

    """
    _check_counts(episodes, max_steps)
    policy = host_mode_policy(network)

    def evaluate(params: Params, seed: int, record: bool = False) -> HostEvalResult:
        env = make_host_pool(env_id, episodes, seed, **synchronous(options))
        try:
            return play_host(env, policy, params, max_steps, record)
        finally:
            env.close()

    return evaluate


def evaluate_host(
    env_id: str,
    options: dict[str, Any],
    network: Network | RecurrentNetwork,
    params: Params,
    *,
    episodes: int,
    seed: int,
    max_steps: int,
    record: bool = False,
) -> HostEvalResult:
    """Plays the deterministic policy once in each of `episodes` fresh environments.

    Not jittable. See `make_host_evaluate` (which evaluates more than once
    with one compiled policy) and `HostEvalResult`.
    """
    evaluate = make_host_evaluate(
        env_id, options, network, episodes=episodes, max_steps=max_steps
    )
    return evaluate(params, seed, record)


def eval_seed(seed: int, updates: int) -> int:
    """The seed of the evaluation pool after `updates` updates of a run seeded `seed`.

    30 bits, as the training pools' (`host_env_seed`), from a stream of its own.
    """
    entropy = [seed, updates, _EVAL_STREAM]
    return int(np.random.SeedSequence(entropy).generate_state(1)[0] >> 2)


def host_evaluation(
    config: Any, network: Network | RecurrentNetwork, abstract: Any, key: Any
) -> Ready:
    """A host run's evaluation during training, as a program of its chunks.

    `evaluate(state, updates) -> EvalResult` plays a fresh pool seeded
    from (seed, updates done): never the training pools, keys or
    parameters, which it only reads. The learner's parameters are replicated;
    this process's copy is played. Every process of a multi-process run
    evaluates alike (same seeds, same parameters, so the same returns): they
    all see `eval.stop_at` reached at the same chunk and stop together, with
    no collective.

    Args:
      config: the run's TrainConfig (its `env`, `eval` and `seed`).
      network: the acting network.
      abstract: unused (host code compiles its policy on first use).
      key: unused (the pools' seeds come from `config.seed`).

    """
    del abstract, key
    evaluate = make_host_evaluate(
        config.env.id,
        dict(config.env.options),
        network,
        episodes=config.eval.episodes,
        max_steps=config.eval.max_steps,
    )

    def evaluate_chunk(state: Any, updates: int) -> EvalResult:
        local = jax.tree.map(lambda x: x.addressable_data(0), state.agent.params)
        result = evaluate(local, eval_seed(config.seed, updates))
        return EvalResult(result.returns, result.lengths, result.metrics, result.ended)

    return Ready(evaluate_chunk)
