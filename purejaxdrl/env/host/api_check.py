"""Gymnasium's API, checked on one environment of a pool when it is built.

A user's environment that breaks the contract (a `reset` without its info, a
`step` of Gym's old four values, an observation of another shape than its
space's, a reward that is an array) would fail inside Gymnasium's vector code
with a message that names neither the environment nor the method. One
environment's first `reset` and `step`, checked here once, name both, the
rule and the fix; nothing is checked per step.
"""

from typing import Any

import numpy as np

from purejaxdrl.config import ConfigError

STEP = "(obs, reward, terminated, truncated, info)"


def check_api(env: Any, seed: int, label: str) -> None:
    """Resets and steps `env` (a made Gymnasium env) once; closes it.

    The checks run on its unwrapped environment, the user's own class:
    Gymnasium's wrappers (TimeLimit, the passive checker) would fail on a
    broken result first, with their own message.

    Raises:
      ConfigError: a result that breaks Gymnasium's API, naming `label`
        (`gymnasium:<id>`), the method, the rule and the fix.

    """
    core = env.unwrapped
    try:
        result = core.reset(seed=seed)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise ConfigError(
                f"{label}: reset returned {_what(result)}, not (obs, info); "
                "Gymnasium's reset must return both: `return obs, {}` (an empty "
                "info dict where there is nothing to report)."
            )
        _check_obs(label, "reset", core.observation_space, result[0])
        _check_info(label, "reset", result[1])
        core.action_space.seed(seed)
        result = core.step(core.action_space.sample())
        _check_step(label, core.observation_space, result)
    finally:
        env.close()


def _check_step(label: str, space: Any, result: Any) -> None:
    if isinstance(result, tuple) and len(result) == 4:
        raise ConfigError(
            f"{label}: step returned 4 values, Gym's old (obs, reward, done, "
            f"info); Gymnasium's step returns 5, {STEP}: return `obs, reward, "
            "terminated, truncated, info`, truncated True only where a time "
            "limit ended the episode."
        )
    if not (isinstance(result, tuple) and len(result) == 5):
        raise ConfigError(
            f"{label}: step returned {_what(result)}, not the 5 values {STEP} "
            "Gymnasium's step must return."
        )
    obs, reward, terminated, truncated, info = result
    _check_obs(label, "step", space, obs)
    kind = np.asarray(reward).dtype.kind
    if np.ndim(reward) != 0 or kind not in "biuf":
        raise ConfigError(
            f"{label}: step's reward is {_what(reward)}, not a number; return "
            "one number per step, e.g. `float(reward)`."
        )
    for name, flag in (("terminated", terminated), ("truncated", truncated)):
        if np.ndim(flag) != 0 or np.asarray(flag).dtype.kind not in "biu":
            raise ConfigError(
                f"{label}: step's {name} is {_what(flag)}, not a bool; return "
                f"one bool per step, e.g. `bool({name})`."
            )
    _check_info(label, "step", info)


def _check_obs(label: str, method: str, space: Any, obs: Any) -> None:
    # Only a Box's shape: other spaces are flattened, and values outside a
    # Box's bounds are common and harmless to the networks.
    shape = getattr(space, "shape", None)
    if type(space).__name__ != "Box" or np.shape(obs) == shape:
        return
    raise ConfigError(
        f"{label}: {method}'s observation has shape {np.shape(obs)}, but its "
        f"observation_space {space} has shape {shape}; return observations of "
        "the space's shape, or declare the space with the shape returned."
    )


def _check_info(label: str, method: str, info: Any) -> None:
    if not isinstance(info, dict):
        raise ConfigError(
            f"{label}: {method}'s info is {_what(info)}, not a dict; return `{{}}` "
            "where there is nothing to report."
        )


def _what(value: Any) -> str:
    """`value` in a few words: its type, and its shape or length."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} ({value.dtype})"
    if isinstance(value, tuple | list):
        return f"a {type(value).__name__} of {len(value)} values"
    return f"{type(value).__name__} {value!r}"[:60]
