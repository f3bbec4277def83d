"""How many devices a run takes, and why: the rules each count must meet.

`choose_devices` takes the most devices per process that the run fits (or
the count it was given), with a note naming what kept the others idle;
`check_requested` holds a requested count to the same rules, naming the
counts that fit. Both judge a count with a raiser (`experiment.check_fits`,
which builds the agent on it), whose message's first clause is the rule.
`check_split` is the rules on each device's share: the algorithm's own, then
its record's env multiple (`run_rules.check_env_multiple`, which `validate`
also holds `num_envs` to before devices are chosen).
"""

from collections.abc import Callable

import jax

from purejaxdrl.agents.registry import algorithm
from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways
from purejaxdrl.parallel import fewest_local_devices
from purejaxdrl.training.config import TrainConfig, run_shape
from purejaxdrl.training.run_rules import check_env_multiple


def choose_devices(
    requested: int,
    fits: Callable[[int], None],
    available: int | None = None,
    what: str = "using",
    flags: tuple[str, str] = ("--devices", "devices"),
) -> tuple[int, str | None]:
    """The devices per process to train on, and a line saying why, if fewer.

    `requested` (`config.devices`) when set: it keeps its own clear error
    if the run does not fit it (`parallel.per_device`; the host-env
    learner's count is held to `fits` first, by `check_requested`). Else
    the most of the `available` devices (default: every local one) that the
    run fits (`fits(n)` raises ValueError or ConfigError when it does not),
    with a note naming what kept the others idle; all of them when none
    fits (the error then comes where the run is built). `what` starts the
    note; `flags` are the option it names and its config field.
    """
    if requested:
        return requested, None
    local = available or fewest_local_devices()  # what every process has
    reason = None
    for n in range(local, 0, -1):
        if (refused := _refusal(fits, n)) is not None:
            reason = reason or refused
            continue
        if n == local:
            return n, None
        flag, python = flags
        return n, (
            f"{what} {n} of {local} {jax.default_backend()} devices: {reason}; "
            f"pass {flag} N to choose ({python}=N in Python)."
        )
    return local, None


def check_requested(
    requested: int,
    fits: Callable[[int], None],
    available: int,
    flags: tuple[str, str],
) -> None:
    """That the run fits `requested` devices per process, as `fits` judges.

    Raises:
      ConfigError: naming the rule it breaks and the counts up to
        `available` that fit (`flags`: the option and its config field).

    """
    if (reason := _refusal(fits, requested)) is None:
        return
    counts = [
        n
        for n in range(available, 0, -1)
        if n != requested and _refusal(fits, n) is None
    ]
    flag, python = flags
    fix = f"no count of 1 to {available} fits either: change what it names"
    if counts:
        listed = " or ".join(map(str, counts))
        fix = f"pass {both_ways(flag, python, listed)}, or 0 to let the run choose"
    raise ConfigError(f"{python}={requested} does not fit the run: {reason}; {fix}.")


def _refusal(fits: Callable[[int], None], n: int) -> str | None:
    """Why the run does not fit `n` devices per process (its rule); None if it does."""
    try:
        fits(n)
    except (ValueError, ConfigError) as e:
        return str(e).split(";")[0].rstrip(".")
    return None


def check_split(
    config: TrainConfig,
    devices: int,
    flags: tuple[str, str] = ("--devices", "devices"),
) -> None:
    """The rules on each device's share of `config`'s run on `devices` devices.

    `devices` counts every process's. The algorithm's own rules first (PPO's
    minibatches say why they need their multiple), then its record's
    multiple (`run_rules.check_env_multiple`), whose fix names `flags` (the
    option setting devices per process, and its config field). PPO's own line
    names `--devices`; on the host path it is not met here
    (`experiment.check_fits` holds the learner's count to it first, and a
    count that fails at one device per process offers no fewer).

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    record = algorithm(config.algo)
    shape = run_shape(config)._replace(num_devices=devices)
    record.validate(config.algo_config, shape)
    check_env_multiple(config, record, shape, *flags)
