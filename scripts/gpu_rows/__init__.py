"""The GPU suite's rows: `bench_gpu.py` holds their table and runs them.

- `common`: what rows share: `ESTIMATES` (each row's seconds, for the
  budget), a tiny ratio's note, where `--profile` traces and the device-time
  lines it adds.
- `peers`: the rows beside a peer (ppo_cartpole with PureJaxRL; brax_ant and
  playground with brax's trainer).
- `own`: the rows of ours alone (apex_dqn, breakout_minatar, cnn_learners,
  recurrent).

Each row is `row_NAME(report, args, budget)`: it adds its lines to `report`.
"""
