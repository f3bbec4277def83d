"""Hyper-parameter sweeps: many runs of one config family as one compiled program.

`spec` (what runs: grids, random ranges, seeds), `layout` (the (sweep, data)
mesh and batches that fit in memory), `program` (`sweep()`: compiles and trains
the batches), `report` (per-run curves, per-setting summaries, files). Builds on
`training` (configs, experiments, the chunk schedule) and `observe`; never
imports `cli`.
"""
