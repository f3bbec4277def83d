"""SAC on brax inverted_pendulum: purejaxdrl's sweep vs brax's own trainer.

Trains our SAC preset (`envs/inverted_pendulum.yaml`, section `sac`) for N seeds
as one vmapped sweep (`purejaxdrl.sweeps`), then brax's `brax.training.agents.sac
.train` (the installed brax package, called as is) for the same seeds one after
another, on the same environment (brax `inverted_pendulum`, positional backend,
episode_length 1000) and the same env-step budget, and reports side by side:
final return per seed (median, min, max), seeds reaching 900, env steps,
gradient steps, wall time, compile time and env steps/s with compile excluded.
`--tiny` runs both on brax's trivial `fast` env at toy sizes.

    nice -n 10 python scripts/compare_sac_brax.py --seeds 5 --total-steps 199680

Settings mapping (ours -> brax `sac.train` argument):
  num_envs 16 -> num_envs 16; sac.batch_size 256 -> batch_size 256;
  sac.learning_rate 1e-3 -> learning_rate 1e-3 (actor and critics; see below
  for α); sac.gamma 0.99 -> discounting 0.99; sac.tau 0.01 -> tau 0.01;
  sac.min_replay 2048 -> min_replay_size 2048; sac.buffer_size 100,000 ->
  max_replay_size 100,000; sac.reward_scale 1 -> reward_scaling 1;
  env.normalize_observations false -> normalize_observations False;
  network.hidden_sizes (64, 64) relu -> network_factory = make_sac_networks
  (hidden_layer_sizes=(64, 64), activation=relu), for policy and both critics;
  sac.init_alpha 1.0 -> brax's fixed initial log α = 0 (α = 1);
  total_steps -> num_timesteps; num_logs 10 -> num_evals 10 (one evaluation
  before training, then one after each of 9 training epochs).
  Replay ratio: our update acts unroll_length 4 x num_envs 16 = 64 env steps,
  then takes updates_per_step 8 gradient steps: 1 gradient step per 8 env
  steps. brax's training step acts once in every env (num_envs 16 env steps),
  then takes grad_updates_per_step steps, so the same ratio is
  grad_updates_per_step = 8 x 16 / 64 = 2 (8 would be 4x our replay ratio).
  Both then take ~24,700 gradient steps of 256 in 199,680 env steps (the table
  shows the exact counts). brax rounds its budget up: prefill ceil(2048 / 16)
  acting steps, then 9 epochs of ceil((199,680 - 2,048) / (9 x 16)) training
  steps = 199,760 env steps.
  Evaluation: brax's `acting.Evaluator` with deterministic_eval=True (mode of
  the policy), num_eval_envs envs each playing its first episode (up to 1000
  steps). Ours, after the sweep, plays the same number of episodes with its
  final parameters and the deterministic policy (`observe.evaluation`).

Which return is which:
  - purejaxdrl's primary figure is its training return: the mean return of the
    (stochastic-policy) training episodes that ended in the last chunk
    (`SweepResult.final_return`); "reached 900" is its first chunk at >= 900
    (the preset's target). Its evaluation return (deterministic, final
    parameters) is reported beside it.
  - brax's is 'eval/episode_reward' of its last evaluation (deterministic
    policy); "reached 900" counts evaluations after training began.

Differences that remain (design, not configuration):
  - Temperature: brax's α has its own Adam at lr 3e-4 and targets entropy
    -0.5 x |A|; ours uses learning_rate (1e-3) and targets -|A|.
  - Truncation: brax masks time-limit transitions out of the critic loss; ours
    bootstraps them from the final observation.
  - Initialisation: brax's lecun_uniform everywhere; ours the library's.
  - The policy's standard deviation: brax's softplus(x) + 0.001, unbounded
    above, starts near 0.7 per action dimension; ours is bounded (0.0067 to
    7.4) and starts near 0.22, so ours begins with about a third of brax's
    exploration noise (docs/guide/replay.md).
  - Replay is sampled once per brax training step for all its gradient steps
    (batch_size x grad_updates_per_step items, split); ours per gradient step.

Timing (the two sides train their seeds differently: ours all N at once,
vmapped in one program; brax one after another, as its trainer runs):
  - purejaxdrl: `SweepResult.compile_seconds` (build and compile) and
    `train_seconds` (all seeds together, vmapped in one program; compile
    excluded). Its evaluation is timed separately and not counted.
  - brax: its training loop times the replay prefill and each pmapped epoch
    ('training/walltime'); the first of both compile on first call (pmap), and
    each seed's `train()` call compiles afresh (its functions are closures).
    Steps/s is over epochs 2..9 (no compilation, no evaluation); compile time
    is estimated as prefill + first epoch less their steps at that rate;
    "train time" is the budget at that rate. Wall time is each `train()` call,
    compile and evaluations included, summed over seeds.
  - Both sides report two steps/s figures. `steps_per_s`: the N seeds' env
    steps over the training time of all N (ours: the one vmapped program;
    brax: its N runs' summed), the time to train N seeds. `run_steps_per_s`:
    one run's env steps over the time that run took (ours: the same program,
    N seeds sharing it, so `steps_per_s` / N; brax: its runs' steps over
    their summed times, one run's rate pooled, so its `steps_per_s` again).
    With N > 1 the first favours ours (it vectorises over seeds) and the
    second brax (our N runs share the machine); `--seeds 1` times one lone
    run on each side.

brax >= 0.14 calls `jax.device_put_replicated`, which JAX >= 0.8 removed;
scripts/bench_brax.py's shim is installed only if the attribute is missing
(brax itself is not modified). If brax's trainer still fails, the
script prints why and exits with status 2.
"""

import functools
import math
import sys
import time
import traceback
import warnings
from typing import Any

import brax
import jax
import numpy as np
from brax import envs as brax_envs
from brax.training.agents.sac import networks as brax_sac_networks
from brax.training.agents.sac import train as brax_sac
from flax import linen
from harness import Report, parser, positive_int, run_main
from ppo_beside_brax.brax_side import install_jax_shims  # scripts/ on the path

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts a backend
from purejaxdrl.observe.evaluation import make_evaluate
from purejaxdrl.training.experiment import make_networks
from purejaxdrl.training.run_env import make_env

# brax warns, at every env it builds, that its pipelines are not maintained.
warnings.filterwarnings("ignore", category=UserWarning, module="brax")

PRESET = "inverted_pendulum"
TARGET = 900.0
ACTIVATIONS = {"relu": linen.relu, "tanh": linen.tanh}
# --tiny: brax's trivial test env, a small replay, 3 logs (brax: 2 epochs, the
# second timed), 8 evaluation episodes.
TINY = {
    "env": {"id": "brax/fast", "options": {"episode_length": 16}},
    "sac": {"min_replay": 64, "buffer_size": 4096, "batch_size": 32},
    "num_logs": 3,
}


def make_config(total_steps: int, tiny: bool) -> pjd.TrainConfig:
    """Our SAC preset, its budget rounded down to whole updates per chunk."""
    config = pjd.load_preset(PRESET, "sac").config
    if tiny:
        config = pjd.apply_overrides(config, TINY)
    step = config.steps_per_update * config.num_logs
    total = max(step, total_steps // step * step)
    return pjd.apply_overrides(config, {"total_steps": total})


def our_grad_steps(config: pjd.TrainConfig) -> int:
    """Our SAC's gradient steps: updates_per_step per update once replay is ready."""
    first_ready = math.ceil(config.sac.min_replay / config.steps_per_update)
    return (config.num_updates - first_ready + 1) * config.sac.updates_per_step


def run_ours(
    config: pjd.TrainConfig, seeds: int, episodes: int
) -> tuple[list[dict], dict]:
    """Trains our preset for `seeds` seeds as one sweep and evaluates each run.

    Returns:
      Figures per seed (returns), and the figures of all seeds together (cost).

    """
    start = time.perf_counter()
    result = pjd.sweep(config, seeds=seeds, target_return=TARGET, console=False)
    wall = time.perf_counter() - start
    for line in result.messages:
        print(f"  [purejaxdrl] {line}")

    env, env_params = make_env(config)
    network, _ = make_networks(config, env, env_params)
    evaluate = make_evaluate(env, network, episodes=episodes)
    per_seed = []
    for run in range(result.plan.num_runs):
        key = jax.random.key(10_000 + run)
        evaluated = evaluate(result.final_params[run], env_params, key)
        returns = jax.device_get(evaluated.returns)
        per_seed.append(
            {
                "train_return": float(result.final_return[run]),
                "eval_return": float(np.mean(returns)),
                "reached_target": float(not np.isnan(result.steps_to_target[run])),
            }
        )
    steps = result.histories[0][-1]["env_steps"]
    cost = {
        "env_steps": steps,
        "grad_steps": our_grad_steps(config),
        "wall_s": wall,
        "compile_s": result.compile_seconds,  # once, all seeds
        "train_s": result.train_seconds,
        # All N seeds' steps over the one program's time; per run, N share it.
        "steps_per_s": steps * seeds / result.train_seconds,
        "run_steps_per_s": steps / result.train_seconds,
    }
    return per_seed, cost


def run_brax_seed(
    config: pjd.TrainConfig, seed: int, grad_updates: int, episodes: int
) -> dict[str, Any]:
    """brax's `sac.train` with our settings, for one seed.

    Raises:
      SystemExit: brax's trainer failed (the traceback is printed).

    """
    options = config.env.options
    name = config.env.id.partition("/")[2]
    env = brax_envs.get_environment(
        name, **{"backend": options.get("backend")} if "backend" in options else {}
    )
    sac = config.sac
    network_factory = functools.partial(
        brax_sac_networks.make_sac_networks,
        hidden_layer_sizes=tuple(config.network.hidden_sizes),
        activation=ACTIVATIONS[config.network.activation],
    )
    evals: list[tuple[int, float]] = []
    walltimes: list[float] = []
    steps: list[int] = []

    def progress(step: int, metrics: dict[str, Any]) -> None:
        evals.append((int(step), float(metrics["eval/episode_reward"])))
        if "training/walltime" in metrics:
            walltimes.append(float(metrics["training/walltime"]))
            steps.append(int(step))

    start = time.perf_counter()
    try:
        brax_sac.train(
            environment=env,
            num_timesteps=config.total_steps,
            episode_length=int(options["episode_length"]),
            num_envs=config.num_envs,
            num_eval_envs=episodes,
            learning_rate=sac.learning_rate,
            discounting=sac.gamma,
            seed=seed,
            batch_size=sac.batch_size,
            num_evals=config.num_logs,
            normalize_observations=config.env.normalize_observations,
            reward_scaling=sac.reward_scale,
            tau=sac.tau,
            min_replay_size=sac.min_replay,
            max_replay_size=sac.buffer_size,
            grad_updates_per_step=grad_updates,
            deterministic_eval=True,
            network_factory=network_factory,
            progress_fn=progress,
        )
    except Exception as err:  # noqa: BLE001 (reported, then the script stops)
        traceback.print_exc()
        print(
            f"\nbrax {brax.__version__} sac.train failed on jax {jax.__version__}: "
            f"{type(err).__name__}: {err}",
            file=sys.stderr,
        )
        raise SystemExit(2) from err
    wall = time.perf_counter() - start
    # Env steps/s over epochs 2..n (no compilation, no evaluation).
    if len(steps) < 2:
        rate = steps[-1] / walltimes[-1]
    else:
        rate = (steps[-1] - steps[0]) / (walltimes[-1] - walltimes[0])
    print(
        f"  [brax] seed {seed}: {wall:.1f} s, {rate:,.0f} steps/s after epoch 1; "
        f"eval returns {', '.join(f'{r:.0f}' for _, r in evals)}"
    )
    return {
        "eval_return": evals[-1][1],
        "reached_target": float(any(v >= TARGET for s, v in evals if s > 0)),
        "env_steps": steps[-1],
        "wall_s": wall,
        "compile_s": walltimes[0] - steps[0] / rate,  # estimated
        "train_s": steps[-1] / rate,
    }


def run_brax(
    config: pjd.TrainConfig, seeds: int, episodes: int
) -> tuple[list[dict], dict]:
    """brax's SAC for seeds 0..seeds-1, one after another: per seed, and in all."""
    grad_updates = (
        config.sac.updates_per_step * config.num_envs // config.steps_per_update
    )
    runs = [run_brax_seed(config, s, grad_updates, episodes) for s in range(seeds)]
    num_envs, epochs = config.num_envs, config.num_logs - 1
    prefill = -(-config.sac.min_replay // num_envs)
    per_epoch = -(-(config.total_steps - prefill * num_envs) // (epochs * num_envs))
    train_s = sum(r["train_s"] for r in runs)
    cost = {
        "env_steps": runs[0]["env_steps"],
        "grad_steps": epochs * per_epoch * grad_updates,
        "wall_s": sum(r["wall_s"] for r in runs),
        "compile_s": sum(r["compile_s"] for r in runs),  # every train() compiles
        "train_s": train_s,
        # All N seeds' steps over their summed time: run after run, that is
        # also one run's rate.
        "steps_per_s": runs[0]["env_steps"] * seeds / train_s,
        "run_steps_per_s": runs[0]["env_steps"] * seeds / train_s,
    }
    keys = ("eval_return", "reached_target")
    return [{k: r[k] for k in keys} for r in runs], cost


def main(argv: list[str] | None = None) -> Report:
    """Parses the arguments, trains both, reports the table."""
    p = parser(__doc__, repeats=False)  # whole runs, once each
    p.add_argument("--seeds", type=positive_int, default=5, help="seeds 0..N-1")
    p.add_argument(
        "--total-steps", type=positive_int, default=199_680, help="env steps"
    )
    p.add_argument(
        "--eval-episodes", type=positive_int, default=128
    )  # brax's num_eval_envs
    args = p.parse_args(argv)
    if args.tiny:
        args.seeds, args.total_steps, args.eval_episodes = 1, 512, 8
    if args.seeds < 1:
        p.error("--seeds must be >= 1")
    install_jax_shims()  # bench_brax's: brax's SAC and PPO share the pmap axis
    config = make_config(args.total_steps, args.tiny)
    sac = config.sac
    brax_steps = sac.updates_per_step * config.num_envs // config.steps_per_update
    report = Report(
        f"SAC on {config.env.id}: purejaxdrl sweep vs brax {brax.__version__} "
        f"sac.train, {args.seeds} seeds, {config.total_steps:,} env steps, "
        f"{config.num_envs} envs, batch {sac.batch_size}, replay "
        f"{sac.min_replay:,}..{sac.buffer_size:,}, {sac.updates_per_step} grad "
        f"steps / {config.steps_per_update} env steps (brax: {brax_steps} / "
        f"{config.num_envs}), MLP {tuple(config.network.hidden_sizes)}"
    )
    ours, our_cost = run_ours(config, args.seeds, args.eval_episodes)
    theirs, their_cost = run_brax(config, args.seeds, args.eval_episodes)
    row = "returns per seed"
    report.add(row, "purejaxdrl SAC (sweep)", ours, "train: last chunk's episodes")
    report.add(row, "brax sac.train", theirs, "its last evaluation")
    row = (
        f"all {args.seeds} seeds (steps/s: all seeds' steps over the time to "
        "train them; run_steps/s: per run; compile excluded)"
    )
    report.add(
        row,
        "purejaxdrl SAC (sweep)",
        [our_cost],
        f"{args.seeds} seeds vmapped in one program, compiled once",
    )
    report.add(
        row,
        "brax sac.train",
        [their_cost],
        f"{args.seeds} runs one after another, compile estimated per run",
    )
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
