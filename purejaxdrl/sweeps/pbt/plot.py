"""A picture of a PBT run: each member's explored values and return over training."""

import math
import pathlib

import numpy as np

from purejaxdrl.observe.plots import RETURN
from purejaxdrl.sweeps.pbt.lineage import PBTResult


def member_values(result: PBTResult, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(env steps [S+1], values [population, S+1]) of explored field `name`.

    Each member's value from every ready step (and the start) on, and once
    more at the end of training, so a step plot covers the whole run.
    """
    steps = [s.updates for s in result.lineage] + [result.base.num_updates]
    values = np.array([s.values[name] for s in result.lineage]).T
    values = np.concatenate([values, values[:, -1:]], axis=1)
    return np.asarray(steps) * result.base.steps_per_update, values


def plot_pbt(result: PBTResult, out: str | pathlib.Path) -> pathlib.Path:
    """Writes a PNG: a panel per explored field, then the members' returns.

    Every member is a thin line; the best member's schedule (the values its
    final state was trained with, `PBTResult.schedule`) and its return along
    that ancestry (`PBTResult.ancestral_history`) are the thick ones. Log
    scales for log-uniform fields.
    """
    # A Figure of its own, not pyplot's: no window, no backend switched (a
    # notebook's figures show through its backend), nothing left in pyplot's
    # list of figures; savefig draws the PNG on an Agg canvas.
    from matplotlib.figure import Figure

    panels = len(result.fields) + 1
    fig = Figure(figsize=(4.2 * panels, 3.4))
    axes = fig.subplots(1, panels, squeeze=False)
    best = result.best
    schedule = result.schedule(best)
    spu = result.base.steps_per_update
    for ax, field in zip(axes[0], result.fields, strict=False):
        steps, values = member_values(result, field.name)
        for member in values:
            ax.step(steps, member, where="post", color="0.7", lw=0.8)
        xs = [u * spu for u, _ in schedule] + [steps[-1]]
        ys = [v[field.name] for _, v in schedule]
        ax.step(xs, [*ys, ys[-1]], where="post", color="C3", lw=2, label="best")
        ax.set_yscale("log" if field.kind == "loguniform" else "linear")
        ax.set(title=field.name, xlabel="env steps (per member)")
        ax.legend(loc="best", fontsize="small")
    ax = axes[0][-1]
    thin = {"color": "0.7", "lw": 0.8}
    for history in result.histories:
        ax.plot(*_returns(history), **thin)
    ax.plot(*_returns(result.ancestral_history(best)), color="C3", lw=2, label="best")
    ax.set(title="return", xlabel="env steps (per member)")
    ax.legend(loc="best", fontsize="small")
    fig.suptitle(
        f"PBT: {result.population} members of {result.base.algo} on "
        f"{result.base.env.id}, best member {best}"
    )
    fig.tight_layout()
    out = pathlib.Path(out)
    fig.savefig(out, dpi=90)
    return out


def _returns(history: list[dict]) -> tuple[list[float], list[float]]:
    """(env steps, returns) of a member's records."""
    xs = [r["env_steps"] for r in history]
    return xs, [r.get(RETURN, math.nan) for r in history]
