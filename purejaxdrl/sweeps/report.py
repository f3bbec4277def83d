"""A sweep directory: a sweep's results written as files and read back."""

import csv
import dataclasses
import math
import pathlib
import shutil
from typing import Any

import numpy as np
import yaml

from purejaxdrl.config import ConfigError
from purejaxdrl.observe.plots import (
    Curve,
    plot_curves,
    read_history,
    setting_label,
    unfinished,
)
from purejaxdrl.observe.records import (
    RefusedValue,
    present,
    reading,
    restore_or_restart,
)
from purejaxdrl.sweeps.best_policy import best_run, export_run
from purejaxdrl.sweeps.fields import Field, setting_config
from purejaxdrl.sweeps.layout import Layout
from purejaxdrl.sweeps.rerun import best_run_record, best_run_text
from purejaxdrl.sweeps.result import SweepResult
from purejaxdrl.sweeps.run_files import (
    plain,
    saved_config,
    write_run_files,
)
from purejaxdrl.sweeps.spec import SweepPlan
from purejaxdrl.training.config import run_dict
from purejaxdrl.training.run_files import last_values, new_dir, write_atomically


def _csv(x: Any) -> str:
    """A CSV cell: full-precision numbers, true/false, empty for NaN or None."""
    if x is None:
        return ""
    if isinstance(x, bool | np.bool_):
        return "true" if x else "false"
    if isinstance(x, float | np.floating):
        return "" if math.isnan(x) else f"{float(x):.10g}"
    if isinstance(x, tuple | list):
        return "x".join(map(str, x)) if x else "()"  # () is a value, not a gap
    return str(x)


def write_sweep(result: SweepResult) -> pathlib.Path:
    """Completes a sweep's directory, or writes one.

    The directory is `result.run_dir` (made by `start_dir` when the sweep
    began), or a new one under the base config's `run_dir`. Host-side only;
    `sweep(..., write_files=True)` calls it once every run trained.
    The directory holds:

    - `sweep.yaml`: the base config, the varied fields, every setting and the
      seeds; `status: finished`, written last (`_finish`), with `best_run`:
      the best run's index, setting, seed, values and final return, and how
      to train it alone (`rerun.best_run_record`);
    - `runs.csv`: one row per run (setting, seed, final return, whether it
      reached the target, env steps at its first crossing of the target, and
      the last value of each of the environment's own metrics, `env/<name>`);
    - `runs/run-0000.jsonl`: each run's metrics, one record per chunk;
    - `params/run-0000.msgpack`: each run's final network parameters, and
      `params/run-0000.obs-stats.msgpack` its observation statistics where
      the environment normalises them;
    - `summary.csv` and `summary.md`: per setting, mean and standard deviation
      over seeds of the final return, how many seeds reached the target (final
      return at least the target), and the median first crossing; `summary.md`
      then names the best run and how to train it alone;
    - `curves.png`: learning curves per setting, mean with a band over seeds;
    - `policy/`: the best setting's best run's policy (`best_run`, written
      by `export_run`, read by `pjd.load_policy`), unless no run ended with a
      finite return.

    Its `checkpoints/` are removed once it is marked finished.
    `load_sweep(dir)` reads it back into a SweepResult.

    Returns:
      The directory's path.

    """
    path, record = _write_files(result)
    if (best := best_run(result)) is not None:
        # Replaced whole: a sweep resumed after it was killed while writing
        # its results may have written this folder before.
        export_run(result, best, path / "policy", overwrite=True)
    _finish(result, path, record)  # the last thing written
    return path


def _write_files(result: SweepResult) -> tuple[pathlib.Path, dict[str, Any] | None]:
    """Writes a sweep directory's records, tables and curves (`write_sweep`).

    Returns its path and what it says of the best run (`best_run_record`).
    """
    path = result.run_dir or start_dir(result)
    for i in range(result.plan.num_runs):
        write_run_files(path, i, result.histories[i], result.params(i), result.stats(i))
    record = best_run_record(result, path)
    _write_tables(result, path, best_run_text(record))
    plot_sweep(result, path / "curves.png")
    return path, record


def _finish(
    result: SweepResult, path: pathlib.Path, best: dict[str, Any] | None
) -> None:
    """Marks a sweep directory finished (`sweep.yaml`), then drops its checkpoints.

    The last thing written: until `sweep.yaml` (replaced whole) says the sweep
    finished, `purejaxdrl sweep --resume` writes every result again, so a
    process killed while writing them loses nothing.
    """
    meta = {
        "status": "finished",
        **_plan_meta(result),
        "diverged": result.diverged,
        "compile_seconds": result.compile_seconds,
        "train_seconds": result.train_seconds,
        "programs_compiled": result.programs_compiled,
        "layouts": [dataclasses.asdict(x) for x in result.layouts],
        "best_run": best,  # which run it is, and how to train it alone
    }
    # Wide lines: best_run's command stays one line, to copy.
    text = yaml.safe_dump(meta, sort_keys=False, width=10_000)
    write_atomically(path / "sweep.yaml", text)
    shutil.rmtree(path / "checkpoints", ignore_errors=True)  # a finished sweep's


def _plan_meta(result: SweepResult) -> dict[str, Any]:
    plan = result.plan
    return {
        # As a run's config.yaml: the swept algorithm's section only (the
        # runs never read the others; `saved_config` gives them defaults).
        "base": run_dict(plan.base),
        "fields": [{"path": f.path, "dynamic": f.dynamic} for f in plan.fields],
        "settings": [{k: plain(v) for k, v in s.items()} for s in plan.settings],
        "seeds": list(plan.seeds),
        "target_return": result.target_return,
    }


def start_dir(result: SweepResult) -> pathlib.Path:
    """A new sweep directory holding the plan (`sweep.yaml`), before training.

    `resume_sweep` reads the plan back from it; `write_sweep` completes it.
    """
    base = result.plan.base
    path = new_dir(
        base.run_dir, f"sweep_{base.env.id.replace('/', '-')}_{base.algo}"
    ).absolute()
    (path / "runs").mkdir()
    (path / "params").mkdir()
    meta = {"status": "running", **_plan_meta(result)}  # a cut file still says it
    write_atomically(path / "sweep.yaml", yaml.safe_dump(meta, sort_keys=False))
    return path


def _write_tables(result: SweepResult, path: pathlib.Path, best: str) -> None:
    """`runs.csv`, `summary.csv` and `summary.md` (the table, then `best`)."""
    plan = result.plan
    paths = [f.path for f in plan.fields]
    final, steps = result.final_return, result.first_crossing_steps
    reached = result.reached_target
    # The environment's own metrics, each run's last value (as the return's).
    env = [last_values(h, "env/") for h in result.histories]
    metrics = sorted({k for run in env for k in run})
    with (path / "runs.csv").open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["run", "setting", "seed", *paths, "final_return",
                      "reached_target", "first_crossing_steps",
                      "diverged_at", *metrics])  # fmt: skip
        for i in range(plan.num_runs):
            s, seed = plan.run(i)
            values = [_csv(plan.settings[s][p]) for p in paths]
            judged = None if reached is None else bool(reached[i])
            out.writerow([i, s, seed, *values, _csv(final[i]), _csv(judged),
                          _csv(steps[i]), _csv(result.diverged[i]),
                          *[_csv(env[i].get(k)) for k in metrics]])  # fmt: skip
    rows = result.summary()
    with (path / "summary.csv").open("w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=list(rows[0]))
        out.writeheader()
        for row in rows:
            out.writerow({k: _csv(v) for k, v in row.items()})
    (path / "summary.md").write_text(result.table() + "\n" + (best and "\n" + best))


def plot_sweep(result: SweepResult, out: pathlib.Path) -> None:
    """Learning curves per setting: the mean over seeds with a min-max band.

    Each legend counts the setting's seeds that logged a return (`(2 seeds)`).
    """
    seeds = tuple(result.plan.seeds)
    n, base = len(seeds), result.plan.base
    curves = [
        Curve(
            setting_label(values, base.algo),
            tuple(result.histories[s * n : s * n + n]),
            seeds,
        )
        for s, values in enumerate(result.plan.settings)
    ]
    title = f"{base.algo} on {base.env.id}: {len(curves)} settings x {n} seeds"
    plot_curves(curves, out, title=title, target=result.target_return)


def read_plan(meta: dict[str, Any]) -> SweepPlan:
    """The SweepPlan recorded in a sweep directory's `sweep.yaml`.

    Raises:
      ConfigError: a module of its env.imports that does not import here, or
        its algorithm is not registered (`run_files.saved_config`).
      ValueError: the record holds no valid config (cut short or edited:
        `reading` names the file as damaged, not a flag to pass).

    """
    base = saved_config(meta["base"], "sweep.yaml")
    try:
        fields = tuple(Field(f["path"], f["dynamic"]) for f in meta["fields"])
        settings = tuple(
            {k: tuple(v) if isinstance(v, list) else v for k, v in s.items()}
            for s in meta["settings"]
        )
        configs = tuple(setting_config(base, s) for s in settings)
    except ConfigError as e:
        raise RefusedValue(f"its config: {e}") from None
    return SweepPlan(base, fields, settings, configs, tuple(meta["seeds"]))


def load_sweep(path: str | pathlib.Path) -> SweepResult:
    """Reads a sweep directory written by `sweep(..., write_files=True)`.

    Parameters are read from disk when first asked for (`result.params(i)`).
    Its `layouts` are each static group's, as the sweep placed them (none for
    a sweep.yaml written before they were recorded).

    Args:
      path: the sweep directory (`purejaxdrl sweep` prints `sweep: results in
        DIR`; `SweepResult.run_dir` names it).

    Examples:
      More in docs/guide/sweeps.md.

      >>> import purejaxdrl as pjd
      >>> done = pjd.sweep("cartpole", grid={"learning_rate": [1e-4, 3e-4]},
      ...                  write_files=True, console=False)
      >>> print(pjd.load_sweep(done.run_dir).table())  # or the DIR printed

    """
    path = pathlib.Path(path)
    if not (path / "sweep.yaml").is_file():
        raise ConfigError(
            f"{str(path)!r} has no sweep.yaml; pass a directory that "
            "pjd.sweep(..., write_files=True) or `purejaxdrl sweep` wrote (it "
            "prints `sweep: results in DIR`)."
        )
    with reading(path / "sweep.yaml", restore_or_restart("sweep")):
        meta = yaml.safe_load((path / "sweep.yaml").read_text())
        if meta.get("status") == "running":
            raise ConfigError(unfinished(path, "sweep"))
        plan = read_plan(meta)
        # Each static group's layout: the data devices its runs trained on,
        # which `rerun.run_command` names as the sweep did. A sweep.yaml
        # written before they were recorded has none: the command alone.
        layouts = [Layout(**x) for x in meta.get("layouts") or []]
    # Run files: their own errors, not sweep.yaml's.
    return _loaded(meta, plan, layouts, path)


def _loaded(
    meta: dict[str, Any], plan: SweepPlan, layouts: list[Layout], path: pathlib.Path
) -> SweepResult:
    histories = [
        read_history(present(path / "runs" / f"run-{i:04d}.jsonl", "sweep"))
        for i in range(plan.num_runs)
    ]
    return SweepResult(
        plan=plan,
        histories=histories,
        diverged=list(meta["diverged"]),
        final_params=[None] * plan.num_runs,
        final_stats=[None] * plan.num_runs,
        target_return=meta["target_return"],
        compile_seconds=meta["compile_seconds"],
        train_seconds=meta["train_seconds"],
        programs_compiled=meta["programs_compiled"],
        layouts=layouts,
        run_dir=path,
    )
