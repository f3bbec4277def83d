"""Algorithms: one file each, each a factory returning an Agent."""

from purejaxdrl.agents.base import Agent, AgentState
from purejaxdrl.agents.ppo import PPOConfig, make_ppo

__all__ = ["Agent", "AgentState", "PPOConfig", "make_ppo"]
