"""Episode ends the adapters share: the time limit, and auto-resets.

Adapters that end and restart episodes themselves share these: the time
limit they count (`time_limit`: brax, Playground) and the auto-reset that
keeps the final observation (`reset_ended`: brax, Playground, Craftax).
Under `vmap`, an auto-resetting step computes a reset for every environment at
every step (both sides of a `where`). `step_resetting_few` steps a batch and
computes resets for the few environments that ended only, with the same keys,
so each gets the episode `vmap(step)` would give it.
"""

from collections.abc import Callable

import jax
import jax.numpy as jnp

from purejaxdrl.env.base import EnvParams, EnvState
from purejaxdrl.types import PRNGKey, TimeStep


def step_resetting_few(
    step: Callable[..., tuple[EnvState, TimeStep]],
    reset: Callable[[PRNGKey, EnvParams], tuple[EnvState, jax.Array]],
    keys: PRNGKey,
    states: EnvState,
    actions: jax.Array,
    params: EnvParams,
    *,
    slots: int,
) -> tuple[EnvState, TimeStep]:
    """Steps B environments, resetting only those that ended (at most `slots`).

    What `vmap` of an auto-resetting step gives, for an environment whose
    reset is expensive: each key [B] splits into a step key and a reset key;
    `step(key, state, action, params) -> (state, TimeStep)` steps one
    environment without resetting it, `reset(key, params) -> (state, obs)`
    starts one. The environments that ended get the state and first
    observation of `reset` with their own reset keys, computed for the first
    `slots` of them; in a step where more ended, for all B.
    """
    split = jax.vmap(jax.random.split)(keys)
    states, ts = jax.vmap(step, in_axes=(0, 0, 0, None))(
        split[:, 0], states, actions, params
    )
    ended = ts.last()
    reset_all = jax.vmap(reset, in_axes=(0, None))

    def few() -> tuple[EnvState, jax.Array]:
        # The ended environments' indices first; the rest of the slots repeat
        # index 0 and go unused.
        ids = jnp.nonzero(ended, size=slots, fill_value=0)[0]
        worlds = reset_all(split[ids, 1], params)
        slot = jnp.clip(jnp.cumsum(ended) - 1, 0, slots - 1)
        return jax.tree.map(lambda x: x[slot], worlds)

    def every() -> tuple[EnvState, jax.Array]:
        return reset_all(split[:, 1], params)

    if slots < len(ended):
        worlds = jax.lax.cond(ended.sum() <= slots, few, every)
    else:
        worlds = every()
    return jax.vmap(reset_ended)(states, ts, worlds)


def step_resetting_if_any(
    step: Callable[..., tuple[EnvState, TimeStep]],
    reset: Callable[[PRNGKey, EnvState, EnvParams], tuple[EnvState, jax.Array]],
    keys: PRNGKey,
    states: EnvState,
    actions: jax.Array,
    params: EnvParams,
) -> tuple[EnvState, TimeStep]:
    """Steps B environments, computing resets only in steps where one ended.

    The same arguments and results as `step_resetting_few`, but `reset(key,
    state, params)` also sees the state an environment ended in (what a new
    episode keeps of it: a randomised model), and with one copy of
    `reset` in the program instead of two: for environments whose reset is
    slow to compile (MJX's physics) and whose episodes end together or rarely
    (a time limit that every environment reaches on the same step), where
    `reset` runs for all B in the few steps where any ended.
    """
    split = jax.vmap(jax.random.split)(keys)
    states, ts = jax.vmap(step, in_axes=(0, 0, 0, None))(
        split[:, 0], states, actions, params
    )

    def every() -> tuple[EnvState, jax.Array]:
        return jax.vmap(reset, in_axes=(0, 0, None))(split[:, 1], states, params)

    def none() -> tuple[EnvState, jax.Array]:
        return states, ts.observation  # not used: no environment ended

    worlds = jax.lax.cond(ts.last().any(), every, none)
    return jax.vmap(reset_ended)(states, ts, worlds)


def time_limit(
    steps: jax.Array, limit: int | jax.Array, terminated: jax.Array
) -> jax.Array:
    """`truncated`, bool []: the episode reached `limit` steps, not terminating.

    `steps` counts the episode's steps, this one included. A termination on
    the limit's step is a termination (discount 0, not bootstrapped).
    """
    return jnp.logical_and(steps >= limit, ~terminated)


def reset_ended(
    state: EnvState, ts: TimeStep, world: tuple[EnvState, jax.Array]
) -> tuple[EnvState, TimeStep]:
    """One environment's (state, TimeStep) after a step, reset where it ended.

    `world`: the (state, first observation) of a new episode; they replace
    the state and the observation where `ts` ended an episode (the final
    observation stays).
    """
    done = ts.last()
    # Trees: observations may be dicts (Playground's `state`, `privileged_state`).
    state, obs = jax.tree.map(
        lambda r, s: jnp.where(done, r, s), tuple(world), (state, ts.observation)
    )
    return state, ts._replace(observation=obs)
