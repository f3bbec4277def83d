"""Learning curves read from run, sweep and PBT directories, seeds aligned."""

import json
import math
import pathlib
from collections.abc import Sequence
from typing import Any

import yaml

from purejaxdrl.config import ConfigError
from purejaxdrl.field_roles import FREE_TO_CHANGE, LAYOUT_ONLY, ignored_fields
from purejaxdrl.observe.curve import Curve, runs_text, setting_label, short_value
from purejaxdrl.observe.records import present, reading, restore_or_restart
from purejaxdrl.observe.result_curves import is_result, result_curves

# Config fields (dotted paths) that do not make runs different settings, as
# well as those a resume may change and those that only lay training out
# (`field_roles`), those the config reads nowhere (`ignored_fields`), the
# seed, and how often to log. Seeds are aligned by env steps, so runs logged
# at other chunks are seeds of one curve too.
_NOT_SETTING = ("seed", "num_logs")


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


def unfinished(path: pathlib.Path, command: str) -> str:
    """Why a sweep or PBT directory still training (or stopped) can't be read."""
    return (
        f"{str(path)!r} is a {command} that has not finished (stopped, or still "
        f"training): its records are in its checkpoints until then; "
        f"`purejaxdrl {command} --resume {path}` "
        f"(pjd.resume_{command}({str(path)!r}) in Python) finishes it."
    )


def sweep_curves(path: pathlib.Path) -> list[Curve]:
    """One curve per setting of a sweep directory, its seeds the curve's runs.

    Reads `sweep.yaml` (the base config's algorithm, the settings and the seeds)
    and `runs/run-NNNN.jsonl`; runs go setting-major, as the sweep wrote them.
    """
    file = path / "sweep.yaml"
    with reading(file, restore_or_restart("sweep")):  # as load_sweep reads it
        meta = yaml.safe_load(file.read_text())
        if meta.get("status") == "running":
            raise ConfigError(unfinished(path, "sweep"))
        algo, seeds = meta["base"]["algo"], tuple(meta["seeds"])
        n = len(seeds)
        labels = [setting_label(values, algo) for values in meta["settings"]]
    curves = []
    for s, label in enumerate(labels):
        files = (path / "runs" / f"run-{i:04d}.jsonl" for i in range(s * n, s * n + n))
        histories = [read_history(present(f, "sweep")) for f in files]
        curves.append(Curve(label, tuple(histories), seeds))  # legend: `(2 seeds)`
    return curves


def pbt_curve(path: pathlib.Path) -> Curve:
    """A PBT directory's population as one curve: its members' mean and band.

    Members are not seeds of one setting (each changes its values and copies
    better members as it trains): the band is the population's spread, the
    line what a member's slot returns on average. Reads `pbt.yaml` and
    `members/member-NNNN.jsonl`.
    """
    file = path / "pbt.yaml"
    with reading(file, restore_or_restart("PBT run")):  # as load_pbt reads it
        meta = yaml.safe_load(file.read_text())
        if meta["status"] != "finished":
            raise ConfigError(unfinished(path, "pbt"))
        population = int(meta["population"])
    histories = tuple(
        read_history(present(path / "members" / f"member-{i:04d}.jsonl", "PBT run"))
        for i in range(population)
    )
    return Curve(f"PBT population ({population} members)", histories)


def load_curves(
    paths: str | pathlib.Path | Any | Sequence[str | pathlib.Path | Any],
) -> list[Curve]:
    """The curves of run, sweep and PBT directories (or one), in the given order.

    A sweep directory gives one curve per setting (`sweep_curves`), a PBT
    directory one of its population (`pbt_curve`); run directories whose
    configs differ only in the seed form one curve. A `pjd.train`,
    `pjd.sweep` or `pjd.pbt` result may stand in for a directory: its records
    in memory (`result_curves`), written to a directory or not.

    Args:
      paths: a run, sweep or PBT directory, or a `pjd.train`, `pjd.sweep` or
        `pjd.pbt` result; or a sequence of them.

    Returns:
      One Curve per run group, sweep setting or PBT population.

    Raises:
      ConfigError: a path that is none of these, an unfinished sweep or PBT
        run, or a run without metrics.

    """
    if isinstance(paths, str | pathlib.PurePath) or is_result(paths):
        paths = [paths]  # one folder (not its letters), or one result
    items: list[Curve | str] = []  # curves, or keys of groups of runs
    runs: dict[str, list[tuple[str, list[dict[str, Any]]]]] = {}
    seen: set[pathlib.Path] = set()
    for raw in paths:
        if is_result(raw):
            items.extend(result_curves(raw))
            continue
        if raw is None:
            raise ConfigError(
                "a path is None: pjd.train writes no run directory unless "
                "asked (write_files=True); pass the result itself instead"
            )
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
            raise ConfigError(_not_a_run(path))
        history = read_jsonl(metrics)
        if not history:
            raise ConfigError(
                f"{str(path)!r} has no metrics yet (empty metrics.jsonl); wait for "
                "its first chunk or leave it out."
            )
        config = yaml.safe_load((path / "config.yaml").read_text()) or {}
        # Runs that differ only in their seed (and folder) are seeds of one curve.
        key = json.dumps(_setting(config), sort_keys=True)
        if key not in runs:
            runs[key] = []
            items.append(key)
        runs[key].append((path.name, history, config.get("seed")))
    labels = _differences(list(runs))
    return [
        x if isinstance(x, Curve) else _runs_curve(runs[x], labels.get(x))
        for x in items
    ]


def _not_a_run(path: pathlib.Path) -> str:
    """Why `path` can't be plotted; for a folder of runs, the runs inside it."""
    inside = []
    if path.is_dir():
        own = ("config.yaml", "sweep.yaml", "pbt.yaml")
        inside = sorted(
            d for d in path.iterdir() if any((d / n).is_file() for n in own)
        )
    if not inside:
        return (
            f"{str(path)!r} is not a run, sweep or PBT directory (no "
            "metrics.jsonl, sweep.yaml or pbt.yaml); pass folders made by "
            "`purejaxdrl train`, `sweep` or `pbt`."
        )
    if len(inside) == 1:
        which = f"it holds one run, {str(inside[0])!r}: pass that"
    else:
        names = ", ".join(repr(str(d)) for d in inside[:3])
        more = f" and {len(inside) - 3} more" if len(inside) > 3 else ""
        which = (
            f"it holds {len(inside)} runs, {names}{more}: pass them "
            f"(`purejaxdrl plot {path / '*'}`)"
        )
    return (
        f"{str(path)!r} is a folder of runs (train --run-dir makes one run "
        f"inside it), not a run; {which}."
    )


def _setting(config: dict[str, Any]) -> dict[str, Any]:
    """`config` without the fields of `_NOT_SETTING`: what makes runs seeds."""
    same = json.loads(json.dumps(config))  # a copy to delete from
    free = [f.rstrip(".") for f in FREE_TO_CHANGE]
    network = config.get("network")
    core = network.get("core", "none") if isinstance(network, dict) else "none"
    for field in (*_NOT_SETTING, *free, *LAYOUT_ONLY, *ignored_fields(core)):
        *parents, name = field.split(".")
        section = same
        for parent in parents:
            section = section.get(parent, {}) if isinstance(section, dict) else {}
        if isinstance(section, dict):
            section.pop(name, None)
    return same


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
    members: list[tuple[str, list[dict[str, Any]], Any]], label: str | None = None
) -> Curve:
    """A group of runs' curve: labelled by `label` (else its first folder).

    Counted by their config seeds: two folders of one seed (a run copied, or
    trained again) are two runs of one seed, not two seeds.
    """
    seeds = tuple(seed for _, _, seed in members)
    label = (label or members[0][0]) + runs_text(seeds)
    return Curve(label, tuple(h for _, h, _ in members), seeds)
