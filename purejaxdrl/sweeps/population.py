"""`pbt()`: population-based training, a sweep batch with ready steps between chunks."""

import dataclasses
import math
import numbers
import pathlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.sweeps.batch import SweepStopped
from purejaxdrl.sweeps.best_policy import write_run_policy
from purejaxdrl.sweeps.fields import Wording
from purejaxdrl.sweeps.inputs import (
    base_and_target,
    check_device_memory,
    messenger,
    running_meta,
    shown,
)
from purejaxdrl.sweeps.lineage import (
    PBTResult,
    finish_pbt,
    read_pbt_meta,
    start_pbt_dir,
    write_pbt_files,
)
from purejaxdrl.sweeps.pbt_layout import Fitted, fit_population
from purejaxdrl.sweeps.pbt_operators import (
    ExploredField,
    PBTConfig,
)
from purejaxdrl.sweeps.pbt_plot import plot_pbt
from purejaxdrl.sweeps.pbt_train import train_population
from purejaxdrl.sweeps.search import is_integer
from purejaxdrl.sweeps.spec import check_seed_count, make_plan
from purejaxdrl.training.config import TrainConfig, validate
from purejaxdrl.training.run_files import holding_run_dir
from purejaxdrl.training.schedule import chunk_lengths

# The sweep's field and range errors, in PBT's flags: members are one
# program (a static field cannot differ) and each has its own seed.
_PBT_WORDING = Wording(
    sample="--explore",
    field="--explore field",
    seed="member i trains with seed --seed + i",
    static="PBT's members share one program; set a static field with --FIELD",
)


def check_pbt_config(config: PBTConfig, population: int) -> None:
    """Raises ConfigError, naming the value and the rule, for bad PBT settings."""
    rules = [
        (
            is_integer(population) and population >= 1,
            f"population={population!r} must be an integer >= 1; e.g. --population 8",
        ),
        (
            is_integer(config.ready) and config.ready >= 1,
            f"pbt.ready={config.ready} must be >= 1 chunk between ready steps; "
            "e.g. --pbt.ready 4",
        ),
        (
            0 < config.quantile <= 0.5,
            f"pbt.quantile={config.quantile} must be in (0, 0.5] (the bottom "
            "and top quantiles may not overlap); e.g. 0.25",
        ),
        (
            0 <= config.resample_probability <= 1,
            f"pbt.resample_probability={config.resample_probability} must be in "
            "[0, 1] (the chance a copied field is drawn afresh); e.g. 0.25",
        ),
        (
            _positive_factors(config.perturb),
            f"pbt.perturb={config.perturb!r} must be two finite positive factors; "
            "e.g. (0.8, 1.25)",
        ),
    ]
    for ok, message in rules:
        if not ok:
            raise ConfigError(message + ".")


def _positive_factors(perturb: Any) -> bool:
    """Whether `perturb` is two finite numbers > 0 (NaN compares False)."""
    if not isinstance(perturb, tuple | list) or len(perturb) != 2:
        return False
    return all(
        isinstance(x, numbers.Real)
        and not isinstance(x, bool)
        and math.isfinite(x)
        and x > 0
        for x in perturb
    )


def no_exploit_note(config: PBTConfig, population: int, chunks: int) -> str | None:
    """Why no member of this population will ever copy another, or None.

    Valid (a population of 1 is the sweep run of its draw, a member never
    ready one too), but rarely meant. `chunks`: the run's chunk count; ready
    steps come after every `ready` of them but the last.
    """
    if int(config.quantile * population + 1e-9) < 1:  # exploit's k
        least = math.ceil(1 / config.quantile - 1e-9)
        return (
            f"pbt: population={population} with pbt.quantile={config.quantile} "
            "puts no member in the bottom quantile, so none will ever copy another "
            f"(the members train as a sweep would); --population {least} or more "
            "exploits"
        )
    if (chunks - 1) // config.ready < 1:
        return (
            f"pbt: pbt.ready={config.ready} chunks between ready steps, but the run "
            f"has {chunks} chunks (num_logs), so no ready step comes (the members "
            f"train as a sweep would); lower --pbt.ready below {chunks} or raise "
            "--num-logs"
        )
    return None


def member_configs(
    base: TrainConfig,
    explore: Mapping[str, tuple[str, float, float]],
    population: int,
    search_seed: int,
) -> tuple[list[TrainConfig], tuple[ExploredField, ...]]:
    """Each member's starting config, and the explored fields with their spaces.

    Member i is draw i of the random search (`make_plan`'s, with
    `search_seed`) with seed base.seed + i: `sweep(base, sample=explore,
    num_samples=population, search_seed=...)`'s setting i.

    Raises:
      ConfigError: no explored field, a member seed outside [0, 2**32), or a
        field or range the sweep's `--sample` would refuse (in PBT's words).

    """
    if not explore:
        raise ConfigError(
            "PBT needs at least one explored field; e.g. --explore "
            "learning_rate=loguniform:1e-5:1e-3."
        )
    validate(base)  # its seed first: the members' seeds count from it
    check_seed_count(base.seed, population, "--population")
    plan = make_plan(
        base,
        sample=explore,
        num_samples=population,
        search_seed=search_seed,
        wording=_PBT_WORDING,
    )
    for field in plan.fields:
        _check_not_start_only(base, field.path)
    fields = tuple(
        ExploredField(field.path.split(".", 1)[1], kind, float(low), float(high))
        for field, (kind, low, high) in zip(plan.fields, explore.values(), strict=True)
    )
    configs = [
        dataclasses.replace(c, seed=base.seed + i) for i, c in enumerate(plan.configs)
    ]
    return configs, fields


def _check_not_start_only(base: TrainConfig, path: str) -> None:
    """Refuses a field its algorithm reads only when the learner starts.

    Such a field (`metadata["start_only"]`, e.g. SAC's init_alpha) seeds the
    learner state; a ready step's copy or perturbation of it changes nothing.
    """
    algo, name = path.split(".", 1)
    field = {f.name: f for f in dataclasses.fields(base.algo_config)}[name]
    if field.metadata.get("start_only"):
        raise ConfigError(
            f"--explore {name}: {path} is read only when the learner starts (its "
            "state holds what it became), so a ready step could not change it; "
            f"explore another field, or sweep it (purejaxdrl sweep --sample "
            f"{name}=...)."
        )


def pbt(
    base: TrainConfig | str,
    *,
    explore: Mapping[str, tuple[str, float, float]],
    population: int,
    algo: str | None = None,
    ready: int = 4,
    quantile: float = 0.25,
    resample_probability: float = 0.25,
    perturb: tuple[float, float] = (0.8, 1.25),
    keep_buffer: bool = False,
    search_seed: int = 0,
    target_return: float | None = None,
    write_files: bool = False,
    device_memory: int | None = None,
    notify: Callable[[str], None] | None = None,
    console: bool = True,
) -> PBTResult:
    """Population-based training (Jaderberg et al., 2017) in one compiled program.

    The population trains as one sweep batch (`compiled.make_programs`: members
    vmapped and split over the devices). Every `ready` chunks a jitted ready
    step ranks the members by the mean return of the episodes that ended since
    the last one; each of the bottom `quantile` copies the learner state and
    configs of a random member of the top `quantile`
    (`pbt_operators.learner_mask`: its environments and key stay its own) and
    perturbs the explored fields (`pbt_operators.explore`). Nothing leaves the
    device but metrics and the lineage. With files, the population is
    checkpointed after ready steps (`checkpoint.every` of them) and
    `resume_pbt` continues a stopped run exactly.

    Args:
      base: a TrainConfig, or a preset name whose `algo` section is the base.
      explore: field -> (`loguniform` | `uniform`, low, high): the dynamic
        fields explored and their spaces; members start from draws of them.
      population: members (all must fit in memory at once).
      algo: with a preset name, the algorithm (default ppo).
      ready: chunks (of `num_logs`' schedule) between ready steps.
      quantile: share of members exploited, and of those they copy.
      resample_probability: chance a copied field is drawn afresh.
      perturb: the two factors a copied field is multiplied by otherwise.
      keep_buffer: replay learners keep their own replay data.
      search_seed: seeds the initial draws and the ready steps' choices.
      target_return: the score final returns are judged against (a preset's
        by default).
      write_files: write a PBT directory under `base.run_dir` (`write_pbt`),
        with checkpoints while it trains.
      device_memory: bytes per device it may use (default: estimated).
      notify: called with each message.
      console: without `notify`, print the messages and progress lines (as
        `pjd.train` shows its progress); False: silent.

    Returns:
      A PBTResult: members' records and final parameters, and the lineage.

    Raises:
      ConfigError: bad fields, ranges or settings, or a population that does
        not fit in memory (nothing has trained yet).

    """
    base, target_return = base_and_target(base, algo, target_return)
    check_device_memory(device_memory)
    config = PBTConfig(
        ready,
        quantile,
        resample_probability,
        tuple(perturb) if isinstance(perturb, tuple | list) else perturb,
        keep_buffer,
    )
    check_pbt_config(config, population)
    configs, fields = member_configs(base, explore, population, search_seed)
    notify = shown(notify, console)
    messages, say = messenger(notify)
    chunks = len(chunk_lengths(base.num_updates, base.num_logs))
    note = no_exploit_note(config, population, chunks)
    if note is not None:
        say(note)
    result = PBTResult(
        base=base,
        fields=fields,
        config=config,
        population=population,
        histories=[[] for _ in range(population)],
        diverged=[None] * population,
        lineage=[],
        final_params=[None] * population,
        target_return=target_return,
        search_seed=search_seed,
        messages=messages,
    )
    # Laid out before its directory exists: one that does not fit leaves none.
    fitted = fit_population(result, configs[0], device_memory)
    if write_files:
        path = start_pbt_dir(result)
        say(
            f"pbt: writing {path} (if stopped, `purejaxdrl pbt --resume {path}` "
            "continues it)"
        )
    return _train(result, configs, fitted, say, notify)


def resume_pbt(
    path: str | pathlib.Path,
    *,
    device_memory: int | None = None,
    notify: Callable[[str], None] | None = None,
    console: bool = True,
) -> PBTResult:
    """Continues a PBT run that was stopped (killed, or its machine lost).

    It restarts from the newest checkpoint (taken after a ready step; from
    the start if there is none) and ends with the parameters, records and
    lineage of the run straight through.

    Args:
      path: the PBT directory (`pbt(..., write_files=True)`).
      device_memory: as `pbt`'s.
      notify: called with each message.
      console: without `notify`, print the messages and progress lines (as
        `pjd.train` shows its progress); False: silent.

    Raises:
      ConfigError: not a PBT directory, or a finished one.

    """
    path = pathlib.Path(path)
    running_meta(path, "pbt", "PBT run", "writing DIR", "lineage.csv")
    result = read_pbt_meta(path)
    notify = shown(notify, console)
    messages, say = messenger(notify)
    result.messages = messages
    explore = {f.name: (f.kind, f.low, f.high) for f in result.fields}
    configs, _ = member_configs(
        result.base, explore, result.population, result.search_seed
    )
    say(f"pbt: resuming {path}")
    fitted = fit_population(result, configs[0], device_memory)
    return _train(result, configs, fitted, say, notify)


@holding_run_dir  # one process trains a PBT directory at a time
def _train(
    result: PBTResult,
    configs: list[TrainConfig],
    fitted: Fitted,
    say: Callable[[str], None],
    progress: Callable[[str], None] | None,
) -> PBTResult:
    """Trains the population, then writes its directory (if it has one).

    `pbt.yaml` is marked finished only once every result is written
    (`finish_pbt`): a run killed before that resumes and writes them again.

    Raises:
      SweepStopped: a signal stopped it, saved; the message says how to
        continue.

    """
    try:
        train_population(result, configs, fitted, say, progress)
    except SweepStopped as e:
        raise SweepStopped(
            f"{e}; continue with: purejaxdrl pbt --resume {result.run_dir}"
        ) from None
    for member, at in enumerate(result.diverged):
        if at is not None:
            say(
                f"pbt: member {member} diverged at update {at} (a metric turned "
                "NaN or infinite) and no ready step replaced it since: its final "
                "return is not counted"
            )
    if result.run_dir is not None:
        path = write_pbt_files(result)
        plot_pbt(result, path / "schedules.png")
        policy = not np.isnan(result.final_return).all()  # else nothing to act
        if policy:
            export_best(result, path / "policy")
        finish_pbt(result)  # the last thing written
        if policy:
            say(
                f"pbt: results in {path}; the best member's policy in {path / 'policy'}"
            )
        else:
            say(f"pbt: results in {path}; no member ended with a finite return, so "
                "no policy is written")  # fmt: skip
    return result


def export_best(result: PBTResult, out: pathlib.Path) -> pathlib.Path:
    """Writes the best member's policy as `purejaxdrl export` writes a run's.

    Its config is the base with the best member's seed and final explored
    values; `pjd.load_policy(out)` loads it.
    """
    best, final = result.best, result.lineage[-1]
    section = dataclasses.replace(
        result.base.algo_config,
        **{name: values[best] for name, values in final.values.items()},
    )
    config = dataclasses.replace(
        result.base, seed=result.base.seed + best, **{result.base.algo: section}
    )
    stats = result.final_stats[best] if result.final_stats else None
    return write_run_policy(config, result.params(best), stats, out)
