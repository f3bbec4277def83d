"""Anakin runner: `train_chunk = jit(scan(train_step))` over many updates.

Environments, rollouts and learner updates run in one compiled program; the host
only dispatches chunks of updates and reads their metrics (see `train.py`).
"""

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

from purejaxdrl.agents.base import Agent, AgentState
from purejaxdrl.env.base import Env, EnvParams
from purejaxdrl.rollout import ActorState, reset_actors, unroll
from purejaxdrl.types import Metrics, PRNGKey, Transition


class RunnerState(NamedTuple):
    """Everything a training run carries from one update to the next."""

    agent: AgentState
    actor: ActorState
    env_params: EnvParams
    key: PRNGKey


class Runner(NamedTuple):
    """The runner's functions.

    `init(key) -> RunnerState`; `train_chunk(length)` returns a jitted function
    that runs `length` updates, donates its input, and returns metrics `[length]`.
    """

    init: Callable[[PRNGKey], RunnerState]
    train_chunk: Callable[[int], Callable[[RunnerState], tuple[RunnerState, Metrics]]]
    steps_per_update: int


def episode_metrics(info: dict[str, jax.Array]) -> Metrics:
    """Sums over the episodes that ended in `info` [T, B] (EpisodeStatistics).

    Sums, not means: the host divides totals over a whole chunk, so updates in
    which no episode ended do not bias the mean and never report a fake 0.
    """
    if "episode_done" not in info:
        return {}
    done = info["episode_done"]
    return {
        "episode/count": done.sum(dtype=jnp.float32),
        "episode/return_sum": jnp.where(done, info["episode_return"], 0.0).sum(),
        "episode/length_sum": jnp.where(done, info["episode_length"], 0).sum(
            dtype=jnp.float32
        ),
    }


def make_runner(
    env: Env,
    env_params: EnvParams,
    agent: Agent,
    *,
    num_envs: int,
    unroll_length: int,
    scan_unroll: int = 1,
) -> Runner:
    """Builds the single-device Anakin runner.

    Args:
      env: an unbatched environment (wrapped with `EpisodeStatistics` for returns).
      env_params: its initial parameters (observation statistics live here).
      agent: the algorithm.
      num_envs: number of environments B.
      unroll_length: steps T per environment per update.
      scan_unroll: unroll factor of the rollout's `lax.scan`.

    """
    if num_envs < 1 or unroll_length < 1:
        raise ValueError(
            f"num_envs={num_envs} and unroll_length={unroll_length} must be >= 1."
        )

    def init(key: PRNGKey) -> RunnerState:
        key_agent, key_env, key_run = jax.random.split(key, 3)
        actor = reset_actors(
            env, env_params, key_env, jnp.arange(num_envs, dtype=jnp.int32)
        )
        return RunnerState(agent.init(key_agent), actor, env_params, key_run)

    def train_step(state: RunnerState, _: None) -> tuple[RunnerState, Metrics]:
        key, key_unroll, key_update = jax.random.split(state.key, 3)
        actor, traj = unroll(
            env,
            state.env_params,
            agent,
            agent.acting_params(state.agent),
            state.actor,
            key_unroll,
            unroll_length,
            scan_unroll,
        )
        env_params = env.update_statistics(state.env_params, traj.info, None)
        agent_state, metrics = agent.update(state.agent, _strip_info(traj), key_update)
        metrics = {**metrics, **episode_metrics(traj.info)}
        return RunnerState(agent_state, actor, env_params, key), metrics

    def train_chunk(length: int) -> Callable:
        def chunk(state: RunnerState) -> tuple[RunnerState, Metrics]:
            return jax.lax.scan(train_step, state, None, length=length)

        return jax.jit(chunk, donate_argnums=0)

    # Jitted so that outputs are distinct buffers: eager code may alias two leaves
    # (observation and final_observation after a reset), which donation rejects.
    return Runner(jax.jit(init), train_chunk, num_envs * unroll_length)


def _strip_info(traj: Transition) -> Transition:
    # The learner needs no env info; dropping it keeps it out of the update.
    return traj._replace(info={})
