"""Ape-X: DQN's learner with prioritised replay and an ε per actor.

Horgan et al. (2018), "Distributed Prioritized Experience Replay",
https://arxiv.org/abs/1803.00933. The learner is `make_dqn`'s; Ape-X is its
config with `prioritised` replay (initial priorities from the actors' TD errors),
`per_actor_epsilon` (environment i explores with its own fixed ε_i) and
`prefetch` (each update's batches drawn before its gradient steps).
"""

import dataclasses
import functools

import jax

from purejaxdrl.agents import dqn
from purejaxdrl.agents.base import Agent, RunShape
from purejaxdrl.networks import AnyNetwork


def default_config() -> dqn.DQNConfig:
    """DQN's config with Ape-X's prioritised replay, per-actor ε, prefetch."""
    return dqn.DQNConfig(prioritised=True, per_actor_epsilon=True, prefetch=True)


def make_apex(
    config: dqn.DQNConfig, network: AnyNetwork, obs_example: jax.Array, run: RunShape
) -> Agent:
    """Ape-X's agent: `make_dqn`'s, whose errors then name the `apex` section."""
    return dqn.make_dqn(config, network, obs_example, run, name="apex")


# DQN's record, but for its name, its defaults and the section its checks name.
ALGORITHM = dataclasses.replace(
    dqn.ALGORITHM,
    name="apex",
    summary="Ape-X: DQN with prioritised replay and a fixed ε per actor",
    default_config=default_config,
    make_agent=make_apex,
    validate=functools.partial(dqn.validate, name="apex"),
)
