"""Host-side views of training: loggers, evaluation, rendering, learning curves.

`loggers` (JSONL, TensorBoard, W&B sinks), `progress` (the live progress line
on a terminal or in a Jupyter cell; `progress_figures`, its figures), `play`
(the `Player` interface every run is watched through, and the deterministic
policy; `play_args`, the checks of its episodes, steps and seed;
`inline_figure`, a figure Jupyter draws), `evaluation` (episodes of that
policy, compiled on device or looped on the host), `render` (one episode played
and drawn), `gif` (frames and GIFs), `mujoco_render` (Playground episodes drawn
with MuJoCo's own renderer, off screen), `players` (the device and host
`Player`s), `notebook_count` (a count in a Jupyter cell, updated in place),
`curves` (learning curves read from run, sweep and PBT directories, seeds
aligned by env steps; `curve`, one of them and its label; `result_curves`,
those of results in memory), `records` (a sweep's or PBT run's records read
back, a damaged or missing one named in one line), `plots` (those curves drawn:
a figure, written as a PNG if asked), `numbers` (how a return is printed: the
one precision rule; tables as Jupyter renders them). Imports `runners`,
`agents`, `env`, `networks` and below; never `training`, `sweeps` or `cli`.
"""

from purejaxdrl.observe.loggers import JsonlLogger, Logger, TensorBoardLogger
from purejaxdrl.observe.play import Drawn, EvalResult, Player, PlayState
from purejaxdrl.observe.plots import Curve, load_curves, plot_curves
from purejaxdrl.observe.render import Episode, record_episode, render

# What a user writes against: a logger of their own (`train(loggers=...)`),
# curves from run and sweep directories, an episode played and drawn, the
# episodes a player (`Experiment.player.evaluate`, `evaluate_policy`) scores,
# the player itself, the state it plays and the episode it draws.
__all__ = [
    "Curve",
    "Drawn",
    "Episode",
    "EvalResult",
    "JsonlLogger",
    "Logger",
    "PlayState",
    "Player",
    "TensorBoardLogger",
    "load_curves",
    "plot_curves",
    "record_episode",
    "render",
]
