"""Hyper-parameter sweeps: many runs of one config family as one compiled program.

`fields` (which config fields vary, dynamic or static), `search` (random
ranges), `spec` (the plan: grids x draws x seeds), `inputs` (the base, its
target, memory and resume directory, checked), `layout` (the (sweep, data)
mesh and batches that fit in memory), `compiled` (the vmapped, sharded init
and chunk programs), `program` (`sweep()`: trains the plan group by group,
batch by batch), `messages` (what it reports), `result` (per-run records,
per-setting summary), `report` and `run_files` (the sweep directory's files),
`best_policy` (a run's policy, `export_run`), `rerun` (how to train a run
alone: `sweep.yaml`'s `best_run`); population-based training on
the same batches: `pbt_operators` (its jitted rank / exploit / explore),
`pbt_inputs` (its settings and members, checked), `population` (`pbt()`:
ready steps between chunks), `lineage` (PBTResult, `load_pbt`),
`pbt_files` (a PBT directory's files). Builds on `training` (configs, experiments, the
chunk schedule) and `observe`; never imports `cli`.
"""

from purejaxdrl.sweeps.batch import SweepStopped
from purejaxdrl.sweeps.best_policy import best_run, export_run
from purejaxdrl.sweeps.layout import Layout
from purejaxdrl.sweeps.lineage import PBTResult, ReadyStep, load_pbt
from purejaxdrl.sweeps.pbt_files import export_member
from purejaxdrl.sweeps.pbt_operators import ExploredField, PBTConfig
from purejaxdrl.sweeps.population import pbt, resume_pbt
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
    "pbt",
    "resume_pbt",
    "resume_sweep",
    "sweep",
]
