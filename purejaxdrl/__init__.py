"""purejaxdrl: distributed reinforcement learning in pure JAX.

Environments, rollouts and learner updates are pure functions compiled together
and run on the accelerator; the host only dispatches chunks and logs.

Two tiers. Users train, sweep, load presets and policies from the top level
(`pjd.train`, `pjd.sweep`, `pjd.pbt`, `pjd.load_preset`, `pjd.load_policy`, ...).
Builders reach the pieces through the subpackages, each with a complete
`__all__`: `training` (experiments, checkpoints), `runners`, `agents` (every
algorithm's factory and config, and the pieces to build one), `networks`,
`replay`, `env`, and the math in `rl`; the records they share (`TimeStep`,
`Transition`, `Metrics`, `Params`, `PRNGKey`) are public too, in the module
`purejaxdrl.types`.
"""

from purejaxdrl._platform import configure_xla_flags, enable_compilation_cache

configure_xla_flags()  # before anything makes JAX start its CPU backend

# The library tier: each subpackage's `__all__` is its public API.
from purejaxdrl import (  # noqa: E402
    agents,
    config,
    env,
    networks,
    parallel,
    replay,
    rl,
    runners,
    sweeps,
    training,
)

# The user tier: train, sweep, presets, policies.
from purejaxdrl.config import ConfigError, apply_overrides  # noqa: E402
from purejaxdrl.networks import NetworkConfig  # noqa: E402
from purejaxdrl.observe.evaluation import EvalConfig  # noqa: E402
from purejaxdrl.runners.host_waits import HostEnvError  # noqa: E402
from purejaxdrl.runners.placement import HostConfig  # noqa: E402
from purejaxdrl.setup_warnings import SetupWarning  # noqa: E402
from purejaxdrl.sweeps.batch import SweepStopped  # noqa: E402
from purejaxdrl.sweeps.pbt.lineage import PBTResult, load_pbt  # noqa: E402
from purejaxdrl.sweeps.pbt.population import pbt, resume_pbt  # noqa: E402
from purejaxdrl.sweeps.program import resume_sweep, sweep  # noqa: E402
from purejaxdrl.sweeps.report import SweepResult, load_sweep  # noqa: E402
from purejaxdrl.training.checkpoint_config import CheckpointConfig  # noqa: E402
from purejaxdrl.training.config import EnvConfig, TrainConfig  # noqa: E402
from purejaxdrl.training.faults import NonFiniteError  # noqa: E402
from purejaxdrl.training.policy import Policy, export_policy, load_policy  # noqa: E402
from purejaxdrl.training.policy_eval import evaluate_policy  # noqa: E402
from purejaxdrl.training.presets import Preset, load_preset, preset_names  # noqa: E402
from purejaxdrl.training.resume import resume_config  # noqa: E402
from purejaxdrl.training.run_env import validate  # noqa: E402
from purejaxdrl.training.train import TrainResult, train  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "CheckpointConfig",
    "ConfigError",
    "EnvConfig",
    "EvalConfig",
    "HostConfig",
    "HostEnvError",
    "NetworkConfig",
    "NonFiniteError",
    "PBTResult",
    "Policy",
    "Preset",
    "SetupWarning",
    "SweepResult",
    "SweepStopped",
    "TrainConfig",
    "TrainResult",
    "agents",
    "apply_overrides",
    "config",
    "enable_compilation_cache",
    "env",
    "evaluate_policy",
    "export_policy",
    "load_policy",
    "load_pbt",
    "load_preset",
    "load_sweep",
    "networks",
    "parallel",
    "pbt",
    "preset_names",
    "replay",
    "resume_config",
    "resume_pbt",
    "resume_sweep",
    "rl",
    "runners",
    "sweep",
    "sweeps",
    "train",
    "training",
    "validate",
]
