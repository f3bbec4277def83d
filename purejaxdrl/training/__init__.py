"""The host side of one training run.

`config` (TrainConfig: the run's fields and a section per registered algorithm;
validation), `presets` (tuned configs from envs/), `experiment` (the env,
networks, agent and runner a config describes), and `train()` as a recipe of
small steps: `run` (run directory, checkpointer, restore), `programs` (compile
the chunks, init, evaluation), `loop` (dispatch / observe / evaluate /
checkpoint / stop per chunk, on `schedule`'s chunks), then finish (`result`,
`run_files`). The recipe is one for device and host environments: the
experiment picks the Anakin or the Sebulba runner (`runners.base.Runner`)
and the player of its episodes (`observe.play.Player`).
`checkpoint`, `packing`, `resume` and `faults` hold the pieces those steps use;
`policy` turns a finished run into a policy outside training. Imports
`observe`, `runners`, `agents` and below; never `sweeps` or `cli`.
"""
