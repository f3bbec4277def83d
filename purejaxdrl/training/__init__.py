"""The host side of one training run.

`config` (TrainConfig, presets, validation), `experiment` (the env, networks,
agent and runner a config describes), and the host loop `train` as a pipeline of
small steps: run directory (`run_files`), compile, restore (`checkpoint`,
`packing`, `resume`), then dispatch / observe / evaluate / checkpoint / stop
(`faults`) per chunk, then finish. `policy` turns a finished run into a policy
outside training. Imports `observe`, `runners`, `agents` and below; never
`sweep` or `cli`.
"""
