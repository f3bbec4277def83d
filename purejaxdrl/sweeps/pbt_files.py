"""Writing a PBT directory: its pbt.yaml, lineage tables and members' files.

`pbt.yaml` says running, then finished; each member has its records, final
parameters and (where observations are normalised) observation statistics.

`lineage` reads them back (`load_pbt`).
"""

import csv
import dataclasses
import json
import pathlib
import shutil
from typing import Any

import flax.serialization
import yaml

from purejaxdrl.config import to_dict
from purejaxdrl.sweeps.lineage import PBTResult, finite_or_none, lineage_rows
from purejaxdrl.sweeps.run_files import write_run_stats
from purejaxdrl.training.run_files import new_dir, write_atomically


def pbt_meta(result: PBTResult, status: str) -> dict[str, Any]:
    """`pbt.yaml`: what rebuilds the run (to resume or read it) and its figures."""
    return {
        "status": status,
        "base": to_dict(result.base),
        "fields": [dataclasses.asdict(f) for f in result.fields],
        "pbt": {
            **dataclasses.asdict(result.config),
            "perturb": list(result.config.perturb),
        },
        "population": result.population,
        "search_seed": result.search_seed,
        "target_return": result.target_return,
        "diverged": result.diverged,
        "compile_seconds": result.compile_seconds,
        "train_seconds": result.train_seconds,
        "best_member": result.best if status == "finished" else None,
        "mesh": None if result.mesh is None else list(result.mesh),
    }


def start_pbt_dir(result: PBTResult) -> pathlib.Path:
    """A new PBT directory holding `pbt.yaml` (status running), before training."""
    base = result.base
    path = new_dir(base.run_dir, f"pbt_{base.env.id.replace('/', '-')}_{base.algo}")
    result.run_dir = path
    meta = pbt_meta(result, "running")
    write_atomically(path / "pbt.yaml", yaml.safe_dump(meta, sort_keys=False))
    return path


def write_pbt(result: PBTResult) -> pathlib.Path:
    """Completes a PBT directory (`result.run_dir`, or a new one under base's).

    It holds `pbt.yaml` (base config, explored fields, PBT settings, figures),
    `lineage.json` and `lineage.csv` (per ready step and member: parent,
    score, explored values), `members/member-NNNN.jsonl` (each member's
    records), `params/member-NNNN.msgpack` (its final parameters) and, where
    the environment normalises observations, `params/member-NNNN.obs-stats.msgpack`
    (its statistics); its checkpoints are removed. `load_pbt(dir)` reads it back.
    """
    path = write_pbt_files(result)
    finish_pbt(result)
    return path


def finish_pbt(result: PBTResult) -> None:
    """Marks a PBT directory finished, then drops its checkpoints.

    The last thing written: until `pbt.yaml` says finished (replaced whole),
    `purejaxdrl pbt --resume` continues the run from its checkpoints and
    writes every result again, so a process killed while writing them loses
    nothing.
    """
    path = result.run_dir
    meta = pbt_meta(result, "finished")
    write_atomically(path / "pbt.yaml", yaml.safe_dump(meta, sort_keys=False))
    shutil.rmtree(path / "checkpoints", ignore_errors=True)  # a finished run's


def write_pbt_files(result: PBTResult) -> pathlib.Path:
    """Writes a PBT directory's results, but does not mark it finished."""
    path = result.run_dir or start_pbt_dir(result)
    (path / "members").mkdir(exist_ok=True)
    (path / "params").mkdir(exist_ok=True)
    rows = lineage_rows(result)
    (path / "lineage.json").write_text(json.dumps(rows, indent=1) + "\n")
    with (path / "lineage.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(
            {k: "" if v is None else v for k, v in r.items()} for r in rows
        )
    for i, history in enumerate(result.histories):
        lines = [
            json.dumps({k: finite_or_none(v) for k, v in r.items()}) for r in history
        ]
        (path / "members" / f"member-{i:04d}.jsonl").write_text("\n".join(lines) + "\n")
        (path / "params" / f"member-{i:04d}.msgpack").write_bytes(
            flax.serialization.msgpack_serialize(result.final_params[i])
        )
        # What its policy needs beside its parameters where observations are
        # normalised (`PBTResult.stats`, `export_member`): kept as a sweep's run.
        if result.final_stats:
            write_run_stats(path, i, result.final_stats[i], "member")
    return path
