"""A sweep's results: per-run records and parameters, the summary per setting."""

import dataclasses
import math
import pathlib
from typing import Any

import flax.serialization
import numpy as np

from purejaxdrl.observe.numbers import MarkdownTable, mean_std_text, return_text
from purejaxdrl.observe.plots import RETURN, short_value
from purejaxdrl.sweeps.layout import Layout
from purejaxdrl.sweeps.run_files import read_run_stats
from purejaxdrl.sweeps.spec import SweepPlan, checked_index
from purejaxdrl.types import Params


@dataclasses.dataclass
class SweepResult:
    """What a sweep reports.

    Attributes:
      plan: settings and seeds; run i is setting `plan.run(i)[0]` with seed
        `plan.run(i)[1]` (runs go setting-major).
      histories: per run, one record per chunk: the keys of a run's
        metrics.jsonl record (`train`'s) but `devices`, `steps_per_second`,
        `steps_per_second_per_device` and `eta_seconds`, as the runs train
        together in batches and no run's own throughput is measured; `time`
        is its batch's training time.
      diverged: per run, the update at which a metric became non-finite, or None.
      final_params: per run, the final network parameters (host arrays), or
        None when loaded from disk (read on demand by `params`).
      final_stats: per run, its observation statistics where the environment
        normalises them (what its policy needs beside its parameters; read
        on demand by `stats`), else None; empty before training.
      target_return: the score a run's final return must reach
        (`reached_target`, as `purejaxdrl train` judges a preset's target);
        `first_crossing_steps` says when a chunk's mean return first reached it.
      compile_seconds: time to build and compile the programs.
      train_seconds: time to train, compilation excluded.
      programs_compiled: training programs compiled (one per static group and
        chunk length).
      layouts: per static group, its Layout.
      messages: what the sweep reported (layout, batches, divergence).
      run_dir: the sweep directory, when written.

    """

    plan: SweepPlan
    histories: list[list[dict[str, Any]]]
    diverged: list[int | None]
    final_params: list[Params | None]
    target_return: float | None = None
    compile_seconds: float = 0.0
    train_seconds: float = 0.0
    programs_compiled: int = 0
    layouts: list[Layout] = dataclasses.field(default_factory=list)
    messages: list[str] = dataclasses.field(default_factory=list)
    run_dir: pathlib.Path | None = None
    final_stats: list[Any] = dataclasses.field(default_factory=list)

    @classmethod
    def before_training(
        cls,
        plan: SweepPlan,
        target_return: float | None,
        messages: list[str],
        run_dir: pathlib.Path | None = None,
    ) -> "SweepResult":
        """A result with no run trained yet: what a sweep (or its resume) fills."""
        return cls(
            plan=plan,
            histories=[[] for _ in range(plan.num_runs)],
            diverged=[None] * plan.num_runs,
            final_params=[None] * plan.num_runs,
            final_stats=[None] * plan.num_runs,
            target_return=target_return,
            messages=messages,
            run_dir=run_dir,
        )

    def __repr__(self) -> str:
        # What a notebook cell shows: its size and best setting, not its arrays.
        base = self.plan.base
        text = (
            f"SweepResult({base.algo} on {base.env.id}, {len(self.plan.settings)} "
            f"settings x {len(self.plan.seeds)} seeds, {self.env_steps:,} env "
            "steps in all"
        )
        best = self.best if any(self.histories) else {"mean_return": math.nan}
        if np.isfinite(best["mean_return"]):  # else no setting has a return
            varied = [f"{f.path}={short_value(best[f.path])}" for f in self.plan.fields]
            text += (
                f"; best: {', '.join(varied) or 'the one setting'}, return "
                f"{return_text(best['mean_return'])}"
            )
        if self.run_dir is not None:
            text += f", run_dir={str(self.run_dir)!r}"
        return text + ")"

    @property
    def final_return(self) -> np.ndarray:
        """Each run's mean return in its last chunk that ended episodes.

        Float [runs]; NaN for runs that diverged or never ended an episode.
        """
        out = np.full(len(self.histories), np.nan)
        for i, history in enumerate(self.histories):
            if self.diverged[i] is not None:
                continue
            for rec in history:
                value = rec.get(RETURN)
                if value is not None and not math.isnan(value):
                    out[i] = value
        return out

    @property
    def reached_target(self) -> np.ndarray | None:
        """Whether each run's final return is at least the target.

        Bool [runs]; False for runs that diverged or never ended an episode.
        None without a `target_return`: nothing was judged (as `summary()`'s
        and the table's "reached target" say), not "none reached it". A run
        that crossed the target during training and ended below it did not
        reach it.
        """
        if self.target_return is None:
            return None
        final = self.final_return
        return ~np.isnan(final) & (np.nan_to_num(final) >= self.target_return)

    @property
    def first_crossing_steps(self) -> np.ndarray:
        """Env steps at the end of each run's first chunk that reached the target.

        Float [runs]; NaN if never, or without a `target_return`. A crossing,
        not the final return: see `reached_target`.
        """
        out = np.full(len(self.histories), np.nan)
        if self.target_return is None:
            return out
        for i, history in enumerate(self.histories):
            for rec in history:
                value = rec.get(RETURN)
                if value is not None and value >= self.target_return:
                    out[i] = rec["env_steps"]
                    break
        return out

    @property
    def steps_to_target(self) -> np.ndarray:
        """`first_crossing_steps`, by its former name."""
        return self.first_crossing_steps

    @property
    def env_steps(self) -> int:
        """Environment steps of all runs together."""
        return sum(h[-1]["env_steps"] for h in self.histories if h)

    def run_index(self, seed: int | None = None, **setting: Any) -> int:
        """The index of the run with this seed and setting.

        Args:
          seed: the run's seed (may be left out when the sweep has one seed).
          **setting: field values; bare names as in the grid (`learning_rate`)
            or dotted paths. Fields not given must not be needed to tell runs
            apart.

        Raises:
          KeyError: no run, or several runs, match (`NoSuchRun`, naming the
            given values no run has, and the sweep's values and seeds).

        """
        algo = self.plan.base.algo
        wanted = {
            (k if "." in k or k not in _bare(self.plan) else f"{algo}.{k}"): v
            for k, v in setting.items()
        }
        matches = []
        for i in range(self.plan.num_runs):
            s, run_seed = self.plan.run(i)
            values = self.plan.settings[s]
            if seed is not None and run_seed != seed:
                continue
            if all(_same(values.get(k), v) for k, v in wanted.items()):
                matches.append(i)
        if len(matches) != 1:
            raise NoSuchRun(_no_single_run(self.plan, wanted, seed, len(matches)))
        return matches[0]

    def params(self, index: int | None = None, **setting: Any) -> Params:
        """A run's final parameters, by index or by `seed=` and setting values."""
        if index is None:
            index = self.run_index(**setting)
        elif setting:
            raise TypeError(
                f"params({index}, {', '.join(setting)}=...): name a run by its "
                "index or by its seed and setting, not both."
            )
        index = checked_index(index, len(self.histories), "run")
        if self.final_params[index] is None and self.run_dir is not None:
            data = (self.run_dir / "params" / f"run-{index:04d}.msgpack").read_bytes()
            self.final_params[index] = flax.serialization.msgpack_restore(data)
        return self.final_params[index]

    def stats(self, index: int) -> Any:
        """A run's observation statistics (RunningStatistics), or None."""
        index = checked_index(index, len(self.histories), "run")
        if not self.final_stats:
            self.final_stats = [None] * len(self.histories)
        if self.final_stats[index] is None and self.run_dir is not None:
            self.final_stats[index] = read_run_stats(self.run_dir, index)
        return self.final_stats[index]

    def summary(self) -> list[dict[str, Any]]:
        """One row per setting: its values and its results over seeds.

        Mean and sample standard deviation (ddof=1; NaN for one seed) of the
        final return, how many seeds diverged, how many reached the target
        (final return at least the target; None without a target), and the
        median env steps at which the runs that crossed it during training
        first did.
        """
        final, steps = self.final_return, self.first_crossing_steps
        reached = self.reached_target
        n = len(self.plan.seeds)
        rows = []
        for s, values in enumerate(self.plan.settings):
            mine = final[s * n : (s + 1) * n]
            crossed = steps[s * n : (s + 1) * n]
            crossed = crossed[~np.isnan(crossed)]
            ok = mine[~np.isnan(mine)]
            rows.append(
                {
                    "setting": s,
                    **values,
                    "mean_return": float(ok.mean()) if ok.size else math.nan,
                    # The sample std (ddof=1), as papers report: ddof=0
                    # understates few seeds' spread. One run has none: NaN.
                    "std_return": float(ok.std(ddof=1)) if ok.size > 1 else math.nan,
                    "seeds": n,
                    "diverged": sum(
                        self.diverged[i] is not None for i in range(s * n, s * n + n)
                    ),
                    # None without a target: nothing was judged.
                    "reached_target": (
                        None
                        if reached is None
                        else int(reached[s * n : (s + 1) * n].sum())
                    ),
                    "median_first_crossing_steps": (
                        float(np.median(crossed)) if crossed.size else math.nan
                    ),
                }
            )
        return rows

    @property
    def best(self) -> dict[str, Any]:
        """The best setting's summary row (a dict), not a run index.

        The row with the fewest diverged seeds, then the best mean: a setting
        whose seeds diverged is not the best on the mean of those that did
        not; ties go to fewer steps to the first crossing of the target.
        `best_run` is the index of its best run, for `params(i)`,
        `final_return[i]`, ...; a PBTResult's `best` is such an index (a
        member's).
        """
        return max(self.summary(), key=_rank)

    @property
    def best_run(self) -> int | None:
        """The run of the best setting (`best`) with the highest final return.

        An index into the runs (`params(i)`, `stats(i)`, `final_return[i]`),
        as a PBTResult's `best` is into its members. None when none of the
        best setting's runs ended with a finite return (all diverged, or none
        ended an episode): there is no policy worth writing.
        """
        n = len(self.plan.seeds)
        start = self.best["setting"] * n
        final = self.final_return[start : start + n]
        if all(math.isnan(x) for x in final):
            return None
        return start + max(
            range(n), key=lambda j: -math.inf if math.isnan(final[j]) else final[j]
        )

    def table(self) -> MarkdownTable:
        """The summary as a Markdown table, best first (a str; a table in Jupyter)."""
        paths = [f.path for f in self.plan.fields]
        head = ["setting", *paths, "return mean ± std", "reached target",
                "first crossing (median steps)"]  # fmt: skip
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        rows = sorted(self.summary(), key=_rank, reverse=True)
        for row in rows:
            reached = f"{row['reached_target']}/{row['seeds']}"
            if row["reached_target"] is None:
                reached = "—"
            cells = [
                str(row["setting"]),
                *(short_value(row[p]) for p in paths),
                mean_std_text(row["mean_return"], row["std_return"]),
                reached,
                _fmt(row["median_first_crossing_steps"], ",.0f"),
            ]
            if row["diverged"]:
                cells[-3] += f" ({row['diverged']} of {row['seeds']} diverged)"
            lines.append("| " + " | ".join(cells) + " |")
        return MarkdownTable("\n".join(lines))


def _rank(row: dict[str, Any]) -> tuple[int, float, float]:
    """A summary row's rank (higher is better): `SweepResult.best`'s order."""
    steps = row["median_first_crossing_steps"]
    return (
        -row["diverged"],
        _num(row["mean_return"]),
        -(math.inf if math.isnan(steps) else steps),
    )


class NoSuchRun(KeyError):
    """`run_index`'s refusal: a KeyError whose message reads as written."""

    def __str__(self) -> str:
        return str(self.args[0])  # not KeyError's repr, quotes and escapes


def _no_single_run(
    plan: SweepPlan, wanted: dict[str, Any], seed: int | None, count: int
) -> str:
    """Why `count` runs (not one) match: the values given that no run has."""
    swept: dict[str, list[Any]] = {f.path: [] for f in plan.fields}
    for path, values in swept.items():
        for value in (setting.get(path) for setting in plan.settings):
            if not any(_same(value, v) for v in values):
                values.append(value)
    absent = [
        f"{k} is not swept" if k not in swept else f"{k}={v!r} is none of its values"
        for k, v in wanted.items()
        if k not in swept or not any(_same(x, v) for x in swept[k])
    ]
    if seed is not None and seed not in plan.seeds:
        absent.append(f"seed={seed} is none of its seeds")
    given = [f"{k}={v!r}" for k, v in wanted.items()]
    given += [f"seed={seed}"] if seed is not None else []
    why = f" ({'; '.join(absent)})" if absent else ""
    shown = [f"{k} in {_listed(v)}" for k, v in swept.items()]
    return (
        f"{count} runs match {', '.join(given) or 'nothing'}{why}; name a "
        f"setting and a seed of the sweep's: {', '.join(shown)}; seed in "
        f"{_listed(list(plan.seeds))}."
    )


def _listed(values: list[Any], most: int = 8) -> str:
    """`values` as a list, its first `most` only where there are more."""
    if len(values) <= most:
        return repr(values)
    return f"[{', '.join(map(repr, values[:most]))}, ... ({len(values)} values)]"


def _bare(plan: SweepPlan) -> set[str]:
    algo = plan.base.algo
    return {f.path.removeprefix(f"{algo}.") for f in plan.fields}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            # Runs train with float32 values: np.float32(1e-3) names 1e-3's run.
            return math.isclose(float(a), float(b), rel_tol=1e-6)
        except (TypeError, ValueError):
            return False
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return list(a) == list(b)
    return a == b


def _num(x: float) -> float:
    return -math.inf if math.isnan(x) else x


def _fmt(x: float, spec: str = ".1f") -> str:
    return "—" if x is None or math.isnan(x) else format(x, spec)
