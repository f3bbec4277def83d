"""Environments: the device `Env` interface, adapters, wrappers and the registry.

`base` (the Env protocol, specs, TimeStep helpers), `gymnax_env`, `brax_env`,
`craftax_env` and `playground_env` (adapters that normalise each library to
the project's TimeStep: discount 0 only on termination, `truncated` on time
limits, the true final observation; `resets`, auto-resets for environments
whose reset is costly; `randomize`, randomised MJX models per environment;
Playground's own: `playground_options` (which config options it runs),
`playground_names` (a task's options, read without building it),
`playground_nan` (a step whose physics blew up: zeroed, ended, counted),
`playground_compat` (a JAX keyword its calls still pass) and `menagerie`
(where its robots' models are found)), `specs` (the observation and action
specs purejaxdrl takes), options checked before building (`option_names`,
`option_types`; `option_spelling`, both spellings for messages),
`user_frames` (where in a user's code a traced error arose),
`host` (a subpackage: batches of CPU environments in numpy, EnvPool and Gymnasium, for
the actor-learner runner; imported on use),
`wrappers` and `normalization` (episode statistics, observation
normalisation), `registry` (`make(name)`), `extras` (the optional package
and extra each kind of id needs), `contract` (a user's environment
checked against its specs before training; `describe`, the words its messages
name values with), `imports` (the user's modules that register environments,
imported before an id is resolved). Imports only `types`, `config` (for
ConfigError), `parallel` and `rng` (`contract` traces a user's environment on
a one-device mesh with a key of the run's kind) and `setup_warnings`.
"""

from purejaxdrl.env.base import (
    Box,
    Discrete,
    Env,
    EnvParams,
    EnvState,
    Wrapper,
    restart,
)
from purejaxdrl.env.gymnax_env import GymnaxEnv
from purejaxdrl.env.imports import import_modules
from purejaxdrl.env.normalization import (
    NormalizedParams,
    NormalizeObservation,
    RunningStatistics,
    init_statistics,
    normalize,
    update_statistics,
)
from purejaxdrl.env.registry import UnknownEnvironmentError, make, register, registered
from purejaxdrl.env.wrappers import EpisodeStatistics, EpisodeStatisticsState

__all__ = [
    "Box",
    "Discrete",
    "Env",
    "EnvParams",
    "EnvState",
    "EpisodeStatistics",
    "EpisodeStatisticsState",
    "GymnaxEnv",
    "NormalizeObservation",
    "NormalizedParams",
    "RunningStatistics",
    "UnknownEnvironmentError",
    "Wrapper",
    "import_modules",
    "init_statistics",
    "make",
    "normalize",
    "register",
    "registered",
    "restart",
    "update_statistics",
]
