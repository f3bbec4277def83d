"""Host-side views of training: loggers, evaluation, rendering, learning curves.

`loggers` (JSONL, TensorBoard, W&B sinks), `progress` (the live progress
line on a terminal or in a Jupyter cell), `evaluation` (episodes
of the deterministic policy, compiled), `render` (one episode drawn as frames),
`host_evaluation` and `host_render` (the same on host environments), `play`
(the `Player` interface both kinds of run are watched through), `plots`
(curves of run and sweep directories as a PNG). Imports `runners`,
`agents`, `env`, `networks` and below; never `training`, `sweeps` or `cli`.
"""
