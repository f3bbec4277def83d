"""Learning curves of run, sweep and PBT directories, drawn as a figure."""

import difflib
import pathlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from purejaxdrl.config import ConfigError

# A curve lives in `curve`, reading and aligning runs in `curves`; their
# names are read from here too.
from purejaxdrl.observe.curve import RETURN, Curve, setting_label, short_value
from purejaxdrl.observe.curves import (
    load_curves,
    pbt_curve,
    read_history,
    read_jsonl,
    sweep_curves,
    unfinished,
)

if TYPE_CHECKING:  # matplotlib is an optional extra, imported on use
    from matplotlib.figure import Figure

__all__ = [
    "LABELS",
    "MAX_LEGEND",
    "RETURN",
    "Curve",
    "check_metric",
    "drawn_curves",
    "has_values",
    "load_curves",
    "pbt_curve",
    "plot_curves",
    "read_history",
    "read_jsonl",
    "setting_label",
    "short_value",
    "sweep_curves",
    "unfinished",
]

# Axis labels of the metrics a reader plots most.
LABELS = {RETURN: "mean episode return", "eval/mean_return": "evaluation return"}
# More curves than this get no legend entry (the colours still rank them).
MAX_LEGEND = 10
# env_steps counts agent steps: with a frame skip of k, k x as many frames.
XLABELS = ("environment (agent) steps", "training time (s)")


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
    out: str | pathlib.Path | None = None,
    *,
    title: str = "",
    target: float | None = None,
    metric: str = RETURN,
) -> "Figure":
    """Draws `curves`: metric vs env steps and vs training time; writes `out`.

    Curves are coloured by their final value, best first; each draws the mean
    over its seeds and, with several seeds, a band from the lowest to the
    highest seed (`Curve.points`: points where no seed has a value are left
    out, so sparse metrics are joined lines too). Curves without a value of
    `metric` are left out.

    Args:
      curves: `load_curves`' curves (or one Curve).
      out: the file to write, a PNG (or any type matplotlib writes); None:
        none, only the figure returned.
      title: the figure's title ("": none).
      target: a value drawn as a dashed line on both panels (None: none).
      metric: the record key drawn (`plot --metric`), default
        "episode/mean_return".

    Returns:
      The matplotlib `Figure`, shown inline in a Jupyter cell, to restyle or
      save again; `drawn_curves(figure)`: the number of curves on each panel.

    Raises:
      ConfigError: no curve's records hold `metric` at all (a misspelt name;
        one logged without a value yet draws nothing, without an error).

    """
    if isinstance(curves, Curve):
        curves = [curves]
    if curves and not any(metric in r for c in curves for h in c.histories for r in h):
        check_metric(curves, metric)  # says which names they do hold
    # A Figure of its own, not pyplot's: no window, no backend switched (a
    # notebook's figures show through its backend), nothing left in pyplot's
    # list of figures; savefig picks a canvas by the file's type (Agg's: PNG).
    import matplotlib

    curves = [c for c in curves if has_values(c, metric)]
    # Ranked by the last point's mean: a curve's final value.
    finals = [c.points("env_steps", metric)[1][-1] for c in curves]
    order = np.argsort(finals)[::-1]
    viridis = matplotlib.colormaps["viridis"]
    colors = viridis(np.linspace(0.0, 0.9, max(len(order), 1)))
    from purejaxdrl.observe.inline_figure import InlineFigure

    fig = InlineFigure(figsize=(12, 4.5), dpi=100)
    axes = fig.subplots(1, 2, sharey=True)
    for rank, c in enumerate(order):
        curve = curves[c]
        for ax, x in zip(axes, ("env_steps", "time"), strict=True):
            _draw(
                ax, curve, x, metric, colors[rank], rank < MAX_LEGEND and ax is axes[0]
            )
    for ax, xlabel in zip(axes, XLABELS, strict=True):
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
    if out is not None:
        fig.savefig(out)
    return fig


def drawn_curves(fig: "Figure") -> int:
    """How many curves `plot_curves`' figure has on each panel.

    What was drawn, not what was asked for: the curves on its first panel.
    """
    return sum(line.get_linestyle() == "-" for line in fig.axes[0].get_lines())


def _draw(ax: Any, curve: Curve, x: str, metric: str, color: Any, legend: bool) -> None:
    """One curve on one panel: its seeds' mean joined, their min-max spread."""
    xs, mean, low, high = curve.points(x, metric)
    label = curve.legend(metric) if legend else None
    ax.plot(xs, mean, color=color, label=label, lw=1.5)
    if len(xs) == 1:  # one point (one evaluation) draws no line: a marker
        ax.plot(xs, mean, "o", color=color, ms=3)
    if len(curve.histories) < 2:
        return
    if len(xs) > 1:
        ax.fill_between(xs, low, high, color=color, alpha=0.15, lw=0)
    else:  # a band needs two points
        ax.errorbar(xs, mean, yerr=[mean - low, high - mean], fmt="none", ecolor=color)
