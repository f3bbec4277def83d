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

import importlib
from typing import TYPE_CHECKING, Any

from purejaxdrl._platform import configure_xla_flags, enable_compilation_cache

configure_xla_flags()  # before anything makes JAX start its CPU backend

# The names below load when first used (PEP 562's `__getattr__`), so that
# `import purejaxdrl` and the command's `--help` import no JAX. Type checkers
# and the API reference read them here; `_NAMES` says where each one lives.
if TYPE_CHECKING:
    # The library tier: each subpackage's `__all__` is its public API.
    from purejaxdrl import (
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
    from purejaxdrl.config import ConfigError, apply_overrides
    from purejaxdrl.networks import NetworkConfig
    from purejaxdrl.observe.evaluation import EvalConfig
    from purejaxdrl.runners.host_waits import HostEnvError
    from purejaxdrl.runners.placement import HostConfig
    from purejaxdrl.setup_warnings import SetupWarning
    from purejaxdrl.sweeps.batch import SweepStopped
    from purejaxdrl.sweeps.pbt.lineage import PBTResult, load_pbt
    from purejaxdrl.sweeps.pbt.population import pbt, resume_pbt
    from purejaxdrl.sweeps.program import resume_sweep, sweep
    from purejaxdrl.sweeps.report import SweepResult, load_sweep
    from purejaxdrl.training.checkpoint_config import CheckpointConfig
    from purejaxdrl.training.config import EnvConfig, TrainConfig
    from purejaxdrl.training.faults import NonFiniteError
    from purejaxdrl.training.log_writes import LogWriteError
    from purejaxdrl.training.policy.evaluate import evaluate_policy
    from purejaxdrl.training.policy.exported import Policy, export_policy, load_policy
    from purejaxdrl.training.presets.load import Preset, load_preset, preset_names
    from purejaxdrl.training.resume import resume_config
    from purejaxdrl.training.run_env import validate
    from purejaxdrl.training.train import TrainResult, train

__version__ = "0.1.0"

__all__ = [
    "CheckpointConfig",
    "ConfigError",
    "EnvConfig",
    "EvalConfig",
    "HostConfig",
    "LogWriteError",
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

# Where each name of the imports above lives (tests/test_api.py checks that
# the two agree): the modules (subpackages, config, parallel) are their own;
# each other name is its module's attribute of that name.
_MODULES = ("agents", "config", "env", "networks", "parallel", "replay")
_MODULES += ("rl", "runners", "sweeps", "training")
_NAMES = {
    "config": ("ConfigError", "apply_overrides"),
    "networks": ("NetworkConfig",),
    "observe.evaluation": ("EvalConfig",),
    "runners.host_waits": ("HostEnvError",),
    "runners.placement": ("HostConfig",),
    "setup_warnings": ("SetupWarning",),
    "sweeps.batch": ("SweepStopped",),
    "sweeps.pbt.lineage": ("PBTResult", "load_pbt"),
    "sweeps.pbt.population": ("pbt", "resume_pbt"),
    "sweeps.program": ("resume_sweep", "sweep"),
    "sweeps.report": ("SweepResult", "load_sweep"),
    "training.checkpoint_config": ("CheckpointConfig",),
    "training.config": ("EnvConfig", "TrainConfig"),
    "training.faults": ("NonFiniteError",),
    "training.log_writes": ("LogWriteError",),
    "training.policy.exported": ("Policy", "export_policy", "load_policy"),
    "training.policy.evaluate": ("evaluate_policy",),
    "training.presets.load": ("Preset", "load_preset", "preset_names"),
    "training.resume": ("resume_config",),
    "training.run_env": ("validate",),
    "training.train": ("TrainResult", "train"),
}
_LAZY = {name: module for module, names in _NAMES.items() for name in names}


def __getattr__(name: str) -> Any:
    """`pjd.NAME` of the public API: imports its module on first use (PEP 562)."""
    if name in _MODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    elif name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # once: later uses find it without this function
    return value


def __dir__() -> list[str]:
    """The module's names, the ones not loaded yet included."""
    return sorted({*globals(), *_MODULES, *_LAZY})
