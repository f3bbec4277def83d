"""What a PBT run is given, checked: its settings, members and explored fields.

PBT's flags in the sweep's field and range errors, the ready steps' settings
(`check_pbt_config`, `check_keep_buffer`), the note for a population that
will never exploit, and each member's starting config (`member_configs`).
"""

import dataclasses
import math
import numbers
from collections.abc import Mapping
from typing import Any

from purejaxdrl.agents.registry import algorithm
from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways, field_example, flag
from purejaxdrl.sweeps.fields import Wording
from purejaxdrl.sweeps.pbt.operators import (
    ExploredField,
    PBTConfig,
    bottom_count,
    least_population,
)
from purejaxdrl.sweeps.search import is_integer
from purejaxdrl.sweeps.spec import check_seed_count, make_plan
from purejaxdrl.training.config import TrainConfig, validate
from purejaxdrl.training.schedule import chunk_lengths

# The sweep's field and range errors, in PBT's inputs: members are one
# program (a static field cannot differ) and each has its own seed.
PBT_WORDING = Wording(
    sample="--explore",
    field="explore field",
    seed="member i trains with seed base.seed + i",
    static="PBT's members share one program; set a static field in the base config",
    # PBT has no grid, and the command line refuses a name given twice.
    twice="under two names",
)
# `purejaxdrl pbt`'s: the same inputs, named as its flags.
PBT_FLAGS = dataclasses.replace(
    PBT_WORDING,
    field="--explore field",
    seed="member i trains with seed --seed + i",
    static="PBT's members share one program; set a static field with --FIELD",
    command_line=True,
)


def _given(name: str, value: Any, wording: Wording) -> str:
    """A PBT setting as the caller gave it: `--pbt.quantile 0.7`, `quantile=0.7`."""
    if not wording.command_line:
        return f"{name}={value!r}"
    if isinstance(value, tuple | list):
        value = ",".join(map(str, value))
    option = "--population" if name == "population" else flag(f"pbt.{name}")
    return f"{option} {value}"


def check_pbt_config(
    config: PBTConfig, population: int, wording: Wording = PBT_WORDING
) -> None:
    """Raises ConfigError, naming the value and the rule, for bad PBT settings.

    The value is named as `wording`'s caller gave it (a flag or a keyword
    argument), the fix both ways.
    """
    rules = [
        (
            # 1 is refused below, with its own fix.
            is_integer(population) and (population >= 2 or population == 1),
            "population",
            population,
            "must be an integer >= 2; e.g. "
            f"{both_ways('--population', 'population', 8)}",
        ),
        (
            is_integer(config.ready) and config.ready >= 1,
            "ready",
            config.ready,
            f"must be >= 1 chunk between ready steps; e.g. {_ready(4)}",
        ),
        (
            0 < config.quantile <= 0.5,
            "quantile",
            config.quantile,
            "must be in (0, 0.5] (the bottom and top quantiles may not overlap); "
            f"e.g. {both_ways('--pbt.quantile', 'quantile', 0.25)}",
        ),
        (
            0 <= config.resample_probability <= 1,
            "resample_probability",
            config.resample_probability,
            "must be in [0, 1] (the chance a copied field is drawn afresh); e.g. "
            f"{both_ways('--pbt.resample-probability', 'resample_probability', 0.25)}",
        ),
        (
            _positive_factors(config.perturb),
            "perturb",
            config.perturb,
            "must be two finite positive factors; e.g. "
            f"{both_ways('--pbt.perturb', 'perturb', '0.8,1.25', (0.8, 1.25))}",
        ),
    ]
    for ok, name, value, rule in rules:
        if not ok:
            raise ConfigError(f"{_given(name, value, wording)} {rule}.")
    if population == 1:
        _refuse_a_lone_member(config, wording)


def _refuse_a_lone_member(config: PBTConfig, wording: Wording) -> None:
    """Refuses population 1, pointing to a sweep or a population that exploits.

    No population at all, at any quantile: always a mistake, and a run that
    exits 0 would hide it from a script (the note of a population too small
    for its quantile is only a warning: a larger quantile would exploit). A
    quantile out of range names the least population of the default's.
    """
    quantile = config.quantile if 0 < config.quantile <= 0.5 else 0.25
    least = least_population(quantile)
    raise ConfigError(
        f"{_given('population', 1, wording)} is no population: a lone member "
        "has no other to copy, "
        "so it trains as one sweep run; train a drawn setting with "
        "`purejaxdrl sweep --sample FIELD=... --samples 1` (pjd.sweep in "
        f"Python), or pass {both_ways('--population', 'population', least)} "
        "or more."
    )


def check_keep_buffer(
    config: PBTConfig, base: TrainConfig, wording: Wording = PBT_WORDING
) -> None:
    """Refuses keep_buffer for a learner that keeps no replay buffer.

    It would change nothing (`learner_mask` keeps only replay shards), and a
    flag that silently does nothing reads as if it worked. Named as
    `wording`'s caller gave it.
    """
    if config.keep_buffer and not algorithm(base.algo).keeps_replay(base.algo_config):
        given = "--pbt.keep-buffer" if wording.command_line else "keep_buffer=True"
        raise ConfigError(
            f"{given}: {base.algo} keeps no replay buffer in this config, so "
            "there is none to keep (members copy their parent's whole learner "
            f"state); drop {given}."
        )


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


def no_exploit_note(
    config: PBTConfig, population: int, num_updates: int, num_logs: int
) -> str | None:
    """Why no member of this population will ever copy another, or None.

    Valid (a population of 1 is the sweep run of its draw, a member never
    ready one too), but rarely meant. The run's chunks are
    `chunk_lengths(num_updates, num_logs)`; ready steps come after every
    `ready` of them but the last.
    """
    if bottom_count(config.quantile, population) < 1:
        least = least_population(config.quantile)
        return (
            f"pbt: population={population} with pbt.quantile={config.quantile} "
            "puts no member in the bottom quantile, so none will ever copy another "
            "(the members train as a sweep would); "
            f"{both_ways('--population', 'population', least)} or more exploits"
        )
    ready = config.ready
    chunks = len(chunk_lengths(num_updates, num_logs))
    if (chunks - 1) // ready >= 1:
        return None
    fixes = [f"pass at most {_ready(chunks - 1)}"] if chunks > 1 else []
    logs = _num_logs_for(ready, num_updates)
    if logs is not None:  # (fewer logs can make more chunks: "pass", not "raise")
        fixes.append(f"pass {field_example('num_logs', logs)}")
    elif num_updates == 1:
        fixes = [f"raise {field_example('total_steps', 'N')}: the run is one update"]
    elif chunks < num_updates:  # one chunk per update is the most there can be
        fixes.append(
            f"pass {field_example('num_logs', num_updates)} with "
            f"at most {_ready(num_updates - 1)}"
        )
    return (
        f"pbt: pbt.ready={ready} {_chunks(ready)} between ready steps, but the "
        f"run has {chunks} {_chunks(chunks)} (num_logs={num_logs}), so no ready "
        f"step comes (the members train as a sweep would); {'; or '.join(fixes)}"
    )


def unmoved_note(config: PBTConfig) -> str | None:
    """Why copied fields never move by a factor (`perturb` 1,1), or None.

    Valid (resampling still changes them, or copying alone is meant), but
    rarely meant: the explore step's perturbation is then a no-op.
    """
    if tuple(config.perturb) != (1.0, 1.0):
        return None
    return (
        f"pbt: {both_ways('--pbt.perturb', 'perturb', '1,1', (1.0, 1.0))} never "
        "moves a value: copied fields change only where they are drawn afresh "
        f"(--pbt.resample-probability, now {config.resample_probability:g}); "
        f"{both_ways('--pbt.perturb', 'perturb', '0.8,1.25', (0.8, 1.25))} moves them"
    )


def decay_notes(base: TrainConfig, fields: tuple[ExploredField, ...]) -> list[str]:
    """A note for each explored field the config decays over training.

    Such a field is the start of a schedule (learning_rate with `anneal_lr`,
    the annealed ε's epsilon_start, prioritised replay's beta_start): a value
    a ready step picks is scaled down by the part of the decay already gone,
    so a late one hardly matters, though the lineage reads as if it did.
    Valid, so a note, not an error; it names the flag that stops the decay
    where there is one.
    """
    config, algo = base.algo_config, base.algo
    notes = []
    for field in fields:
        path = f"{algo}.{field.name}"
        if field.name == "learning_rate" and getattr(config, "anneal_lr", False):
            notes.append(
                f"pbt: {algo}.anneal_lr is on, so the explored {path} is the peak "
                "of a linear decay to 0 over training, and a value a late ready "
                "step picks trains at a fraction of itself; "
                f"{flag(f'{algo}.anneal_lr')} false makes PBT's schedule the only one"
            )
        elif field.name == "epsilon_start" and _annealed_epsilon(config):
            notes.append(
                f"pbt: the explored {path} is where ε starts a linear decay to "
                "epsilon_end over the first epsilon_fraction of training, so a "
                "ready step's value acts less the later it comes, and not at all "
                "after that; explore epsilon_end for the ε of the rest"
            )
        elif field.name == "beta_start" and getattr(config, "prioritised", False):
            notes.append(
                f"pbt: the explored {path} is where β starts a linear rise to 1 "
                "over training, so a ready step's value acts less the later it "
                "comes"
            )
    return notes


def _annealed_epsilon(config: Any) -> bool:
    """Whether the config anneals one ε (not Ape-X's fixed per-actor ε_i)."""
    return hasattr(config, "epsilon_fraction") and not config.per_actor_epsilon


def _ready(n: int) -> str:
    """`--pbt.ready n (ready=n in Python)`: the flag and `pbt`'s argument."""
    return both_ways("--pbt.ready", "ready", n)


def _chunks(n: int) -> str:
    return "chunk" if n == 1 else "chunks"


def _num_logs_for(ready: int, num_updates: int) -> int | None:
    """A --num-logs whose schedule has more than `ready` chunks; None if none has.

    The least one, unless it is far off: `2 (ready + 1)` always has enough
    (`chunk_lengths` makes at least num_logs / 2 chunks, up to one per
    update), so that is the answer past a short search.
    """
    if num_updates <= ready:
        return None
    enough = min(2 * (ready + 1), num_updates)
    for logs in range(ready + 1, min(enough, ready + 64)):
        if len(chunk_lengths(num_updates, logs)) > ready:
            return logs
    return enough


def member_configs(
    base: TrainConfig,
    explore: Mapping[str, tuple[str, float, float]],
    population: int,
    search_seed: int,
    wording: Wording = PBT_WORDING,
) -> tuple[list[TrainConfig], tuple[ExploredField, ...]]:
    """Each member's starting config, and the explored fields with their spaces.

    Member i is draw i of the random search (`make_plan`'s, with
    `search_seed`) with seed base.seed + i: `sweep(base, sample=explore,
    num_samples=population, search_seed=...)`'s setting i. Errors name
    `explore` as `wording`'s caller gave it (`PBT_FLAGS`: the command line's).

    Raises:
      ConfigError: no explored field, a member seed outside [0, 2**32), or a
        field or range the sweep's `--sample` would refuse (in PBT's words).

    """
    if not explore:
        example = both_ways(
            "--explore",
            "explore",
            "learning_rate=loguniform:1e-5:1e-3",
            "{'learning_rate': ('loguniform', 1e-5, 1e-3)}",
        )
        raise ConfigError(f"PBT needs at least one explored field; e.g. {example}.")
    validate(base)  # its seed first: the members' seeds count from it
    check_seed_count(base.seed, population, "--population", "population")
    plan = make_plan(
        base,
        sample=explore,
        num_samples=population,
        search_seed=search_seed,
        wording=wording,
    )
    for field, name in zip(plan.fields, explore, strict=True):
        _check_not_start_only(base, field.path, wording.given("--explore", name))
    fields = tuple(
        ExploredField(field.path.split(".", 1)[1], kind, float(low), float(high))
        for field, (kind, low, high) in zip(plan.fields, explore.values(), strict=True)
    )
    configs = [
        dataclasses.replace(c, seed=base.seed + i) for i, c in enumerate(plan.configs)
    ]
    return configs, fields


def _check_not_start_only(base: TrainConfig, path: str, source: str) -> None:
    """Refuses a field its algorithm reads only when the learner starts.

    Such a field (`metadata["start_only"]`, e.g. SAC's init_alpha) seeds the
    learner state; a ready step's copy or perturbation of it changes nothing.
    `source` names it as the caller gave it (`--explore init_alpha`).
    """
    algo, name = path.split(".", 1)
    field = {f.name: f for f in dataclasses.fields(base.algo_config)}[name]
    if field.metadata.get("start_only"):
        raise ConfigError(
            f"{source}: {path} is read only when the learner starts (its "
            "state holds what it became), so a ready step could not change it; "
            f"explore another field, or sweep it (purejaxdrl sweep --sample "
            f"{name}=...)."
        )
