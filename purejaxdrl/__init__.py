"""purejaxdrl: distributed reinforcement learning in pure JAX.

Environments, rollouts and learner updates are pure functions compiled together
and run on the accelerator; the host only dispatches chunks and logs.
"""

from purejaxdrl._platform import configure_xla_flags, enable_compilation_cache

configure_xla_flags()  # before anything makes JAX start its CPU backend

from purejaxdrl import config, env, parallel, rl  # noqa: E402
from purejaxdrl.agents import (  # noqa: E402
    A2CConfig,
    Agent,
    AgentState,
    Algorithm,
    IMPALAConfig,
    PPOConfig,
    make_a2c,
    make_agent,
    make_impala,
    make_ppo,
)
from purejaxdrl.config import ConfigError, apply_overrides  # noqa: E402
from purejaxdrl.networks import Network, NetworkConfig, make_actor_critic  # noqa: E402
from purejaxdrl.runners.anakin import RunnerState, make_runner  # noqa: E402
from purejaxdrl.runners.base import Runner  # noqa: E402
from purejaxdrl.runners.rollout import ActorState, reset_actors, unroll  # noqa: E402
from purejaxdrl.sweeps.program import (  # noqa: E402  (shadows the subpackage)
    resume_sweep,
    sweep,
)
from purejaxdrl.sweeps.report import SweepResult, load_sweep  # noqa: E402
from purejaxdrl.training.checkpoint import CheckpointConfig, Checkpointer  # noqa: E402
from purejaxdrl.training.config import EnvConfig, TrainConfig, validate  # noqa: E402
from purejaxdrl.training.experiment import Experiment, make_experiment  # noqa: E402
from purejaxdrl.training.faults import NonFiniteError  # noqa: E402
from purejaxdrl.training.policy import Policy, export_policy, load_policy  # noqa: E402
from purejaxdrl.training.presets import Preset, load_preset, preset_names  # noqa: E402
from purejaxdrl.training.resume import resume_config  # noqa: E402
from purejaxdrl.training.train import TrainResult, train  # noqa: E402
from purejaxdrl.types import TimeStep, Transition  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "A2CConfig",
    "ActorState",
    "Agent",
    "AgentState",
    "Algorithm",
    "CheckpointConfig",
    "Checkpointer",
    "ConfigError",
    "EnvConfig",
    "Experiment",
    "IMPALAConfig",
    "Network",
    "NetworkConfig",
    "NonFiniteError",
    "PPOConfig",
    "Policy",
    "Preset",
    "Runner",
    "RunnerState",
    "SweepResult",
    "TimeStep",
    "TrainConfig",
    "TrainResult",
    "Transition",
    "apply_overrides",
    "config",
    "enable_compilation_cache",
    "env",
    "export_policy",
    "load_policy",
    "load_preset",
    "load_sweep",
    "resume_sweep",
    "make_a2c",
    "make_actor_critic",
    "make_agent",
    "make_experiment",
    "make_impala",
    "make_ppo",
    "make_runner",
    "parallel",
    "preset_names",
    "reset_actors",
    "resume_config",
    "rl",
    "sweep",
    "train",
    "unroll",
    "validate",
]
