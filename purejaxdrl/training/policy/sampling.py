"""How an exported policy samples: its algorithm record's say, checked.

The record's `policy_extras` says what policy.json keeps for sampling (a
Q-learner's ε), its `exported_sampler` how `act` samples the acting network's
output (a Q-learner: ε-greedy; default: the distribution's own sample). The
library asks the record, never the config's type: a user's Q-learner explores
as its record says. A user's record gets a one-line error naming the field
where what it returns cannot serve.
"""

import json
from collections.abc import Callable, Mapping
from typing import Any

import jax

from purejaxdrl.agents.base import Algorithm, RunShape
from purejaxdrl.config import ConfigError
from purejaxdrl.rl.distributions import Distribution
from purejaxdrl.types import PRNGKey


def policy_extras(
    record: Algorithm, config: Any, updates: int, spec: dict[str, Any]
) -> dict[str, Any]:
    """What `record.policy_extras` adds to policy.json `spec`, checked.

    Args:
      record: the run's algorithm.
      config: the run's TrainConfig.
      updates: updates done.
      spec: policy.json's contents so far, whose keys the extras may not take.

    Raises:
      ConfigError: the extras are no dict, take a key of policy.json's own,
        or hold what JSON cannot.

    """
    shape = RunShape(num_envs=config.num_envs, num_updates=config.num_updates)
    extras = record.policy_extras(config.algo_config, shape, updates)
    field = f"Algorithm {record.name!r}: policy_extras"
    if not isinstance(extras, Mapping):
        raise ConfigError(
            f"{field} returned {type(extras).__name__}, but it must return a dict "
            "for policy.json, e.g. {'epsilon': 0.05}; {} for nothing."
        )
    taken = sorted(set(extras) & set(spec))
    if taken:
        raise ConfigError(
            f"{field} returned the key {taken[0]!r}, which policy.json holds "
            f"already; name it otherwise, e.g. {record.name + '_' + taken[0]!r}."
        )
    try:
        json.dumps(dict(extras))
    except (TypeError, ValueError) as e:
        raise ConfigError(
            f"{field} returned {dict(extras)!r}, which policy.json cannot hold "
            f"({e}); return numbers (float(x) of an array), strings, lists, dicts."
        ) from None
    return dict(extras)


def exported_sampler(
    record: Algorithm, section: Any, spec: dict[str, Any], dist: Distribution
) -> Callable[[jax.Array, PRNGKey], jax.Array]:
    """`record.exported_sampler`'s `sample(output, key) -> action`, checked.

    Raises:
      ConfigError: it returned no function.

    """
    sample = record.exported_sampler(section, spec, dist)
    if not callable(sample):
        raise ConfigError(
            f"Algorithm {record.name!r}: exported_sampler returned "
            f"{type(sample).__name__}, but it must return a function "
            "sample(output, key) -> action, e.g. distribution.sample."
        )
    return sample
