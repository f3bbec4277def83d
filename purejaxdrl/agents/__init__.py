"""Algorithms: one module each, each exporting its `ALGORITHM` record.

A record (`base.Algorithm`) names the algorithm and bundles its config type,
agent factory (returning an `Agent` of pure functions), network factory,
validation and state layout; `registry` lists the records, and `register`
adds a user's, defined outside the package. Every algorithm's
factory and config are exported here (Ape-X's `make_apex` is DQN's factory
under its own name, with DQN's config and its own defaults). Nothing outside this
package branches on an algorithm's name. Agents import `rl`, `replay`,
`networks`, `env` specs and the shared modules (`config`, `types`, `parallel`,
`rng`); never `runners`, `training`, `sweeps`, `observe` or `cli`.
"""

from purejaxdrl.agents.a2c import A2CConfig, make_a2c
from purejaxdrl.agents.apex import make_apex
from purejaxdrl.agents.base import Agent, AgentState, Algorithm, RunShape
from purejaxdrl.agents.dqn import DQNConfig, DQNState, make_dqn
from purejaxdrl.agents.impala import IMPALAConfig, IMPALAState, make_impala
from purejaxdrl.agents.ppo import PPOConfig, make_ppo
from purejaxdrl.agents.pqn import PQNConfig, make_pqn
from purejaxdrl.agents.r2d2 import R2D2Config, R2D2State, make_r2d2
from purejaxdrl.agents.registry import (
    algorithm,
    algorithms,
    make_agent,
    names,
    register,
)
from purejaxdrl.agents.sac import SACConfig, SACState, make_sac

__all__ = [
    "A2CConfig",
    "Agent",
    "AgentState",
    "Algorithm",
    "DQNConfig",
    "DQNState",
    "IMPALAConfig",
    "IMPALAState",
    "PPOConfig",
    "PQNConfig",
    "R2D2Config",
    "R2D2State",
    "RunShape",
    "SACConfig",
    "SACState",
    "algorithm",
    "algorithms",
    "make_a2c",
    "make_agent",
    "make_apex",
    "make_dqn",
    "make_impala",
    "make_ppo",
    "make_pqn",
    "make_r2d2",
    "make_sac",
    "names",
    "register",
]
