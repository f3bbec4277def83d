"""The policy of a sweep's or a population's run, as `purejaxdrl export` writes one."""

import pathlib
from typing import Any

from purejaxdrl.env.specs import action_bounds
from purejaxdrl.sweeps.result import SweepResult
from purejaxdrl.sweeps.spec import checked_index
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.policy.exported import check_policy_folder, write_policy
from purejaxdrl.training.policy.record import PolicySource
from purejaxdrl.training.run_env import make_env


def best_run(result: SweepResult) -> int | None:
    """The run of the best setting (`result.best`) with the highest final return.

    None when none of its runs ended with a finite return (all diverged, or
    none ended an episode): there is no policy worth writing. The same as
    `result.best_run`.

    Args:
      result: a sweep's result (`pjd.sweep`'s, or `load_sweep`'s).

    """
    return result.best_run


def write_run_policy(
    config: TrainConfig, params: Any, stats: Any, out: pathlib.Path
) -> pathlib.Path:
    """Writes the policy of a run trained with `config` (`load_policy(out)`)."""
    env, env_params = make_env(config)
    specs = (env.observation_spec(env_params), env.action_spec(env_params))
    source = PolicySource(
        config, params, stats, config.num_updates, specs,
        action_bounds=action_bounds(env, env_params),
    )  # fmt: skip
    return write_policy(out, source)


def export_run(
    result: SweepResult, run: int, out: str | pathlib.Path, *, overwrite: bool = False
) -> pathlib.Path:
    """Writes sweep run `run`'s policy to `out`, with its observation statistics.

    `pjd.load_policy(out)` loads it; `purejaxdrl sweep` writes the best run's
    into the sweep directory's `policy/`. A policy already in `out` is
    replaced only with `overwrite`.

    Args:
      result: a sweep's result (`pjd.sweep`'s, or `load_sweep`'s).
      run: the run's index, in [0, runs) (`best_run(result)`: the best one).
      out: the folder to write (made if missing).
      overwrite: replace a policy already in `out`.

    Returns:
      `out`, as a Path.

    Raises:
      IndexError: `run` is not one of the sweep's runs.
      ConfigError: `out` is a file or a run directory, or already holds a
        policy and `overwrite` is False.

    """
    run = checked_index(run, len(result.histories), "run")
    check_policy_folder(pathlib.Path(out), overwrite, "out")
    config = result.plan.run_config(run)
    return write_run_policy(
        config, result.params(run), result.stats(run), pathlib.Path(out)
    )
