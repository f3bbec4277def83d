"""unroll(): lax.scan over time, vmap over environments, time-major Transitions."""

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

from purejaxdrl.agents.base import Agent
from purejaxdrl.env.base import Env, EnvParams
from purejaxdrl.parallel import manual_axes, varying
from purejaxdrl.rl.bootstrap import bootstrap_values
from purejaxdrl.scans import platform_scan
from purejaxdrl.types import Params, PRNGKey, PyTree, TimeStep, Transition


class ActorState(NamedTuple):
    """A batch of environments: their states and last TimeSteps, `[B, ...]`.

    `env_ids` (int32 [B]) are the environments' global indices: per-environment
    randomness is derived from them, so it does not depend on how environments are
    split over devices. `core` is a recurrent agent's core state [B, ...] after
    the last step (zeroed by the next step where `timestep` ended an episode);
    () for feed-forward agents.
    """

    env_state: PyTree
    timestep: TimeStep
    env_ids: jax.Array
    core: PyTree = ()


def env_keys(key: PRNGKey, env_ids: jax.Array) -> jax.Array:
    """One key per environment, from its global index: keys [B]."""
    return jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, env_ids)


def reset_actors(
    env: Env, env_params: EnvParams, key: PRNGKey, env_ids: jax.Array
) -> ActorState:
    """Resets the environments `env_ids` (int32 [B]) with keys derived from `key`."""
    keys = env_keys(key, env_ids)
    env_state, timestep = jax.vmap(env.reset, in_axes=(0, None))(keys, env_params)
    return ActorState(env_state, timestep, env_ids)


def unroll(
    env: Env,
    env_params: EnvParams,
    agent: Agent,
    params: Params,
    actor: ActorState,
    key: PRNGKey,
    length: int,
    scan_unroll: int = 0,
    axis_name: str | None = None,
) -> tuple[ActorState, Transition]:
    """Steps every environment `length` times with the agent's policy.

    One scan body for every agent (`Agent.acting`). Where the policy gives
    values as it acts (`Acting.values_while_acting`: a recurrent core's, or
    R2D2's), the pass that acts gives them, and the Transitions carry the
    reset flags and the start carry (each trajectory's start). Otherwise
    only the policy runs inside the scan, and the values are computed after
    it, in batched calls (`step_values`).

    Args:
      env: the (unbatched) environment.
      env_params: its parameters, shared by all environments.
      agent: supplies `acting`.
      params: the acting parameters.
      actor: current environment states (and carry), batch [B].
      key: randomness for this unroll.
      length: number of steps T.
      scan_unroll: `lax.scan` unroll factor; 0 picks it by platform (`_scan`).
      axis_name: the mesh axis the environments are split over, when called
        inside `shard_map`; None outside.

    Returns:
      The new actor state and Transitions [T, B].

    """
    acting = agent.acting
    values_while_acting = acting.values_while_acting

    def step(actor: ActorState, key_t: PRNGKey) -> tuple[ActorState, tuple]:
        keys = jax.vmap(jax.random.split)(env_keys(key_t, actor.env_ids))
        obs = actor.timestep.observation
        reset = actor.timestep.last()
        carry, action, extras = acting.step(
            params, actor.core, obs, reset, keys[:, 0], actor.env_ids
        )
        env_state, ts = env.step_batch(
            keys[:, 1], actor.env_state, extras["env_action"], env_params
        )
        out = (obs, action, extras["log_prob"], ts)
        if values_while_acting:  # `carry`: what a final observation continues
            out = (*out, reset, extras["value"], carry)
        new = ActorState(env_state, ts, actor.env_ids, carry)
        if axis_name is not None:
            # Per-environment data, even where an env returns a constant (e.g. a
            # reward of 1): varying (over a sweep's runs too), so carries built
            # from it keep their type.
            new, out = varying((new, out), manual_axes())
        return new, out

    start = actor.core
    actor, out = _scan(step, actor, jax.random.split(key, length), scan_unroll)
    obs, action, log_prob, ts = out[:4]
    if not values_while_acting:
        value, bootstrap = step_values(
            lambda p, x: acting.value(p, (), x),
            params,
            obs,
            ts,
            actor.timestep.observation,
        )
        return actor, _transitions(obs, action, log_prob, value, bootstrap, ts)
    reset, value, states = out[4:]
    # The value of the observation after the unroll, from the carried state.
    # Where the last step ended an episode it is not that step's bootstrap
    # (bootstrap_values uses 0 or the final observation's), so no reset needed.
    after = acting.value(params, actor.core, actor.timestep.observation)
    next_values = jnp.concatenate([value[1:], after[None]])
    bootstrap = bootstrap_values(
        lambda p, x: acting.value(p, *x),
        params,
        next_values,
        ts.discount,
        ts.truncated,
        (states, ts.final_observation),
    )
    return actor, _transitions(
        obs, action, log_prob, value, bootstrap, ts, reset=reset, core_state=start
    )


def _transitions(
    obs: PyTree,
    action: jax.Array,
    log_prob: jax.Array,
    value: jax.Array,
    bootstrap_value: jax.Array,
    ts: TimeStep,
    **core: PyTree,
) -> Transition:
    # An unroll's [T, B] Transitions from the steps' TimeSteps and the policy's
    # outputs; `core` adds a recurrent agent's reset flags and start state.
    return Transition(
        observation=obs,
        action=action,
        reward=ts.reward,
        discount=ts.discount,
        truncated=ts.truncated,
        log_prob=log_prob,
        value=value,
        bootstrap_value=bootstrap_value,
        final_observation=ts.final_observation,
        info=ts.info,
        **core,
    )


def step_values(
    value_fn: Callable[[Params, PyTree], jax.Array],
    params: Params,
    obs: PyTree,
    ts: TimeStep,
    next_obs: PyTree,
) -> tuple[jax.Array, jax.Array]:
    """Values of the observations acted on and bootstrap values, `[T, B]` each.

    One pass over the T + 1 observations `obs` and `next_obs` (the observations
    after the last step) gives the values and, where a step continued its
    episode, its bootstrap value; `rl.bootstrap_values` evaluates the final
    observations of truncated steps only.

    Why not one pass over observations and final observations, [2, T, B]: it
    does twice the arithmetic, and on CPU a pass of 1024 rows or more is split
    over threads whose wake-ups cost more than the pass (CartPole PPO with
    4 envs x 128 steps: 20% of its steps/s).

    Args:
      value_fn: `(params, observations [..., *obs_shape]) -> values [...]`.
      params: the acting parameters.
      obs: observations acted on, [T, B, ...].
      ts: the TimeSteps the actions led to, [T, B].
      next_obs: the observations after the last step, [B, ...].

    Returns:
      (value, bootstrap_value), float32 [T, B] each.

    """
    seq = jax.tree.map(lambda x, y: jnp.concatenate([x, y[None]]), obs, next_obs)
    values = value_fn(params, seq)
    bootstrap = bootstrap_values(
        value_fn, params, values[1:], ts.discount, ts.truncated, ts.final_observation
    )
    return values[:-1], bootstrap


def _scan(
    step: Callable[[ActorState, jax.Array], tuple[ActorState, PyTree]],
    actor: ActorState,
    keys: jax.Array,
    scan_unroll: int,
) -> tuple[ActorState, PyTree]:
    """The rollout's loop: `scan_unroll` steps per iteration, or by platform.

    With 0, one step per iteration on CPU and `scans.ACCELERATOR_UNROLL`
    elsewhere: on one H200, PPO on CartPole with 8 vmapped seeds gained 17% at
    64 envs and 15% at 512 (`scripts/bench_gpu.py --rows ppo_cartpole`), where
    each step's kernels are small enough for launch latency to dominate.
    """
    if scan_unroll == 0:
        return platform_scan(step, actor, keys)
    return jax.lax.scan(step, actor, keys, unroll=scan_unroll)
