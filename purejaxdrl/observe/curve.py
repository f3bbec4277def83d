"""One learning curve (seeds aligned by env steps), and a setting's label."""

import dataclasses
import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

RETURN = "episode/mean_return"


@dataclasses.dataclass(frozen=True)
class Curve:
    """One setting's learning curves: one run, or several seeds.

    Drawn as the mean over seeds with a min-max band (`plot_curves`).

    Attributes:
      label: the legend entry.
      histories: one list of per-chunk records per seed (as metrics.jsonl).
      seeds: for a group of run folders, each history's config seed (its
        legend counts them, `legend`); () where the label says it all.

    """

    label: str
    histories: tuple[list[dict[str, Any]], ...]
    seeds: tuple[Any, ...] = ()

    def legend(self, metric: str = RETURN) -> str:
        """`label`, its count of runs and seeds only those with `metric`'s.

        Two folders of one seed are two runs, not two seeds; a run that never
        logged `metric` (one of two evaluated) adds nothing to its line.
        """
        if not self.seeds:
            return self.label
        logged = [
            seed
            for seed, history in zip(self.seeds, self.histories, strict=True)
            if np.isfinite(_column(history, metric)).any()
        ]
        return self.label.removesuffix(runs_text(self.seeds)) + runs_text(logged)

    def series(self, x: str, metric: str = RETURN) -> tuple[np.ndarray, np.ndarray]:
        """(x values [points], metric [seeds, points]; NaN where absent).

        Seeds are matched by env steps, not by chunk number: the points are
        every env-steps count some seed recorded (seeds split into other chunks,
        by a resume with a larger budget or another --num-logs, interleave), and
        each seed's value sits at its own count, NaN where it has no record (or
        past its last: a seed still training, or stopped, cuts no other seed's
        curve short).

        Any other x (`time`) is per point the mean over the seeds of each seed's
        own x at that env-steps count, interpolated between its records (NaN
        outside them).
        """
        grid, xs, ys = self._seeds(x, metric)
        if x == "env_steps":
            return grid, ys
        with warnings.catch_warnings():  # a point no seed timed stays NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmean(xs, axis=0), ys

    def _seeds(self, x: str, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(env-steps grid [points], each seed's x and metric [seeds, points])."""
        steps = [_column(h, "env_steps") for h in self.histories]
        grid = np.unique(np.concatenate([s[np.isfinite(s)] for s in steps]))
        ys = np.full((len(self.histories), len(grid)), np.nan)
        xs = np.full_like(ys, np.nan)
        for i, (history, at) in enumerate(zip(self.histories, steps, strict=True)):
            ok = np.isfinite(at)
            ys[i, np.searchsorted(grid, at[ok])] = _column(history, metric)[ok]
            xs[i] = (
                grid
                if x == "env_steps"
                else _interpolate(grid, at, _column(history, x))
            )
        return grid, xs, ys

    def points(
        self, x: str, metric: str = RETURN
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(x, mean, lowest, highest) over the seeds where some seed has a value.

        What `plot_curves` draws: points where no seed has a value (a chunk
        without an ended episode or an evaluation) are left out, so a sparse
        metric (`eval/mean_return` every N chunks) is one joined line, and its
        seeds' spread shows at each of its points. A seed without a record at
        a point (seeds chunked differently) counts there with its value
        interpolated between its own records, so the mean does not jump
        between the seeds that happened to log; none outside its first and
        last record.

        Any other x (`time`) is drawn only where every seed has one (between
        its own first and last records): where only some seeds did, the mean
        of their x would jump as seeds come in or drop out, and the line
        would run backwards.
        """
        steps, each_x, ys = self._seeds(x, metric)
        everyone = np.isfinite(each_x).all(axis=0)
        with warnings.catch_warnings():  # points no seed timed: left out below
            warnings.simplefilter("ignore", RuntimeWarning)
            xs = np.where(everyone, np.nanmean(each_x, axis=0), np.nan)
        keep = np.isfinite(ys).any(axis=0) & np.isfinite(xs)
        ys = np.stack([_interpolate(steps, steps, row) for row in ys])[:, keep]
        with warnings.catch_warnings():  # a seed without a value there: NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            return xs[keep], np.nanmean(ys, 0), np.nanmin(ys, 0), np.nanmax(ys, 0)


def runs_text(seeds: Sequence[Any]) -> str:
    """` (3 seeds)`, or ` (2 runs, 1 seed)` where runs share one; "" for one run."""
    runs, distinct = len(seeds), len(set(seeds))
    if runs < 2:
        return ""
    if distinct == runs:
        return f" ({runs} seeds)"
    return f" ({runs} runs, {distinct} seed{'s' * (distinct > 1)})"


def _column(history: list[dict[str, Any]], key: str) -> np.ndarray:
    """`key`'s value in each record: float [len(history)], NaN where absent."""
    return np.asarray([_value(r.get(key)) for r in history], float)


def _interpolate(grid: np.ndarray, at: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`values` (recorded at env steps `at`) at env steps `grid`; NaN outside."""
    ok = np.isfinite(at) & np.isfinite(values)
    if not ok.any():
        return np.full(len(grid), np.nan)
    order = np.argsort(at[ok])
    at, values = at[ok][order], values[ok][order]
    out = np.interp(grid, at, values)
    out[(grid < at[0]) | (grid > at[-1])] = np.nan
    return out


def _value(x: Any) -> float:
    return math.nan if x is None else float(x)


def short_value(x: Any) -> str:
    """A setting's value as a short text: `0.001`, `64x64`, `()`, `True`."""
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, tuple | list):  # () is a value, as runs.csv writes it
        return "x".join(map(str, x)) if x else "()"
    return str(x)


def setting_label(values: Mapping[str, Any], algo: str) -> str:
    """`learning_rate=0.001, entropy_cost=0`: a sweep setting for a legend.

    Args:
      values: the setting, {field path: value}.
      algo: the sweep's algorithm, whose fields are named without `algo.`.

    Returns:
      The label; `base` for a setting that varies nothing.

    """
    text = ", ".join(
        f"{k.removeprefix(algo + '.')}={short_value(v)}" for k, v in values.items()
    )
    return text or "base"
