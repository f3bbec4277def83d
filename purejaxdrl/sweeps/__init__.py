"""Hyper-parameter sweeps: many runs of one config family as one compiled program.

`fields` (which config fields vary, dynamic or static), `search` (random
ranges), `spec` (the plan: grids x draws x seeds), `inputs` (the base, its
target, memory and resume directory, checked), `layout` (the (sweep, data)
mesh and batches that fit in memory), `compiled` (the vmapped, sharded init
and chunk programs), `program` (`sweep()`: trains the plan group by group,
batch by batch; `batch`, one batch's chunks, records and checkpoints;
`checkpoints`, resuming a killed sweep exactly), `advice` (a refused grid
value's fix, written as a grid), `messages` (what it reports), `result`
(per-run records, per-setting summary), `report` and `run_files` (the sweep
directory's files), `best_policy` (a run's policy, `export_run`), `rerun` (how
to train a run alone: `sweep.yaml`'s `best_run`). Population-based training on
the same batches is the subpackage `pbt`; its records are re-exported here
(`pbt()` itself is the top level's, `purejaxdrl.pbt`: here `pbt` names the
subpackage). Builds on `training` (configs, experiments, the chunk schedule)
and `observe`; never imports `cli`.
"""

from purejaxdrl.sweeps.batch import SweepStopped
from purejaxdrl.sweeps.best_policy import best_run, export_run
from purejaxdrl.sweeps.layout import Layout
from purejaxdrl.sweeps.pbt.files import export_member
from purejaxdrl.sweeps.pbt.lineage import PBTResult, ReadyStep, load_pbt
from purejaxdrl.sweeps.pbt.operators import ExploredField, PBTConfig
from purejaxdrl.sweeps.pbt.population import resume_pbt
from purejaxdrl.sweeps.program import resume_sweep, sweep
from purejaxdrl.sweeps.report import SweepResult, load_sweep
from purejaxdrl.sweeps.spec import SweepPlan

__all__ = [
    "ExploredField",
    "Layout",
    "PBTConfig",
    "PBTResult",
    "ReadyStep",
    "SweepPlan",
    "SweepResult",
    "SweepStopped",
    "best_run",
    "export_member",
    "export_run",
    "load_pbt",
    "load_sweep",
    "resume_pbt",
    "resume_sweep",
    "sweep",
]
