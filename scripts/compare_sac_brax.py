"""SAC on brax inverted_pendulum: purejaxdrl's sweep vs brax's own trainer.

Trains our SAC preset (`envs/inverted_pendulum.yaml`, section `sac`) for N seeds
as one vmapped sweep (`purejaxdrl.sweeps`), then brax's `brax.training.agents.sac
.train` (the installed brax package, called as is) for the same seeds one after
another, on the same environment (brax `inverted_pendulum`, positional backend,
episode_length 1000) and the same env-step budget, and prints one table side by
side: final return (mean ± std over seeds), seeds reaching 900, env steps,
gradient steps, wall time, compile time and env steps/s with compile excluded.

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
    parameters) is printed beside it.
  - brax's is 'eval/episode_reward' of its last evaluation (deterministic
    policy); "reached 900" counts evaluations after training began.

Differences that remain (design, not configuration):
  - Temperature: brax's α has its own Adam at lr 3e-4 and targets entropy
    -0.5 x |A|; ours uses learning_rate (1e-3) and targets -|A|.
  - Truncation: brax masks time-limit transitions out of the critic loss; ours
    bootstraps them from the final observation.
  - Initialisation: brax's lecun_uniform everywhere; ours the library's.
  - Replay is sampled once per brax training step for all its gradient steps
    (batch_size x grad_updates_per_step items, split); ours per gradient step.

Timing:
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

brax >= 0.14 calls `jax.device_put_replicated`, which JAX >= 0.8 removed;
scripts/bench_brax.py's shim is installed only if the attribute is missing
(brax itself is not modified). If brax's trainer still fails, the
script prints why and exits with status 2.
"""

import argparse
import dataclasses
import functools
import math
import os
import sys
import time
import traceback
import warnings
from collections.abc import Sequence
from typing import Any

import brax
import jax
import numpy as np
from bench_brax import install_jax_shims  # scripts/ is on the path when run
from brax import envs as brax_envs
from brax.training.agents.sac import networks as brax_sac_networks
from brax.training.agents.sac import train as brax_sac
from flax import linen

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts a backend
from purejaxdrl.observe.evaluation import make_evaluate
from purejaxdrl.training.experiment import make_env, make_networks

# brax warns, at every env it builds, that its pipelines are not maintained.
warnings.filterwarnings("ignore", category=UserWarning, module="brax")

PRESET = "inverted_pendulum"
TARGET = 900.0
NUM_EVALS = 10
EVAL_EPISODES = 128  # brax's default num_eval_envs
ACTIVATIONS = {"relu": linen.relu, "tanh": linen.tanh}


@dataclasses.dataclass
class Row:
    """One library's results over seeds (None where it does not apply)."""

    train_returns: list[float] | None  # final training return per seed
    eval_returns: list[float]  # final deterministic evaluation return per seed
    reached: int  # seeds whose primary return reached TARGET at some log
    env_steps: int  # per seed
    grad_steps: int  # per seed
    wall_seconds: float  # all seeds, compile (and brax's evals) included
    compile_seconds: float  # all seeds
    train_seconds: float  # all seeds, compile excluded
    steps_per_second: float  # all seeds' env steps / train_seconds
    compile_note: str = ""


def make_config(total_steps: int) -> pjd.TrainConfig:
    """Our SAC preset, its budget rounded down to whole updates per chunk."""
    config = pjd.load_preset(PRESET, "sac").config
    step = config.steps_per_update * config.num_logs
    total = max(step, total_steps // step * step)
    return pjd.apply_overrides(config, {"total_steps": total})


def our_grad_steps(config: pjd.TrainConfig) -> int:
    """Our SAC's gradient steps: updates_per_step per update once replay is ready."""
    first_ready = math.ceil(config.sac.min_replay / config.steps_per_update)
    return (config.num_updates - first_ready + 1) * config.sac.updates_per_step


def run_ours(config: pjd.TrainConfig, seeds: int) -> Row:
    """Trains our preset for `seeds` seeds as one sweep and evaluates each run.

    Returns:
      The row: training and evaluation returns per seed, timings.

    """
    start = time.perf_counter()
    result = pjd.sweep(config, seeds=seeds, target_return=TARGET)
    wall = time.perf_counter() - start
    for line in result.messages:
        print(f"  [purejaxdrl] {line}")

    env, env_params = make_env(config)
    network, _ = make_networks(config, env, env_params)
    evaluate = make_evaluate(env, network, episodes=EVAL_EPISODES)
    t = time.perf_counter()
    eval_returns = []
    for run in range(result.plan.num_runs):
        key = jax.random.key(10_000 + run)
        returns, _ = jax.device_get(evaluate(result.final_params[run], env_params, key))
        eval_returns.append(float(np.mean(returns)))
    print(f"  [purejaxdrl] evaluation of {seeds} runs: {time.perf_counter() - t:.1f} s")

    steps = result.histories[0][-1]["env_steps"]
    return Row(
        train_returns=[float(x) for x in result.final_return],
        eval_returns=eval_returns,
        reached=int(np.sum(~np.isnan(result.steps_to_target))),
        env_steps=steps,
        grad_steps=our_grad_steps(config),
        wall_seconds=wall,
        compile_seconds=result.compile_seconds,
        train_seconds=result.train_seconds,
        steps_per_second=steps * seeds / result.train_seconds,
        compile_note="once, all seeds",
    )


@dataclasses.dataclass
class BraxRun:
    """One brax seed: its evaluations and timings."""

    evals: list[tuple[int, float]]  # (env steps, eval/episode_reward)
    walltimes: list[float]  # 'training/walltime' after each epoch
    steps: list[int]  # env steps after each epoch
    wall_seconds: float
    eval_seconds: float  # brax's 'eval/walltime': its evaluations, all of them

    def steady_rate(self) -> float:
        """Env steps/s over epochs 2..n (no compilation, no evaluation)."""
        if len(self.steps) < 2:
            return self.steps[-1] / self.walltimes[-1]
        return (self.steps[-1] - self.steps[0]) / (
            self.walltimes[-1] - self.walltimes[0]
        )


def run_brax_seed(config: pjd.TrainConfig, seed: int, grad_updates: int) -> BraxRun:
    """brax's `sac.train` with our settings, for one seed.

    Raises:
      SystemExit: brax's trainer failed (the traceback is printed).

    """
    options = config.env.options
    env = brax_envs.get_environment(PRESET, backend=options["backend"])
    sac = config.sac
    network_factory = functools.partial(
        brax_sac_networks.make_sac_networks,
        hidden_layer_sizes=tuple(config.network.hidden_sizes),
        activation=ACTIVATIONS[config.network.activation],
    )
    evals: list[tuple[int, float]] = []
    walltimes: list[float] = []
    steps: list[int] = []
    eval_seconds = [0.0]

    def progress(step: int, metrics: dict[str, Any]) -> None:
        evals.append((int(step), float(metrics["eval/episode_reward"])))
        eval_seconds[0] = float(metrics.get("eval/walltime", 0.0))
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
            num_eval_envs=EVAL_EPISODES,
            learning_rate=sac.learning_rate,
            discounting=sac.gamma,
            seed=seed,
            batch_size=sac.batch_size,
            num_evals=NUM_EVALS,
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
    return BraxRun(evals, walltimes, steps, wall, eval_seconds[0])


def run_brax(config: pjd.TrainConfig, seeds: int) -> Row:
    """brax's SAC for seeds 0..seeds-1, one after another."""
    grad_updates = (
        config.sac.updates_per_step * config.num_envs // config.steps_per_update
    )
    runs = []
    for seed in range(seeds):
        run = run_brax_seed(config, seed, grad_updates)
        curve = ", ".join(f"{r:.0f}" for _, r in run.evals)
        print(
            f"  [brax] seed {seed}: {run.wall_seconds:.1f} s, {run.steady_rate():,.0f} "
            f"steps/s after epoch 1, {run.eval_seconds:.1f} s evaluating; eval "
            f"returns {curve}"
        )
        runs.append(run)

    num_envs, epochs = config.num_envs, NUM_EVALS - 1
    prefill = -(-config.sac.min_replay // num_envs)
    per_epoch = -(-(config.total_steps - prefill * num_envs) // (epochs * num_envs))
    train_seconds = sum(r.steps[-1] / r.steady_rate() for r in runs)
    compile_seconds = sum(r.walltimes[0] - r.steps[0] / r.steady_rate() for r in runs)
    env_steps = runs[0].steps[-1]
    return Row(
        train_returns=None,
        eval_returns=[r.evals[-1][1] for r in runs],
        reached=sum(any(v >= TARGET for s, v in r.evals if s > 0) for r in runs),
        env_steps=env_steps,
        grad_steps=epochs * per_epoch * grad_updates,
        wall_seconds=sum(r.wall_seconds for r in runs),
        compile_seconds=compile_seconds,
        train_seconds=train_seconds,
        steps_per_second=env_steps * seeds / train_seconds,
        compile_note=f"est., {seeds}x: every train() compiles",
    )


def mean_std(values: Sequence[float] | None) -> str:
    """`mean ± std` over seeds (population std), or a dash."""
    if values is None:
        return "—"
    x = np.asarray(values, dtype=float)
    return f"{np.nanmean(x):.1f} ± {np.nanstd(x):.1f}"


def finals_at_target(values: Sequence[float] | None) -> str:
    """How many seeds end at or above the target."""
    if values is None:
        return "—"
    return f"{sum(v >= TARGET for v in values)}/{len(values)}"


def table_cells(r: Row, seeds: int) -> list[str]:
    """One library's column of the table, in the order of `ROW_NAMES`."""
    return [
        mean_std(r.train_returns),
        mean_std(r.eval_returns),
        f"{r.reached}/{seeds}",
        finals_at_target(r.train_returns),
        finals_at_target(r.eval_returns),
        f"{r.env_steps:,}",
        f"{r.grad_steps:,}",
        f"{r.wall_seconds:.1f}",
        f"{r.compile_seconds:.1f} ({r.compile_note})",
        f"{r.train_seconds:.1f}",
        f"{r.steps_per_second:,.0f}",
    ]


ROW_NAMES = [
    "final return, training episodes (stochastic)",
    f"final return, eval {EVAL_EPISODES} episodes (deterministic)",
    "seeds reaching 900 at any log (primary return)",
    "seeds >= 900 at the end, training return",
    "seeds >= 900 at the end, eval return",
    "env steps per seed",
    "gradient steps per seed (batch 256)",
    "wall time, all seeds, compile included [s]",
    "compile time, all seeds [s]",
    "train time, all seeds, compile excluded [s]",
    "env steps/s, all seeds, compile excluded",
]


def print_table(ours: Row, theirs: Row, seeds: int) -> None:
    """The side-by-side table: one line per figure, one column per library."""
    cells = list(
        zip(
            ROW_NAMES, table_cells(ours, seeds), table_cells(theirs, seeds), strict=True
        )
    )
    head = ("", "purejaxdrl SAC (sweep)", "brax sac.train")
    widths = [max(len(c[i]) for c in [head, *cells]) for i in range(3)]
    line = "  ".join("-" * w for w in widths)
    for cell in [None, head, None, *cells, None]:
        if cell is None:
            print(line)
        else:
            print("  ".join(c.ljust(w) for c, w in zip(cell, widths, strict=True)))
    print(
        "primary return: purejaxdrl = training episodes of its last chunk; brax = "
        "its last evaluation ('eval/episode_reward', deterministic policy)."
    )


def main() -> None:
    """Parses the arguments, trains both, prints the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1")
    parser.add_argument("--total-steps", type=int, default=199_680, help="env steps")
    args = parser.parse_args()
    if args.seeds < 1:
        parser.error("--seeds must be >= 1")

    had = hasattr(jax, "device_put_replicated")
    install_jax_shims()  # bench_brax's: brax's SAC and PPO share the pmap axis
    shims = [] if had else ["jax.device_put_replicated"]
    config = make_config(args.total_steps)
    sac = config.sac
    print(
        f"jax {jax.__version__}, brax {brax.__version__} on "
        f"{jax.devices()[0].device_kind} ({os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f}); shims: {', '.join(shims) or 'none'}"
    )
    print(
        f"{PRESET} (positional, episode_length 1000): {args.seeds} seeds, "
        f"{config.total_steps:,} env steps, {config.num_envs} envs, batch "
        f"{sac.batch_size}, lr {sac.learning_rate:g}, gamma {sac.gamma:g}, tau "
        f"{sac.tau:g}, replay {sac.min_replay:,}..{sac.buffer_size:,}, "
        f"{sac.updates_per_step} grad steps / {config.steps_per_update} env steps "
        f"(brax: {sac.updates_per_step * config.num_envs // config.steps_per_update} "
        f"/ {config.num_envs}), MLP {tuple(config.network.hidden_sizes)} "
        f"{config.network.activation}, raw observations"
    )
    print("purejaxdrl sweep ...", flush=True)
    ours = run_ours(config, args.seeds)
    print("brax sac.train ...", flush=True)
    theirs = run_brax(config, args.seeds)
    print()
    print_table(ours, theirs, args.seeds)


if __name__ == "__main__":
    main()
