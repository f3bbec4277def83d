"""Environments: the Env interface, adapters, wrappers and the registry."""

from purejaxdrl.env.base import (
    Box,
    Discrete,
    Env,
    EnvParams,
    EnvState,
    Wrapper,
    restart,
)
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
    "NormalizeObservation",
    "NormalizedParams",
    "RunningStatistics",
    "UnknownEnvironmentError",
    "Wrapper",
    "init_statistics",
    "make",
    "normalize",
    "register",
    "registered",
    "restart",
    "update_statistics",
]
