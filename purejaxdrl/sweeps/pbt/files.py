"""Writing a PBT directory: its pbt.yaml, lineage tables, members' files, policy.

`pbt.yaml` says running, then finished; each member has its records, final
parameters and (where observations are normalised) observation statistics;
`export_member` writes any member's policy, `write_pbt` the best one's.

`lineage` reads them back (`load_pbt`).
"""

import csv
import dataclasses
import json
import pathlib
import shutil
from typing import Any

import flax.serialization
import numpy as np
import yaml

from purejaxdrl.sweeps.best_policy import write_run_policy
from purejaxdrl.sweeps.pbt.lineage import PBTResult, lineage_rows
from purejaxdrl.sweeps.pbt.plot import plot_pbt
from purejaxdrl.sweeps.run_files import write_records, write_run_stats
from purejaxdrl.sweeps.spec import checked_index
from purejaxdrl.training.config import run_dict
from purejaxdrl.training.policy.exported import check_policy_folder
from purejaxdrl.training.run_files import new_dir, write_atomically


def pbt_meta(result: PBTResult, status: str) -> dict[str, Any]:
    """`pbt.yaml`: what rebuilds the run (to resume or read it) and its figures."""
    return {
        "status": status,
        "base": run_dict(result.base),  # its algorithm's section, as a run's
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
        # The count, and why those steps copied nothing where none could.
        "ready_steps": max(0, len(result.lineage) - 1),
        "ready_steps_note": result.ready_steps_note,
        "mesh": None if result.mesh is None else list(result.mesh),
    }


def start_pbt_dir(result: PBTResult) -> pathlib.Path:
    """A new PBT directory holding `pbt.yaml` (status running), before training."""
    base = result.base
    path = new_dir(
        base.run_dir, f"pbt_{base.env.id.replace('/', '-')}_{base.algo}"
    ).absolute()
    result.run_dir = path
    meta = pbt_meta(result, "running")
    write_atomically(path / "pbt.yaml", yaml.safe_dump(meta, sort_keys=False))
    return path


def write_pbt(result: PBTResult) -> pathlib.Path:
    """Completes a PBT directory (`result.run_dir`, or a new one under base's).

    `pbt(..., write_files=True)` calls it once the population trained. The
    directory holds:

    - `pbt.yaml`: the base config, explored fields, PBT settings and figures;
      `status: finished`, written last (`_finish`);
    - `lineage.json` and `lineage.csv`: per ready step and member, its
      parent, score and explored values;
    - `members/member-NNNN.jsonl`: each member's records, one per chunk;
    - `params/member-NNNN.msgpack`: its final parameters and, where the
      environment normalises observations, `params/member-NNNN.obs-stats.msgpack`
      its statistics;
    - `schedules.png`: each explored field's values and the members' returns
      over the run, the best member's thick (`plot_pbt`);
    - `policy/`: the best member's policy (`export_member`, read by
      `pjd.load_policy`), unless no member ended with a finite return
      (`has_policy`).

    Its `checkpoints/` are removed once it is marked finished.
    `load_pbt(dir)` reads it back.
    """
    path = _write_files(result)
    plot_pbt(result, path / "schedules.png")
    if has_policy(result):
        # Replaced whole: a run resumed after it was killed while writing its
        # results may have written this folder before.
        export_member(result, result.best, path / "policy", overwrite=True)
    _finish(result)  # the last thing written
    return path


def has_policy(result: PBTResult) -> bool:
    """Whether a member ended with a finite return: else no policy is written."""
    return not np.isnan(result.final_return).all()


def _finish(result: PBTResult) -> None:
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


def _write_files(result: PBTResult) -> pathlib.Path:
    """Writes a PBT directory's lineage and members' files (`write_pbt`)."""
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
        write_records(path / "members" / f"member-{i:04d}.jsonl", history)
        (path / "params" / f"member-{i:04d}.msgpack").write_bytes(
            flax.serialization.msgpack_serialize(result.final_params[i])
        )
        # What its policy needs beside its parameters where observations are
        # normalised (`PBTResult.stats`, `export_member`): kept as a sweep's run.
        if result.final_stats:
            write_run_stats(path, i, result.final_stats[i], "member")
    return path


def export_member(
    result: PBTResult,
    member: int,
    out: str | pathlib.Path,
    *,
    overwrite: bool = False,
) -> pathlib.Path:
    """Writes PBT member `member`'s policy to `out`, with its observation statistics.

    Its config is the base with the member's seed (`base.seed + member`) and
    the explored values it trained with last; `pjd.load_policy(out)` loads
    it. `pbt(..., write_files=True)` writes the best member's (`result.best`)
    into the PBT directory's `policy/`. A policy already in `out` is replaced
    only with `overwrite`, as `export_run` does for a sweep's run.

    Args:
      result: a PBT's result (`pjd.pbt`'s, or `load_pbt`'s).
      member: the member's index, in [0, population) (`result.best`: the best).
      out: the folder to write (made if missing).
      overwrite: replace a policy already in `out`.

    Returns:
      `out`, as a Path.

    Raises:
      IndexError: `member` is not one of the population.
      ConfigError: `out` is a file or a run directory, or already holds a
        policy and `overwrite` is False; a loaded directory has no
        statistics for a member that normalised (`PBTResult.stats`).

    """
    member = checked_index(member, result.population, "member")
    out = pathlib.Path(out)
    check_policy_folder(out, overwrite, "out")
    section = dataclasses.replace(
        result.base.algo_config,
        **{name: v[member] for name, v in result.lineage[-1].values.items()},
    )
    config = dataclasses.replace(
        result.base, seed=result.base.seed + member, **{result.base.algo: section}
    )
    return write_run_policy(config, result.params(member), result.stats(member), out)
