"""A sweep run's files: its records, final parameters and observation statistics.

Under a sweep directory, run i has `runs/run-NNNN.jsonl` (one record per
chunk), `params/run-NNNN.msgpack` (its network parameters) and, where the
environment normalises observations, `params/run-NNNN.obs-stats.msgpack`
(the statistics its policy needs to act as it trained). A PBT member's
statistics are kept the same way, as `member-NNNN.obs-stats.msgpack`.

And the base config a sweep or PBT record holds (`saved_config`); reading a
damaged record is `observe.records`'.
"""

import json
import math
import pathlib
from collections.abc import Mapping
from typing import Any

import flax.serialization
import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.env.normalization import statistics_from_host, statistics_to_host
from purejaxdrl.observe.plots import read_history
from purejaxdrl.observe.records import RefusedValue, present
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.resume import UnavailableHere, config_from_dict


def plain(x: Any) -> Any:
    """`x` as YAML and JSON take it: lists, Python numbers, None for inf/NaN.

    Integers stay integers (`updates: 4`, not 4.0); numpy scalars become
    Python's, a float32 NaN None as a float's.
    """
    if isinstance(x, tuple | list):
        return [plain(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def write_records(file: pathlib.Path, history: list[dict[str, Any]]) -> None:
    """Writes a sweep run's or PBT member's records, one JSON line per chunk.

    The one writer of both (`run-NNNN.jsonl`, `member-NNNN.jsonl`): values
    through `plain`, so counts stay integers and NaN is null; `read_history`
    reads them back.
    """
    lines = (json.dumps({k: plain(v) for k, v in r.items()}) + "\n" for r in history)
    file.write_text("".join(lines))


def saved_config(data: Any, source: str) -> TrainConfig:
    """The base config a sweep or PBT record (`source`) holds.

    A module of its env.imports that does not import here, or an algorithm not
    registered in this process, is this process's to fix: its UnavailableHere
    passes as it is. A value the config refuses (in a record written whole)
    means the record changed: RefusedValue, which `reading` calls damage.

    Raises:
      UnavailableHere: the record's modules or algorithm, as `config_from_dict`.
      RefusedValue: any other field the config refuses.

    """
    if not isinstance(data, Mapping):  # a record cut short
        raise RefusedValue(f"its config is a {type(data).__name__}, not a mapping")
    try:
        return config_from_dict(data, source)
    except UnavailableHere:
        raise
    except ConfigError as e:
        raise RefusedValue(f"its config: {e}") from None


def stats_path(path: pathlib.Path, index: int, kind: str = "run") -> pathlib.Path:
    """Where run (or PBT `kind="member"`) `index` keeps its observation statistics."""
    return path / "params" / f"{kind}-{index:04d}.obs-stats.msgpack"


def write_run_stats(
    path: pathlib.Path, index: int, stats: Any, kind: str = "run"
) -> None:
    """Writes a run's (or member's) observation statistics; nothing for None."""
    if stats is not None:
        blob = flax.serialization.msgpack_serialize(statistics_to_host(stats))
        stats_path(path, index, kind).write_bytes(blob)


def write_run_files(
    path: pathlib.Path,
    index: int,
    history: list[dict[str, Any]],
    params: Any,
    stats: Any = None,
) -> None:
    """A run's records, final parameters and (if any) observation statistics."""
    write_records(path / "runs" / f"run-{index:04d}.jsonl", history)
    (path / "params" / f"run-{index:04d}.msgpack").write_bytes(
        flax.serialization.msgpack_serialize(params)
    )
    write_run_stats(path, index, stats)


def read_run_files(path: pathlib.Path, index: int) -> tuple[list[dict], Any, Any]:
    """A run's records, final parameters and statistics, as written."""
    history = read_history(present(path / "runs" / f"run-{index:04d}.jsonl", "sweep"))
    data = (path / "params" / f"run-{index:04d}.msgpack").read_bytes()
    params = flax.serialization.msgpack_restore(data)
    return history, params, read_run_stats(path, index)


def read_run_stats(path: pathlib.Path, index: int, kind: str = "run") -> Any:
    """A run's (or member's) observation statistics (RunningStatistics), or None."""
    stats = stats_path(path, index, kind)
    if not stats.exists():
        return None
    return statistics_from_host(flax.serialization.msgpack_restore(stats.read_bytes()))
