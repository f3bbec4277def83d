"""Population-based training (PBT): a sweep batch with ready steps between chunks.

A population is one batch of a sweep (its members are the runs, stacked on
the leading axis and trained by the same compiled chunk program); every
`ready` chunks the bottom quantile copies a top member's learner state and
perturbs its explored fields, on the device. `operators` (the jitted rank /
exploit / explore and `PBTConfig`), `inputs` (its settings, members and
explored fields, checked), `layout` (the population's mesh and programs,
refused if it does not fit), `train` (the chunk loop with its ready steps),
`store` (its checkpoints: resume where it stopped), `population` (`pbt()`,
`resume_pbt()`), `lineage` (`PBTResult`, `load_pbt`), `files` and `plot` (a
PBT directory's files and picture). Builds on the modules of `sweeps`
(batches, compiled programs, messages, run files), which never import it:
only `sweeps/__init__.py` re-exports its records.
"""
