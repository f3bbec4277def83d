"""How an exported policy acts when played: its mode, or a sample (`eval --sample`).

A player acts through a `ModePolicy` (`observe/play.py`): `act(params, state,
obs [E, ...], reset [E])` carrying a state from step to step. An exported
policy holds its parameters, so `params` is unused; its mode is
`policy.step_mode`. Sampled, it is `policy.step` with a key per environment
carried in the state beside the core's: environment i's stream is the
sampling key folded with i, split at each step, so that environment's actions
are the same whatever the number of environments played beside it (`eval
--render` draws the first episode scored, sampled alike), and the same seed
plays the same actions.
"""

from typing import Any

import jax

from purejaxdrl.observe.play import ModePolicy
from purejaxdrl.training.policy.exported import Policy
from purejaxdrl.training.policy.inputs import checked_batch

# Folded into the evaluation's key (`jax.random.key(seed)`, whose splits reset
# and step the environments): the sampling's own stream.
SAMPLING_STREAM = 1


def policy_acting(policy: Policy, sample_seed: int | None = None) -> ModePolicy:
    """`policy` as a player acts with it: its mode, or sampled with `sample_seed`.

    Args:
      policy: a `load_policy` result.
      sample_seed: None for the mode (`step_mode`); else the seed of the
        sampling's keys (`eval --seed`'s): `step` with a key per environment.

    Returns:
      The ModePolicy a Player takes (its `params` argument unused).

    """
    if sample_seed is None:

        def act(params: Any, state: Any, obs: Any, reset: Any) -> tuple[Any, Any]:
            del params
            return policy.step_mode(state, obs, reset)

        return ModePolicy(policy.initial_state, act)
    return _sampling(policy, sample_seed)


def _sampling(policy: Policy, seed: int) -> ModePolicy:
    """`policy.step` per environment, each with its own key stream of `seed`."""

    def initial_state(batch: int) -> tuple[Any, jax.Array]:
        key = jax.random.fold_in(jax.random.key(seed), SAMPLING_STREAM)
        keys = jax.vmap(jax.random.fold_in, in_axes=(None, 0))(
            key, jax.numpy.arange(batch)
        )
        return policy.initial_state(batch), keys

    def one(state: Any, obs: Any, reset: Any, key: jax.Array) -> tuple[Any, Any]:
        # One environment as a batch of one: its own key samples its action.
        state, obs = jax.tree.map(lambda x: x[None], (state, obs))
        state, action = policy.step(state, obs, reset[None], key)
        return jax.tree.map(lambda x: x[0], (state, action))

    def act(params: Any, state: Any, obs: Any, reset: Any) -> tuple[Any, Any]:
        del params
        core, keys = state
        split = jax.vmap(jax.random.split)(keys)  # [E, 2]
        core, action = jax.vmap(one)(core, obs, reset, split[:, 1])
        return (core, split[:, 0]), action

    # Checked before the keys: jnp.arange would refuse a bad batch unclearly.
    return ModePolicy(checked_batch(initial_state), act)
