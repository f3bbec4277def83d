"""Learning curves of run, sweep and PBT directories, drawn as a PNG."""

import dataclasses
import difflib
import json
import math
import pathlib
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import yaml

from purejaxdrl.config import ConfigError

RETURN = "episode/mean_return"
# Axis labels of the metrics a reader plots most.
LABELS = {RETURN: "mean episode return", "eval/mean_return": "evaluation return"}
# More curves than this get no legend entry (the colours still rank them).
MAX_LEGEND = 10
# Config fields that do not make runs different settings.
_NOT_SETTING = ("seed", "run_dir", "devices", "checkpoint")


@dataclasses.dataclass(frozen=True)
class Curve:
    """One setting's learning curves: one run, or several seeds.

    Drawn as the mean over seeds with a min-max band (`plot_curves`).

    Attributes:
      label: the legend entry.
      histories: one list of per-chunk records per seed (as metrics.jsonl).

    """

    label: str
    histories: tuple[list[dict[str, Any]], ...]

    def series(self, x: str, metric: str = RETURN) -> tuple[np.ndarray, np.ndarray]:
        """(x values, metric [seeds, chunks]; NaN where absent).

        x is the longest seed's (env steps, the same for every seed), or for
        `time` the mean over the seeds present at each chunk.

        A seed with fewer chunks (still training, or stopped) is NaN past its
        last: the mean and band are over the seeds present at each point, and
        the others' curves are not cut to its length.
        """
        longest = max(self.histories, key=len)
        xs = np.asarray([r.get(x, np.nan) for r in longest], float)
        ys = np.full((len(self.histories), len(longest)), np.nan)
        for i, history in enumerate(self.histories):
            ys[i, : len(history)] = [_value(r.get(metric)) for r in history]
        if x == "time":  # each seed's own: the mean over the seeds at each chunk
            times = np.full_like(ys, np.nan)
            for i, history in enumerate(self.histories):
                times[i, : len(history)] = [_value(r.get(x)) for r in history]
            with warnings.catch_warnings():  # a chunk no seed timed stays NaN
                warnings.simplefilter("ignore", RuntimeWarning)
                xs = np.nanmean(times, axis=0)
        return xs, ys


def _value(x: Any) -> float:
    return math.nan if x is None else float(x)


def read_jsonl(path: pathlib.Path) -> list[dict[str, Any]]:
    """The records of a JSONL file, one dict per non-empty line.

    Raises:
      ConfigError: a line that is not JSON (a process killed while writing
        it), naming the file and the line.

    """
    records = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line:
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise ConfigError(
                f"{path}: line {number} is not JSON ({e.msg}), as a process "
                "stopped while writing it leaves it; delete that line (its "
                "record is lost) and read it again."
            ) from None
    return records


def read_history(path: pathlib.Path) -> list[dict[str, Any]]:
    """A run's metrics JSONL as per-chunk records, missing values (null) as NaN."""
    return [
        {k: math.nan if v is None else v for k, v in r.items()}
        for r in read_jsonl(path)
    ]


def short_value(x: Any) -> str:
    """A setting's value as a short text: `0.001`, `64x64`, `True`."""
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, tuple | list):
        return "x".join(map(str, x))
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


def unfinished(path: pathlib.Path, command: str) -> str:
    """Why a sweep or PBT directory still training (or stopped) can't be read."""
    return (
        f"{str(path)!r} is a {command} that has not finished (stopped, or still "
        f"training): its records are in its checkpoints until then; "
        f"`purejaxdrl {command} --resume {path}` finishes it."
    )


def sweep_curves(path: pathlib.Path) -> list[Curve]:
    """One curve per setting of a sweep directory, its seeds the curve's runs.

    Reads `sweep.yaml` (the base config's algorithm, the settings and the seeds)
    and `runs/run-NNNN.jsonl`; runs go setting-major, as the sweep wrote them.
    """
    meta = yaml.safe_load((path / "sweep.yaml").read_text())
    if meta.get("status") == "running":
        raise ConfigError(unfinished(path, "sweep"))
    algo, n = meta["base"]["algo"], len(meta["seeds"])
    curves = []
    for s, values in enumerate(meta["settings"]):
        runs = range(s * n, (s + 1) * n)
        histories = [read_history(path / "runs" / f"run-{i:04d}.jsonl") for i in runs]
        curves.append(Curve(setting_label(values, algo), tuple(histories)))
    return curves


def pbt_curve(path: pathlib.Path) -> Curve:
    """A PBT directory's population as one curve: its members' mean and band.

    Members are not seeds of one setting (each changes its values and copies
    better members as it trains): the band is the population's spread, the
    line what a member's slot returns on average. Reads `pbt.yaml` and
    `members/member-NNNN.jsonl`.
    """
    if not (path / "lineage.json").is_file():
        raise ConfigError(unfinished(path, "pbt"))
    population = yaml.safe_load((path / "pbt.yaml").read_text())["population"]
    histories = tuple(
        read_history(path / "members" / f"member-{i:04d}.jsonl")
        for i in range(population)
    )
    return Curve(f"PBT population ({population} members)", histories)


def load_curves(
    paths: str | pathlib.Path | Sequence[str | pathlib.Path],
) -> list[Curve]:
    """The curves of run, sweep and PBT directories (or one), in the given order.

    A sweep directory gives one curve per setting (`sweep_curves`), a PBT
    directory one of its population (`pbt_curve`); run directories whose
    configs differ only in the seed form one curve.

    Raises:
      ConfigError: a path that is none of these, an unfinished sweep or PBT
        run, or a run without metrics.

    """
    if isinstance(paths, str | pathlib.PurePath):  # one folder, not its letters
        paths = [paths]
    items: list[Curve | str] = []  # curves, or keys of groups of runs
    runs: dict[str, list[tuple[str, list[dict[str, Any]]]]] = {}
    seen: set[pathlib.Path] = set()
    for raw in paths:
        path = pathlib.Path(raw)
        if path.resolve() in seen:  # `R R/`, overlapping globs: one run, once
            continue
        seen.add(path.resolve())
        if (path / "sweep.yaml").is_file():
            items.extend(sweep_curves(path))
            continue
        if (path / "pbt.yaml").is_file():
            items.append(pbt_curve(path))
            continue
        metrics = path / "metrics.jsonl"
        if not metrics.is_file() and (path / "config.yaml").is_file():
            raise ConfigError(
                f"{str(path)!r} is a run directory without metrics yet (no "
                "metrics.jsonl: stopped before its first chunk); resume it "
                "(purejaxdrl train --resume) or leave it out."
            )
        if not metrics.is_file():
            raise ConfigError(
                f"{str(path)!r} is not a run, sweep or PBT directory (no "
                "metrics.jsonl, sweep.yaml or pbt.yaml); pass folders made by "
                "`purejaxdrl train`, `sweep` or `pbt`."
            )
        history = read_jsonl(metrics)
        if not history:
            raise ConfigError(
                f"{str(path)!r} has no metrics yet (empty metrics.jsonl); wait for "
                "its first chunk or leave it out."
            )
        config = yaml.safe_load((path / "config.yaml").read_text()) or {}
        # Runs that differ only in their seed (and folder) are seeds of one curve.
        same = {k: v for k, v in config.items() if k not in _NOT_SETTING}
        key = json.dumps(same, sort_keys=True)
        if key not in runs:
            runs[key] = []
            items.append(key)
        runs[key].append((path.name, history))
    labels = _differences(list(runs))
    return [
        x if isinstance(x, Curve) else _runs_curve(runs[x], labels.get(x))
        for x in items
    ]


def _flat(tree: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(tree, dict):
        return {prefix.rstrip("."): tree}
    out: dict[str, Any] = {}
    for k, v in tree.items():
        out.update(_flat(v, f"{prefix}{k}."))
    return out


def _differences(keys: list[str], most: int = 3) -> dict[str, str]:
    """Each group's label by the config fields that tell the groups apart.

    `learning_rate=0.001` for runs that differ in it; none where the groups
    differ in more than `most` fields, or there is one group (the folder's
    name says it then).
    """
    if len(keys) < 2:
        return {}
    flats = [_flat(json.loads(k)) for k in keys]
    fields = sorted({f for flat in flats for f in flat})
    differ = [f for f in fields if len({json.dumps(x.get(f)) for x in flats}) > 1]
    if not differ or len(differ) > most:
        return {}
    return {
        k: ", ".join(
            f"{f.rsplit('.', 1)[-1]}={short_value(flat.get(f))}" for f in differ
        )
        for k, flat in zip(keys, flats, strict=True)
    }


def _runs_curve(
    members: list[tuple[str, list[dict[str, Any]]]], label: str | None = None
) -> Curve:
    """A group of runs' curve: labelled by `label` (else its first folder)."""
    label = label or members[0][0]
    if len(members) > 1:
        label += f" ({len(members)} seeds)"
    return Curve(label, tuple(h for _, h in members))


def has_values(curve: Curve, metric: str) -> bool:
    """Whether a record of `curve` holds a number for `metric`."""
    return bool(np.isfinite(curve.series("env_steps", metric)[1]).any())


def check_metric(curves: Sequence[Curve], metric: str) -> None:
    """Raises ConfigError where no run of `curves` has a value of `metric`.

    Runs log different metrics (an algorithm's losses, an environment's own
    `env/<name>`): a name none of them has would draw empty panels.
    """
    if any(has_values(c, metric) for c in curves):
        return
    logged = {k for c in curves for h in c.histories for r in h for k in r}
    # The environment's and evaluation's first: the keys a reader looks for.
    numbers = sorted(
        (k for k in logged if k not in ("env_steps", "updates", "time")),
        key=lambda k: (not k.startswith(("env/", "eval/")), k),
    )
    unevaluated = metric.startswith("eval/") and not any(
        k.startswith("eval/") for k in logged
    )
    if metric in logged or unevaluated:  # say why, not the name back
        why = {
            "episode/": "no episode ended in any chunk yet (train longer)",
            "eval/": "no evaluation ran (--eval.episodes N turns it on)",
        }
        reason = next((w for k, w in why.items() if metric.startswith(k)), None)
        raise ConfigError(
            f"--metric {metric}: no run here has a value of it yet: "
            f"{reason or 'every record holds null'}; plot another metric."
        )
    close = difflib.get_close_matches(metric, numbers, n=1)
    if close:
        hint = f"did you mean {close[0]}?"
    else:
        more = f" and {len(numbers) - 12} more" if len(numbers) > 12 else ""
        hint = f"their records hold {', '.join(numbers[:12])}{more}."
    raise ConfigError(f"--metric {metric}: no run here logged it; {hint}")


def plot_curves(
    curves: Sequence[Curve],
    out: str | pathlib.Path,
    *,
    title: str = "",
    target: float | None = None,
    metric: str = RETURN,
) -> int:
    """Writes a PNG of `curves`: metric vs env steps and vs training time.

    Curves are coloured by their final value, best first; each draws the mean
    over its seeds and, with several seeds, a band from the lowest to the
    highest seed. Curves without a value of `metric` are left out.

    Returns:
      The number of curves drawn on each panel.

    Raises:
      ConfigError: no curve's records hold `metric` at all (a misspelt name;
        one logged without a value yet draws nothing, without an error).

    """
    if isinstance(curves, Curve):
        curves = [curves]
    if curves and not any(metric in r for c in curves for h in c.histories for r in h):
        check_metric(curves, metric)  # says which names they do hold
    import matplotlib

    matplotlib.use("Agg")  # files only; never opens a window
    import matplotlib.pyplot as plt

    curves = [c for c in curves if has_values(c, metric)]
    finals = []
    for curve in curves:
        _, ys = curve.series("env_steps", metric)
        with warnings.catch_warnings(action="ignore", category=RuntimeWarning):
            last = np.nanmean(ys[:, -1]) if ys.size else math.nan
        finals.append(-math.inf if math.isnan(last) else last)
    order = np.argsort(finals)[::-1]
    colors = plt.cm.viridis(np.linspace(0.0, 0.9, max(len(order), 1)))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), dpi=100, sharey=True)
    for rank, c in enumerate(order):
        curve = curves[c]
        for ax, x in zip(axes, ("env_steps", "time"), strict=True):
            xs, ys = curve.series(x, metric)
            # A chunk where no seed ended an episode stays a gap (NaN).
            with warnings.catch_warnings(action="ignore", category=RuntimeWarning):
                mean = np.nanmean(ys, axis=0)
                low, high = np.nanmin(ys, axis=0), np.nanmax(ys, axis=0)
            label = curve.label if rank < MAX_LEGEND and ax is axes[0] else None
            ax.plot(xs, mean, color=colors[rank], label=label, lw=1.5)
            # A value between gaps draws no line: a point (one evaluation).
            lone = _lone(mean)
            ax.plot(xs[lone], mean[lone], "o", color=colors[rank], ms=3)
            if len(curve.histories) > 1:
                ax.fill_between(xs, low, high, color=colors[rank], alpha=0.15, lw=0)
    xlabels = ("environment steps", "training time (s)")
    for ax, xlabel in zip(axes, xlabels, strict=True):
        if target is not None:
            ax.axhline(target, color="gray", ls="--", lw=1)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(LABELS.get(metric, metric))
    if curves:
        axes[0].legend(fontsize=7, loc="best")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out)
    # What was drawn, not what was asked for: the curves on the first panel.
    drawn = sum(line.get_linestyle() == "-" for line in axes[0].get_lines())
    plt.close(fig)
    return drawn


def _lone(ys: np.ndarray) -> np.ndarray:
    """Where `ys` has a value and neither neighbour has one: bool [len(ys)]."""
    finite = np.isfinite(ys)
    before = np.concatenate([[False], finite[:-1]])
    after = np.concatenate([finite[1:], [False]])
    return finite & ~before & ~after
