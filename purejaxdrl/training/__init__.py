"""The host side of one training run.

`config` (TrainConfig: the run's fields and a section per registered algorithm;
validation, with `run_rules`, the rules of its sections), `experiment` (the
env, networks, agent and runner a config describes; `run_env` makes its
environment, `device_choice` says how many devices it takes and why), and
`train` as a recipe of
small steps: `run` (run directory, checkpointer, restore), `programs` (compile
the chunks, init, evaluation), `loop` (dispatch / observe / evaluate /
checkpoint / stop per chunk, on `schedule`'s chunks; `device_state` places
and checks its state), then finish (`result`, `run_files`). The recipe is
one for device and host environments: the experiment picks the Anakin or
the Sebulba runner (`runners.base.Runner`) and the player of its episodes
(`observe.Player`).
`checkpoint` (with `checkpoint_config`, when a run saves; `integrity`, its
SHA-256 manifests; `retention`, which checkpoints stay; `save_queue`, the
writer thread; `orbax_logs`, quiet orbax while it saves; `replay_shards`, the
device count a replay buffer's shards hold a resume to), `packing`,
`resume` (with `saved_config`, a resumed config beside its saved one;
`opened_run`, the run this process opened last and the command resuming it)
and `faults` (with `stop_words`, what a stop signal's lines say; `setup_stop`,
a signal held while a run sets up; `log_writes`, a log file that cannot be
written said in one line) hold the pieces those steps use; `memory`
says what a run needs on each device, and what a device has.
`restored` reads a run's newest good checkpoint outside training (eval,
export; `run_folder` checks the folder given), and the subpackage `policy`
exports it as a policy, loads one and plays it. The subpackage `presets`
holds the tuned configs of envs/ (each module of a subpackage is listed in
its own docstring). Imports
`observe`, `runners`, `agents` and below; never `sweeps` or `cli`.
`TrainConfig`'s sections are exported here: `EnvConfig`, `EvalConfig`
(from `observe`), `HostConfig` (from `runners`), `CheckpointConfig`, and
`NetworkConfig` from `networks`.
"""

from purejaxdrl.observe.evaluation import EvalConfig
from purejaxdrl.runners.placement import HostConfig
from purejaxdrl.training.checkpoint import Checkpointer
from purejaxdrl.training.checkpoint_config import CheckpointConfig
from purejaxdrl.training.config import EnvConfig, TrainConfig, config_class
from purejaxdrl.training.experiment import Experiment, make_experiment
from purejaxdrl.training.faults import NonFiniteError
from purejaxdrl.training.log_writes import LogWriteError
from purejaxdrl.training.policy.evaluate import evaluate_policy
from purejaxdrl.training.policy.exported import Policy, export_policy, load_policy
from purejaxdrl.training.presets.load import (
    NoSectionError,
    Preset,
    load_preset,
    preset_names,
)
from purejaxdrl.training.resume import resume_config
from purejaxdrl.training.run_env import validate
from purejaxdrl.training.train import TrainResult, train

__all__ = [
    "CheckpointConfig",
    "Checkpointer",
    "EnvConfig",
    "EvalConfig",
    "Experiment",
    "HostConfig",
    "LogWriteError",
    "NoSectionError",
    "NonFiniteError",
    "Policy",
    "Preset",
    "TrainConfig",
    "TrainResult",
    "config_class",
    "evaluate_policy",
    "export_policy",
    "load_policy",
    "load_preset",
    "make_experiment",
    "preset_names",
    "resume_config",
    "train",
    "validate",
]
