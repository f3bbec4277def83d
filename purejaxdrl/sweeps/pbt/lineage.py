"""A PBT run's results: members' records, the lineage, and reading its files."""

import dataclasses
import json
import math
import pathlib
from typing import Any

import flax.serialization
import numpy as np
import yaml

from purejaxdrl.config import ConfigError
from purejaxdrl.observe.numbers import return_text
from purejaxdrl.observe.plots import RETURN, read_history, unfinished
from purejaxdrl.observe.records import present, reading, restore_or_restart
from purejaxdrl.sweeps.pbt.operators import ExploredField, PBTConfig, bottom_count
from purejaxdrl.sweeps.run_files import read_run_stats, saved_config
from purejaxdrl.sweeps.spec import checked_index
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.types import Params


@dataclasses.dataclass(frozen=True)
class ReadyStep:
    """What the population did at one ready step (or at the start).

    Attributes:
      updates: updates done when it happened (0: the start).
      parents: per member, whose learner state it continues from (itself
        when it kept its own).
      scores: per member, the recent return it was ranked by (NaN: no episode
        ended in its window; NaN for all at the start).
      values: explored field -> per member, its value from this step on.

    """

    updates: int
    parents: tuple[int, ...]
    scores: tuple[float, ...]
    values: dict[str, tuple[float, ...]]


@dataclasses.dataclass
class PBTResult:
    """What population-based training reports.

    Attributes:
      base: the config every member starts from (but for explored fields and
        its seed: member i has seed base.seed + i).
      fields: the explored fields and their spaces.
      config: ready interval, quantile, probabilities, factors.
      population: members.
      histories: per member, one record per chunk (as a run's metrics.jsonl);
        a member's record continues the state it copied at a ready step.
      diverged: per member, the update at which a metric became non-finite.
      lineage: the start and every ready step, in order (`ReadyStep`).
      final_params: per member, its final network parameters (host arrays);
        None when loaded from disk (`params` reads them).
      final_stats: per member, its observation statistics where the
        environment normalises them (host arrays; None when loaded from disk,
        read on demand by `stats`), else None; empty before training.
      target_return: the score a member's final return is judged against.
      search_seed: seeded the initial draws and the ready steps' choices.
      compile_seconds: building and compiling the programs.
      train_seconds: training, compilation excluded.
      messages: what it reported.
      run_dir: its directory, when written.
      mesh: (sweep, data) devices the population trains on (its checkpoints
        hold that layout); None until it is laid out.

    """

    base: TrainConfig
    fields: tuple[ExploredField, ...]
    config: PBTConfig
    population: int
    histories: list[list[dict[str, Any]]]
    diverged: list[int | None]
    lineage: list[ReadyStep]
    final_params: list[Params | None]
    final_stats: list[Any] = dataclasses.field(default_factory=list)
    target_return: float | None = None
    search_seed: int = 0
    compile_seconds: float = 0.0
    train_seconds: float = 0.0
    messages: list[str] = dataclasses.field(default_factory=list)
    run_dir: pathlib.Path | None = None
    mesh: tuple[int, int] | None = None

    @property
    def final_return(self) -> np.ndarray:
        """Each member's last chunk return along its `ancestral_history`.

        The mean return of the last chunk that ended episodes in the training
        its final state went through. Its own `histories` entry would not do:
        from a ready step it copied at, its state is its parent's, so the
        returns it recorded before are those of weights it discarded. Float
        [population]; NaN for a member that diverged or whose lineage ended
        none.
        """
        out = np.full(self.population, np.nan)
        for i in range(self.population):
            history = self.ancestral_history(i) if self.lineage else self.histories[i]
            returns = [r.get(RETURN, math.nan) for r in history]
            finite = [x for x in returns if x is not None and not math.isnan(x)]
            if finite and self.diverged[i] is None:
                out[i] = finite[-1]
        return out

    @property
    def ready_steps_note(self) -> str | None:
        """Why the ready steps copied nothing, where none could; else None.

        A population smaller than `1 / quantile` has no bottom member, so its
        ready steps rank the members and copy none: a bare count would read
        as exploits that happened.
        """
        if len(self.lineage) < 2 or bottom_count(self.config.quantile, self.population):
            return None
        return "none could copy: no bottom member at this quantile"

    @property
    def ready_steps_text(self) -> str:
        """The ready steps taken, with `ready_steps_note` where it applies."""
        count = str(max(0, len(self.lineage) - 1))
        note = self.ready_steps_note
        return count if note is None else f"{count} ({note})"

    def __repr__(self) -> str:
        # What a notebook cell shows: its size and best member, not its arrays.
        names = ", ".join(f.name for f in self.fields)
        text = (
            f"PBTResult({self.base.algo} on {self.base.env.id}, {self.population} "
            f"members exploring {names}, {len(self.lineage) - 1} ready steps"
        )
        if (note := self.ready_steps_note) is not None:
            text += f" ({note})"
        best = self.best
        if np.isfinite(self.final_return[best]):  # else no member has a return
            text += (
                f"; best: member {best}, return {return_text(self.final_return[best])}"
            )
        if self.run_dir is not None:
            text += f", run_dir={str(self.run_dir)!r}"
        return text + ")"

    @property
    def best(self) -> int:
        """The index of the member with the highest final return (first on ties).

        An index, as a SweepResult's `best_run` is into its runs (a
        SweepResult's `best` is its best setting's summary row instead).
        """
        final = self.final_return
        return int(np.argmax(np.nan_to_num(final, nan=-np.inf)))

    @property
    def env_steps(self) -> int:
        """Environment steps of all members together."""
        return self.base.steps_per_update * self.base.num_updates * self.population

    def ancestry(self, member: int) -> list[tuple[int, int]]:
        """Whose training `member`'s final state continues, segment by segment.

        Follows its ancestry back through every ready step: from each step
        on, the member whose state it then continued.

        Returns:
          (update the segment starts at, the member trained in it) per ready
          step and the start, oldest first.

        """
        member = checked_index(member, self.population, "member")
        out = []
        current = member
        for step in reversed(self.lineage):
            out.append((step.updates, current))
            current = step.parents[current]
        return out[::-1]

    def schedule(self, member: int) -> list[tuple[int, dict[str, float]]]:
        """The explored values that `member`'s final state was trained with.

        Returns:
          (update it starts at, {field: value}) per ready step and the start,
          oldest first: the values of the member of `ancestry`.

        """
        return [
            (updates, {name: v[trained] for name, v in step.values.items()})
            for (updates, trained), step in zip(
                self.ancestry(member), self.lineage, strict=True
            )
        ]

    def ancestral_history(self, member: int) -> list[dict[str, Any]]:
        """The records of the training `member`'s final state went through.

        Per segment of `ancestry`, the records of the member trained in it
        (a record at update u covers the updates before it). A member's own
        `histories` entry changes lineage at each ready step it copied at.
        """
        segments = self.ancestry(member)
        ends = [u for u, _ in segments[1:]] + [math.inf]
        return [
            record
            for (start, trained), end in zip(segments, ends, strict=True)
            for record in self.histories[trained]
            if start < record["updates"] <= end
        ]

    def params(self, member: int) -> Params:
        """`member`'s final network parameters (read from disk when loaded)."""
        member = checked_index(member, self.population, "member")
        if self.final_params[member] is None and self.run_dir is not None:
            data = (
                self.run_dir / "params" / f"member-{member:04d}.msgpack"
            ).read_bytes()
            self.final_params[member] = flax.serialization.msgpack_restore(data)
        return self.final_params[member]

    def stats(self, member: int) -> Any:
        """`member`'s observation statistics (RunningStatistics), or None.

        None where the environment does not normalise observations; read from
        disk when loaded (`params/member-NNNN.obs-stats.msgpack`).

        Raises:
          ConfigError: a loaded directory whose environment normalises holds
            none for `member` (it was written before they were saved).

        """
        member = checked_index(member, self.population, "member")
        if not self.final_stats:
            self.final_stats = [None] * self.population
        if self.final_stats[member] is None and self.run_dir is not None:
            self.final_stats[member] = read_run_stats(self.run_dir, member, "member")
            if (
                self.final_stats[member] is None
                and self.base.env.normalize_observations
            ):
                # Written before members' statistics were saved: a policy
                # without them would act on raw observations, unsaid.
                raise ConfigError(
                    f"member {member}'s observation statistics are not in "
                    f"{self.run_dir / 'params'} (a PBT directory written before "
                    "they were saved); its best member's policy, with its own, "
                    f"is {self.run_dir / 'policy'}."
                )
        return self.final_stats[member]


def finite_or_none(x: float) -> float | None:
    """`x` as the PBT files hold it: a float, or None for NaN (JSON has none)."""
    return None if math.isnan(x) else float(x)


def lineage_rows(result: PBTResult) -> list[dict[str, Any]]:
    """The lineage as rows, one per ready step (and the start) and member.

    Each: updates, env steps, member, parent, score (None: no episode) and
    the explored values.
    """
    rows = []
    for step in result.lineage:
        for i in range(result.population):
            rows.append(
                {
                    "updates": step.updates,
                    "env_steps": step.updates * result.base.steps_per_update,
                    "member": i,
                    "parent": step.parents[i],
                    "score": finite_or_none(step.scores[i]),
                    **{name: v[i] for name, v in step.values.items()},
                }
            )
    return rows


def read_lineage(rows: list[dict[str, Any]], fields: list[str]) -> list[ReadyStep]:
    """The ReadySteps of `lineage.json`'s rows (member-major within a step)."""
    steps: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        steps.setdefault(row["updates"], []).append(row)
    out = []
    for updates, members in steps.items():
        members = sorted(members, key=lambda r: r["member"])
        out.append(
            ReadyStep(
                updates=updates,
                parents=tuple(r["parent"] for r in members),
                scores=tuple(
                    math.nan if r["score"] is None else r["score"] for r in members
                ),
                values={f: tuple(r[f] for r in members) for f in fields},
            )
        )
    return out


def load_pbt(path: str | pathlib.Path) -> PBTResult:
    """Reads a PBT directory written by `pbt(..., write_files=True)`.

    Parameters and observation statistics are read from disk when first asked
    for (`result.params(i)`, `result.stats(i)`).

    Args:
      path: the PBT directory (`purejaxdrl pbt` prints `pbt: results in DIR`;
        `PBTResult.run_dir` names it).

    Examples:
      More in docs/guide/pbt.md.

      >>> import purejaxdrl as pjd
      >>> explore = {"learning_rate": ("loguniform", 1e-5, 1e-3)}
      >>> done = pjd.pbt("cartpole", explore=explore, population=4,
      ...                write_files=True, console=False)
      >>> again = pjd.load_pbt(done.run_dir)  # or the DIR printed
      >>> again.final_return[again.best]  # the best member's return

    """
    path = pathlib.Path(path)
    if not (path / "pbt.yaml").is_file():
        raise ConfigError(
            f"{str(path)!r} has no pbt.yaml; pass a directory that "
            "pjd.pbt(..., write_files=True) or `purejaxdrl pbt` wrote (it "
            "prints `pbt: results in DIR`)."
        )
    result = read_pbt_meta(path, finished=True)
    file = present(path / "lineage.json", "PBT run")
    with reading(file, restore_or_restart("PBT run")):
        rows = json.loads(file.read_text())
        result.lineage = read_lineage(rows, [f.name for f in result.fields])
    result.histories = [
        read_history(present(path / "members" / f"member-{i:04d}.jsonl", "PBT run"))
        for i in range(result.population)
    ]
    return result


def read_pbt_meta(path: pathlib.Path, *, finished: bool = False) -> PBTResult:
    """The PBTResult `pbt.yaml` describes, without records or lineage.

    Raises:
      ConfigError: `pbt.yaml` is damaged, or (with `finished`) says the run
        has not finished writing its results; or a module of its env.imports
        or its algorithm is missing here (`run_files.saved_config`).

    """
    file = path / "pbt.yaml"
    with reading(file, restore_or_restart("PBT run")):
        meta = yaml.safe_load(file.read_text())
        if finished and meta["status"] != "finished":
            raise ConfigError(unfinished(path, "pbt"))
        result = _result_of_meta(meta, path)
    return result


def _result_of_meta(meta: dict[str, Any], path: pathlib.Path) -> PBTResult:
    # A record cut short can still parse, with a field left empty: it is
    # damaged (`reading` says so), not a flag for the user to pass.
    base = saved_config(meta["base"], "pbt.yaml")
    fields = tuple(ExploredField(**f) for f in meta["fields"])
    settings = dict(meta["pbt"], perturb=tuple(meta["pbt"]["perturb"]))
    population = meta["population"]
    mesh = meta.get("mesh")  # None: written before it was recorded
    return PBTResult(
        base=base,
        fields=fields,
        config=PBTConfig(**settings),
        population=population,
        histories=[[] for _ in range(population)],
        diverged=list(meta["diverged"]),
        lineage=[],
        final_params=[None] * population,
        final_stats=[None] * population,
        target_return=meta["target_return"],
        search_seed=meta["search_seed"],
        compile_seconds=meta["compile_seconds"],
        train_seconds=meta["train_seconds"],
        run_dir=path,
        mesh=None if mesh is None else tuple(mesh),
    )
