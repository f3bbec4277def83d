"""A probe environment with a known timeline, for boundary tests."""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from purejaxdrl import env as envs
from purejaxdrl.types import TimeStep


class ProbeParams(NamedTuple):
    terminate_at: jax.Array  # episode terminates on reaching this step (0: never)
    time_limit: jax.Array  # episode is truncated on reaching this step


class ProbeEnv(envs.Env):
    """Observation [t, episode]; reward 1 per step; terminates and/or truncates
    at fixed steps. Actions are ignored (one discrete action)."""

    @property
    def default_params(self):
        return ProbeParams(jnp.int32(0), jnp.int32(3))

    def observation_spec(self, params):
        return envs.Box((2,))

    def action_spec(self, params):
        return envs.Discrete(2)

    def reset(self, key, params):
        obs = jnp.zeros(2, jnp.float32)
        return (jnp.int32(0), jnp.int32(0)), TimeStep(
            observation=obs,
            reward=jnp.float32(0),
            discount=jnp.float32(1),
            truncated=jnp.bool_(False),
            final_observation=obs,
            info={},
        )

    def step(self, key, state, action, params):
        t, episode = state
        t = t + 1
        final = jnp.stack([t, episode]).astype(jnp.float32)
        terminated = (params.terminate_at > 0) & (t >= params.terminate_at)
        truncated = (t >= params.time_limit) & ~terminated
        done = terminated | truncated
        episode = jnp.where(done, episode + 1, episode)
        t = jnp.where(done, 0, t)
        obs = jnp.stack([t, episode]).astype(jnp.float32)
        return (t, episode), TimeStep(
            observation=obs,
            reward=jnp.float32(1),
            discount=1.0 - terminated.astype(jnp.float32),
            truncated=truncated,
            final_observation=final,
            info={},
        )


# MaskedProbeEnv's rewards per action: action 2 pays most, even where illegal.
MASKED_PROBE_REWARDS = (0.0, 1.0, 2.0)


class MaskedProbeEnv(envs.Env):
    """Illegal actions at some steps: action 2 is illegal at odd steps.

    Observation [one-hot t (4), legal_0, legal_1, legal_2] (the flags the
    action spec's `legal` reads); actions 0, 1, 2 pay 0, 1, 2, action 2 even
    where illegal, so an unmasked learner would learn to take it there.
    Episodes terminate after 4 steps. `info["illegal"]` is 1 where the action
    just taken was illegal. With `masked=False` the action spec has no `legal`: the same
    dynamics for an agent that ignores the flags.
    """

    num_actions = 3
    length = 4

    def __init__(self, masked=True):
        self.masked = masked

    @property
    def default_params(self):
        return ()

    def observation_spec(self, params):
        return envs.Box((self.length + self.num_actions,))

    def action_spec(self, params):
        # A bound method: equal on every call, so equal specs compare equal.
        return envs.Discrete(self.num_actions, self.legal if self.masked else None)

    def legal(self, obs):
        """bool [..., 3]: the legal-action flags of observations [..., 7]."""
        return obs[..., self.length :] > 0.5

    @staticmethod
    def legal_at(t):
        """bool [3]: the actions legal at step t of an episode."""
        return jnp.stack([jnp.bool_(True), jnp.bool_(True), t % 2 == 0])

    def _observe(self, t):
        flags = self.legal_at(t).astype(jnp.float32)
        return jnp.concatenate([jax.nn.one_hot(t, self.length), flags])

    def reset(self, key, params):
        t = jnp.int32(0)
        ts = envs.restart(self._observe(t))
        return t, ts._replace(info={"illegal": jnp.float32(0)})

    def step(self, key, state, action, params):
        t = jnp.asarray(state, jnp.int32)
        illegal = ~self.legal_at(t)[action]
        reward = jnp.asarray(MASKED_PROBE_REWARDS, jnp.float32)[action]
        final = self._observe(t + 1)
        done = t + 1 >= self.length
        t = jnp.where(done, 0, t + 1)
        obs = self._observe(t)
        return t, TimeStep(
            observation=obs,
            reward=reward,
            discount=1.0 - done.astype(jnp.float32),
            truncated=jnp.bool_(False),
            final_observation=final,
            info={"illegal": illegal.astype(jnp.float32)},
        )
