"""PPO on a brax environment: purejaxdrl vs brax's own trainer, side by side in one run.

Trains the same PPO configuration with `purejaxdrl.training.train` and with brax's
`brax.training.agents.ppo.train` on the same machine, in one process, and reports
for each the compile time, steps/s excluding compile, and the final return; then
the ratio of steps/s (ours / brax). `--tiny` runs both on brax's trivial `fast`
env at toy sizes. With --profile it also splits one update's
time between the rollout (env + policy, no learning) and the learner.

    python scripts/bench_brax.py --env inverted_pendulum --repeats 3

The configuration is our preset `envs/<env>.yaml` (inverted_pendulum: positional
backend, episode_length 1000, 128 envs x 64 steps, 4 epochs x 8 minibatches,
lr 1e-3, gamma 0.97, observation normalisation, 64x64 tanh MLPs), with
--num-envs, --unroll-length and --total-steps applied to both runners.

Hyper-parameter mapping (ours -> brax `ppo.train` argument):
  num_envs -> num_envs; unroll_length -> unroll_length; ppo.num_epochs ->
  num_updates_per_batch; ppo.num_minibatches -> num_minibatches, with batch_size =
  num_envs / num_minibatches, so one update consumes exactly one unroll of every
  env and both minibatches hold num_envs x unroll_length / num_minibatches
  transitions; learning_rate -> learning_rate (constant: our annealing is turned
  off, brax has no annealing); entropy_cost -> entropy_cost; gamma ->
  discounting; gae_lambda -> gae_lambda; clip_eps -> clipping_epsilon; clip_value
  -> clipping_epsilon_value (clip_eps or None); value_cost -> vf_loss_coefficient
  (both losses are value_cost * 0.5 * mean squared error); max_grad_norm ->
  max_grad_norm (brax's default is no clipping); reward_scale -> reward_scaling;
  normalize_advantages -> normalize_advantage (both per minibatch);
  env.normalize_observations -> normalize_observations; network.hidden_sizes ->
  policy_hidden_layer_sizes and value_hidden_layer_sizes (two separate towers on
  both sides), network.activation -> activation; env options backend and
  episode_length -> the same brax environment and episode_length; total_steps
  -> num_timesteps (rounded down to a whole number of updates per chunk, so both
  take exactly the same number of env steps); action_repeat 1; Adam's ε: ours
  (ppo.eps) is set to brax's 1e-8 (optax's default; brax's train takes no
  optimiser).

Differences that remain (design, not configuration):
  - Initialisation: ours is orthogonal (sqrt 2 hidden, 0.01 policy head, 1.0
    value head); brax's is lecun_uniform everywhere.
  - Action distribution: both a tanh-squashed Gaussian with state-dependent
    scale and a one-sample entropy estimate; ours bounds log-std in [-5, 2] with
    a tanh, brax uses softplus(x) + 0.001 as the scale.
  - Advantages: ours computes GAE once per update with the acting parameters and
    bootstraps truncated episodes from V(final observation); brax recomputes
    values and GAE inside every minibatch loss with the current parameters, and
    masks the truncated step out instead of bootstrapping
    (bootstrap_on_timeout needs an env that sets info['time_out'], which brax's
    own EpisodeWrapper does not).
  - Minibatches: brax's are batch_size whole env trajectories; ours are time
    blocks of a shared permutation of time steps, split further over env groups
    when there are more minibatches than blocks (agents.ppo.minibatch_split).
  - Observation statistics: ours updates them after each unroll and stores the
    observations normalised as the actor saw them; brax stores raw observations
    and renormalises them with statistics updated by the new batch before SGD.
    Ours clips normalised observations to [-10, 10]; brax does not clip.
  - Auto-reset: ours draws a fresh initial state at every reset; brax's
    AutoResetWrapper returns each env to the first initial state it drew.
  - Random keys: ours uses a fused Threefry implementation; brax JAX's default.

How it is measured:
  - Both run --chunks compiled chunks (ours: num_logs; brax: training epochs,
    num_evals = chunks + 1) and the script stamps wall and CPU time (the
    process's, all threads) as each chunk ends, through a logger for ours and
    progress_fn for brax. steps/s is over chunks 2..n for both: brax's first
    epoch includes its compilation (pmap compiles on first call), so it is left
    out on both sides alike. Steps per CPU-second is reported beside it, being
    less disturbed by other processes on a shared machine.
  - Compile time: ours is `TrainResult.compile_seconds` (ahead-of-time
    compilation of init and the chunk programs); brax's is estimated as its
    first epoch's time ('training/walltime', timed by brax around the pmapped
    epoch) less one epoch at the steady rate. Our `TrainResult.steps_per_second`
    (all chunks after compilation) is reported too (own_steps_per_s), and
    ours' note says CLOCK DISAGREES where the two differ by over 10% (a
    chunk's record read by the host only after the next chunk would make
    the clock count two chunks' steps over one chunk's time).
  - run_evals=False: brax evaluates nothing during training, so nothing but
    training is timed and no evaluation is compiled inside its run.
  - Return: after training, both final policies are evaluated the same way,
    with brax's evaluation protocol (that of `acting.Evaluator`, its
    'eval/episode_reward'): --eval-envs envs with brax's training wrappers,
    reset from one fixed key (the same initial states for both), stepped for
    episode_length steps with the stochastic policy; the mean return of each
    env's first episode. Ours also reports its training return: the mean return
    of the episodes completed in its last chunk (`TrainResult.mean_return`);
    brax's would need log_training_metrics, a host callback inside the timed
    loop.

brax 0.14 calls `jax.device_put_replicated`, which JAX >= 0.8 removed; a local
shim (installed only if the attribute is missing, brax itself is not modified)
lays the replicas out as brax's pmap lays out its outputs. No other removed JAX
API is reached by brax's PPO trainer.
"""

from typing import Any

from harness import TINY_NOTE, Report, Row, interleave, parser, positive_int, run_main
from ppo_beside_brax.clock import Result, clock_note

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts a backend

__all__ = ["clock_note", "main"]  # brax is imported in main: --help stays quick


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__)
    p.set_defaults(repeats=1)
    p.add_argument("--env", default="inverted_pendulum", help="a brax preset")
    p.add_argument(
        "--total-steps", type=positive_int, default=500_000, help="default 500,000"
    )
    p.add_argument("--num-envs", type=positive_int, help="default: the preset's")
    p.add_argument("--unroll-length", type=positive_int, help="default: the preset's")
    p.add_argument("--seed", type=int, default=0, help="first seed")
    p.add_argument(
        "--chunks",
        type=positive_int,
        default=4,
        help="host round trips: our num_logs and brax's training epochs (>= 2; "
        "brax's first one compiles and is left out of its steps/s)",
    )
    p.add_argument(
        "--eval-envs",
        type=positive_int,
        default=128,
        help="environments of the final evaluation (default 128)",
    )
    p.add_argument(
        "--profile", action="store_true", help="split an update: rollout vs learner"
    )
    p.tiny_replaces = (
        "num_envs",
        "unroll_length",
        "chunks",
        "total_steps",
        "eval_envs",
    )
    args = p.parse_args(argv)
    if args.tiny:  # 64 envs: brax splits them over every device, then 8 minibatches
        args.num_envs, args.unroll_length, args.chunks = 64, 4, 3
        args.total_steps, args.eval_envs = 64 * 4 * 3, 4
    if args.chunks < 2:
        p.error("--chunks must be >= 2")
    from ppo_beside_brax.brax_side import (
        brax_env_name,
        episode_length,
        install_jax_shims,
        make_evaluate,
        run_brax,
    )
    from ppo_beside_brax.ours import make_config, our_policy_fn, run_ours
    from ppo_beside_brax.profile import profile

    install_jax_shims()
    config = make_config(args, args.chunks)
    if args.tiny:  # brax's trivial test env: both trainers, compiled in seconds
        fast = {"id": "brax/fast", "options": config.env.options}  # ant's options
        config = pjd.apply_overrides(config, {"env": fast})
    ppo = config.ppo
    report = Report(
        f"PPO on brax {brax_env_name(config)} ({config.env.options.get('backend')} "
        f"backend, episode_length {episode_length(config)}): {config.num_envs} envs "
        f"x {config.unroll_length} steps, {ppo.num_epochs} epochs x "
        f"{ppo.num_minibatches} minibatches, lr {ppo.learning_rate:g} constant, "
        f"gamma {ppo.gamma:g}, {config.total_steps:,} steps in {args.chunks} chunks"
    )
    evaluate = make_evaluate(config, args.eval_envs)
    # The same policy functions for every seed, so each evaluation compiles
    # once (brax's make_policy closures differ only by identity).
    policies: dict[str, Any] = {}

    def ours(repeat: int) -> Result:
        figures, params = run_ours(seeded(repeat))
        if "ours" not in policies:
            agent = pjd.training.make_experiment(config).agent
            policies["ours"] = our_policy_fn(agent)
        return {**figures, "eval_return": evaluate(policies["ours"], params)}

    def theirs(repeat: int) -> Result:
        figures, make_policy, params = run_brax(seeded(repeat), args.chunks)
        policies.setdefault("brax", make_policy)
        policies["brax params"] = params
        return {**figures, "eval_return": evaluate(policies["brax"], params)}

    def seeded(repeat: int) -> pjd.TrainConfig:
        return pjd.apply_overrides(config, {"seed": args.seed + repeat})

    runs = interleave({"ours": ours, "brax": theirs}, args.repeats)
    row = f"{args.eval_envs} evaluation episodes each"
    mine = Row(row, "", runs["ours"]).medians()
    a = report.add(row, "purejaxdrl", runs["ours"], clock_note(mine, args.tiny))
    b = report.add(row, "brax ppo.train", runs["brax"], "compile estimated")
    ratio = {
        k: a.medians()[k] / b.medians()[k] for k in ("steps_per_s", "cpu_steps_per_s")
    }
    report.add(row, "ratio ours / brax", [ratio], TINY_NOTE if args.tiny else "")
    if args.profile:
        brax_policy = (policies["brax"], policies["brax params"])
        profile(report, config, a.medians(), b.medians(), brax_policy)
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
