"""`pbt()`: population-based training, a sweep batch with ready steps between chunks."""

import dataclasses
import math
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from purejaxdrl.config import ConfigError
from purejaxdrl.observe.plots import RETURN
from purejaxdrl.parallel import SWEEP_AXIS, make_sweep_mesh
from purejaxdrl.rng import make_key
from purejaxdrl.sweeps import layout as sweep_layout
from purejaxdrl.sweeps.batch import record_chunk
from purejaxdrl.sweeps.compiled import Programs, make_programs, stack_hps
from purejaxdrl.sweeps.lineage import PBTResult, ReadyStep, write_pbt
from purejaxdrl.sweeps.messages import gib, layout_lines, progress_line
from purejaxdrl.sweeps.pbt_operators import (
    ExploredField,
    PBTConfig,
    ready_step,
    recent_return,
)
from purejaxdrl.sweeps.pbt_plot import plot_pbt
from purejaxdrl.sweeps.program import _base_and_target, _messenger
from purejaxdrl.sweeps.spec import make_plan
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.loop import pipelined
from purejaxdrl.training.schedule import chunk_lengths

_RETURN_SUM, _COUNT = "episode/return_sum", "episode/count"


def check_pbt_config(config: PBTConfig, population: int) -> None:
    """Raises ConfigError, naming the value and the rule, for bad PBT settings."""
    rules = [
        (population >= 1, f"population={population} must be >= 1; e.g. --population 8"),
        (config.ready >= 1, f"pbt.ready={config.ready} must be >= 1 chunk"),
        (
            0 < config.quantile <= 0.5,
            f"pbt.quantile={config.quantile} must be in (0, 0.5] (the bottom "
            "and top quantiles may not overlap); e.g. 0.25",
        ),
        (
            0 <= config.resample_probability <= 1,
            f"pbt.resample_probability={config.resample_probability} must be in [0, 1]",
        ),
        (
            len(config.perturb) == 2 and min(config.perturb) > 0,
            f"pbt.perturb={config.perturb} must be two positive factors; e.g. "
            "(0.8, 1.25)",
        ),
    ]
    for ok, message in rules:
        if not ok:
            raise ConfigError(message + ".")


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
      ConfigError: no explored field, or a field or range the sweep's
        `--sample` would refuse (named as `--explore`).

    """
    if not explore:
        raise ConfigError(
            "PBT needs at least one explored field; e.g. --explore "
            "learning_rate=loguniform:1e-5:1e-3."
        )
    try:
        plan = make_plan(
            base, sample=explore, num_samples=population, search_seed=search_seed
        )
    except ConfigError as e:
        raise ConfigError(str(e).replace("--sample", "--explore")) from None
    fields = tuple(
        ExploredField(field.path.split(".", 1)[1], kind, float(low), float(high))
        for field, (kind, low, high) in zip(plan.fields, explore.values(), strict=True)
    )
    configs = [
        dataclasses.replace(c, seed=base.seed + i) for i, c in enumerate(plan.configs)
    ]
    return configs, fields


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
) -> PBTResult:
    """Population-based training (Jaderberg et al., 2017) in one compiled program.

    The population trains as one sweep batch (`compiled.make_programs`: members
    vmapped and split over the devices). Every `ready` chunks a jitted ready
    step ranks the members by the mean return of the episodes that ended since
    the last one; each of the bottom `quantile` copies the learner state and
    configs of a random member of the top `quantile` (`pbt_operators.learner_mask`: its
    environments and key stay its own) and perturbs the explored fields
    (`pbt_operators.explore`). Nothing leaves the device but metrics and the lineage.

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
      write_files: write a PBT directory under `base.run_dir` (`write_pbt`).
      device_memory: bytes per device it may use (default: estimated).
      notify: called with each message.

    Returns:
      A PBTResult: members' records and final parameters, and the lineage.

    Raises:
      ConfigError: bad fields, ranges or settings, or a population that does
        not fit in memory (nothing has trained yet).

    """
    base, target_return = _base_and_target(base, algo, target_return)
    config = PBTConfig(
        ready, quantile, resample_probability, tuple(perturb), keep_buffer
    )
    check_pbt_config(config, population)
    configs, fields = member_configs(base, explore, population, search_seed)
    messages, say = _messenger(notify)
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
        messages=messages,
    )
    _train_population(result, configs, search_seed, device_memory, say, notify)
    if write_files:
        path = write_pbt(result)
        plot_pbt(result, path / "schedules.png")
        say(f"pbt: results in {path}")
    return result


def _fit_population(
    result: PBTResult, cfg: TrainConfig, device_memory: int | None
) -> tuple[Programs, jax.sharding.Mesh, int, list[str]]:
    """The population's programs, mesh, padded size and layout lines.

    Raises:
      ConfigError: when the members do not fit in memory together. Sweeps
        train such runs in batches one after another, but a ready step
        compares and copies every member at the same update, so PBT would
        have to swap members' states through the host at each one: refused.

    """
    n = result.population
    shape = sweep_layout.group_mesh_shape(n, cfg)
    mesh = make_sweep_mesh(*shape)
    programs = make_programs(cfg, mesh)
    layout, source = sweep_layout.group_layout(
        n, shape, programs.state_shapes, cfg, device_memory, programs.specs
    )
    if layout.num_batches > 1:
        fit = layout.device_bytes // max(layout.run_bytes, 1) * layout.sweep
        raise ConfigError(
            f"population={n} needs ~{gib(layout.run_bytes * n / layout.sweep)} "
            f"per device, more than the {gib(layout.device_bytes)} of {source} "
            "available, and PBT needs every member in memory at each ready "
            f"step: lower --population to {fit} or fewer, or num_envs or the "
            "replay size, or use more devices."
        )
    lines = layout_lines("", n, layout, source, jax.default_backend())
    lines = [
        line.replace("sweep:", "pbt:", 1).replace(" run", " member") for line in lines
    ]
    return programs, mesh, layout.batch_size, lines


def _ready_program(
    programs: Programs,
    fields: tuple[ExploredField, ...],
    num_members: int,
    config: PBTConfig,
    shardings: tuple[Any, Any],
) -> Callable:
    """The jitted ready step, configs and states keeping their shardings.

    (key, hps, states, return sums, counts) -> (hps, states, parents, scores).
    Donates the states (as a chunk does); the configs are kept, because the
    host reads a ready step's values after the next one ran.
    """

    def step(key, hps, states, return_sum, count):
        scores = recent_return(return_sum, count)
        hps, states, parents = ready_step(
            key,
            hps,
            states,
            scores,
            agent_spec=programs.specs.agent,
            fields=fields,
            num_members=num_members,
            config=config,
        )
        return hps, states, parents, scores

    return jax.jit(step, out_shardings=(*shardings, None, None), donate_argnums=2)


def _train_population(
    result: PBTResult,
    configs: list[TrainConfig],
    search_seed: int,
    device_memory: int | None,
    say: Callable[[str], None],
    progress: Callable[[str], None] | None,
) -> None:
    """Builds, compiles and trains the population; fills `result`."""
    start = time.perf_counter()
    cfg, n = configs[0], result.population
    programs, mesh, size, lines = _fit_population(result, cfg, device_memory)
    for line in lines:
        say(line)
    members = NamedSharding(mesh, P(SWEEP_AXIS))
    padded = configs + [configs[-1]] * (size - n)
    hps = jax.device_put(stack_hps(padded), members)
    keys = jnp.stack([make_key(c.seed, c.rng_impl) for c in padded])
    states = programs.init(hps, keys)
    result.lineage.append(_start_step(result, hps))
    schedule = chunk_lengths(cfg.num_updates, cfg.num_logs)
    chunks = {
        length: programs.chunk(length).lower(hps, states).compile()
        for length in sorted(set(schedule))
    }
    shardings = jax.tree.map(lambda x: x.sharding, (hps, states))
    ready = _ready_program(programs, result.fields, n, result.config, shardings)
    zeros = jax.device_put(np.zeros(size, np.float32), members)
    accumulate = jax.jit(_accumulate, out_shardings=(members, members))
    pbt_key = make_key(search_seed, cfg.rng_impl)
    jax.block_until_ready(states)
    begin = time.perf_counter()
    result.compile_seconds = begin - start

    def dispatched() -> Iterator[tuple[Any, int, int, Any]]:
        nonlocal hps, states
        window, ends_at = (zeros, zeros), 0
        for k, length in enumerate(schedule):
            ends_at += length
            states, metrics = chunks[length](hps, states)
            if _RETURN_SUM not in metrics:
                raise ConfigError(
                    "PBT ranks members by their episodes' returns, and this "
                    "environment reports none (no EpisodeStatistics)."
                )
            window = accumulate(window, metrics[_RETURN_SUM], metrics[_COUNT])
            step = None
            if (k + 1) % result.config.ready == 0 and k + 1 < len(schedule):
                key = jax.random.fold_in(pbt_key, k)
                hps, states, parents, scores = ready(key, hps, states, *window)
                window = (zeros, zeros)
                step = (ends_at, parents, scores, _explored(result, hps))
            yield metrics, length, ends_at, step

    def finish(item: tuple[Any, int, int, Any]) -> None:
        metrics, length, ends_at, step = item
        host = jax.device_get(metrics)
        elapsed = time.perf_counter() - begin
        record_chunk(result, range(n), host, length, ends_at, elapsed, cfg)
        if step is not None:
            _record_ready(result, jax.device_get(step), say)
        if progress is not None:
            returns = [result.histories[i][-1].get(RETURN, math.nan) for i in range(n)]
            sps = ends_at * cfg.steps_per_update * n / elapsed
            line = progress_line(returns, ends_at, cfg.num_updates, sps)
            progress(line.replace("sweep:", "pbt:", 1).replace(" runs", " members"))

    pipelined(dispatched(), finish)
    params = jax.device_get(states.agent.params)
    result.final_params = [jax.tree.map(lambda x, i=i: x[i], params) for i in range(n)]
    result.train_seconds = time.perf_counter() - begin


def _accumulate(
    window: tuple[jax.Array, jax.Array], return_sum: jax.Array, count: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """Adds a chunk's episode sums [R, length] to the window's [R]."""
    return window[0] + return_sum.sum(axis=1), window[1] + count.sum(axis=1)


def _explored(result: PBTResult, hps: Any) -> dict[str, jax.Array]:
    return {f.name: getattr(hps, f.name) for f in result.fields}


def _start_step(result: PBTResult, hps: Any) -> ReadyStep:
    n = result.population
    values = jax.device_get(_explored(result, hps))
    return ReadyStep(
        updates=0,
        parents=tuple(range(n)),
        scores=(math.nan,) * n,
        values={k: tuple(float(x) for x in v[:n]) for k, v in values.items()},
    )


def _record_ready(
    result: PBTResult, step: tuple[int, Any, Any, Any], say: Callable[[str], None]
) -> None:
    """Appends a ready step (read on the host) to the lineage and says it."""
    ends_at, parents, scores, values = step
    n = result.population
    ready = ReadyStep(
        updates=int(ends_at),
        parents=tuple(int(p) for p in parents[:n]),
        scores=tuple(float(s) for s in scores[:n]),
        values={k: tuple(float(x) for x in v[:n]) for k, v in values.items()},
    )
    result.lineage.append(ready)
    copied = [f"{i}<-{p}" for i, p in enumerate(ready.parents) if p != i]
    say(
        f"pbt: update {ready.updates}: "
        + (
            f"members copied (member<-parent) {', '.join(copied)}"
            if copied
            else "no member copied"
        )
    )
