"""purejaxdrl: distributed reinforcement learning in pure JAX.

Environments, rollouts and learner updates are pure functions compiled together
and run on the accelerator; the host only dispatches chunks and logs.
"""

from purejaxdrl._platform import configure_xla_flags, enable_compilation_cache

configure_xla_flags()  # before anything makes JAX start its CPU backend

from purejaxdrl import env, rl  # noqa: E402
from purejaxdrl.agents import Agent, AgentState, PPOConfig, make_ppo  # noqa: E402
from purejaxdrl.config import (  # noqa: E402
    ConfigError,
    EnvConfig,
    Preset,
    TrainConfig,
    apply_overrides,
    load_preset,
    preset_names,
    validate,
)
from purejaxdrl.networks import Network, NetworkConfig, make_actor_critic  # noqa: E402
from purejaxdrl.rollout import ActorState, reset_actors, unroll  # noqa: E402
from purejaxdrl.runner import Runner, RunnerState, make_runner  # noqa: E402
from purejaxdrl.train import (  # noqa: E402
    Experiment,
    TrainResult,
    make_experiment,
    train,
)
from purejaxdrl.types import TimeStep, Transition  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "ActorState",
    "Agent",
    "AgentState",
    "ConfigError",
    "EnvConfig",
    "Experiment",
    "Network",
    "NetworkConfig",
    "PPOConfig",
    "Preset",
    "Runner",
    "RunnerState",
    "TimeStep",
    "TrainConfig",
    "TrainResult",
    "Transition",
    "apply_overrides",
    "enable_compilation_cache",
    "env",
    "load_preset",
    "make_actor_critic",
    "make_experiment",
    "make_ppo",
    "make_runner",
    "preset_names",
    "reset_actors",
    "rl",
    "train",
    "unroll",
    "validate",
]
