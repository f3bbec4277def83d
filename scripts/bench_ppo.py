"""PPO on CartPole-v1: purejaxdrl vs PureJaxRL's ppo.py, side by side in one run.

Reports compile time, steps/s excluding compile, the final mean return, and the
ceiling (env step + policy forward only, no learning) for the standard
single-file configuration (4 envs x 128 steps, 4 epochs x 4 minibatches, 500k
steps, lr 2.5e-4 annealed); then a throughput configuration (2048 envs) with the
ratio of training steps/s to its ceiling.

PureJaxRL's code is not part of this repository: pass the path of a checkout of
https://github.com/luchris429/purejaxrl with --purejaxrl (needs `pip install
-e ".[bench]"` for distrax). Its env is given gymnax 1.0's step through a
five-value shim (done = terminated or truncated), which is how it runs on
gymnax >= 1.0.

`--algo ppo impala a2c` runs the same two configurations (same num_envs and
unroll_length) for each algorithm, interleaved in one run, with that algorithm's
cartpole preset hyper-parameters (PPO: the standard ones above), and reports
each one's steps/s relative to the first. PureJaxRL's side runs for PPO only;
its ratio is our PPO's over PureJaxRL's ("ratio ppo / PureJaxRL ppo.py"),
whatever the order of `--algo`. Every run trains on one device, as
PureJaxRL's `make_train` does.

    python scripts/bench_ppo.py --purejaxrl /path/to/purejaxrl --repeats 3
    python scripts/bench_ppo.py --algo ppo impala a2c --repeats 3
"""

import importlib
import sys
import types

import jax
import jax.numpy as jnp
import numpy as np
from harness import (
    TINY,
    Report,
    add_ceiling,
    add_purejaxrl,
    interleave,
    parser,
    positive_int,
    run_main,
    time_program,
    train_figures,
)

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts

STANDARD = {
    "num_envs": 4,
    "unroll_length": 128,
    "total_steps": 500_000,
    "devices": 1,  # PureJaxRL's make_train runs on one device, as the ceiling does
}
# PPO's own part of the standard configuration.
STANDARD_PPO = {"num_epochs": 4, "num_minibatches": 4, "learning_rate": 2.5e-4}


def load_purejaxrl(path: str, name: str = "ppo") -> types.ModuleType:
    """PureJaxRL's `name`.py from a checkout at `path`, on gymnax 1.0's step."""
    sys.path.insert(0, f"{path}/purejaxrl")
    # Its wrappers module imports navix for a wrapper this benchmark never uses.
    sys.modules.setdefault("navix", types.ModuleType("navix"))
    module = importlib.import_module(name)
    module.gymnax = five_value_gymnax()
    return module


def five_value_gymnax() -> types.SimpleNamespace:
    """`gymnax.make` whose envs step as gymnax < 1.0's did, for PureJaxRL."""
    import gymnax

    class FiveValueStep:
        """gymnax >= 1.0's six-value step, as the five values ppo.py unpacks."""

        def __init__(self, env):
            self._env = env

        def __getattr__(self, name):
            return getattr(self._env, name)

        def step(self, key, state, action, params=None):
            obs, state, reward, terminated, truncated, info = self._env.step(
                key, state, action, params
            )
            return obs, state, reward, jnp.logical_or(terminated, truncated), info

    def make(name, **kwargs):
        env, params = gymnax.make(name, **kwargs)
        return FiveValueStep(env), params

    return types.SimpleNamespace(make=make)


def purejaxrl_config(config: pjd.TrainConfig) -> dict:
    """Our PPO config as ppo.py's config dict (same hyper-parameters)."""
    p = config.ppo
    return {
        "LR": p.learning_rate,
        "NUM_ENVS": config.num_envs,
        "NUM_STEPS": config.unroll_length,
        "TOTAL_TIMESTEPS": config.total_steps,
        "UPDATE_EPOCHS": p.num_epochs,
        "NUM_MINIBATCHES": p.num_minibatches,
        "GAMMA": p.gamma,
        "GAE_LAMBDA": p.gae_lambda,
        "CLIP_EPS": p.clip_eps,
        "ENT_COEF": p.entropy_cost,
        "VF_COEF": p.value_cost,
        "MAX_GRAD_NORM": p.max_grad_norm,
        "ACTIVATION": config.network.activation,
        "ENV_NAME": config.env.id,
        "ANNEAL_LR": p.anneal_lr,
        "DEBUG": False,
    }


def purejaxrl_return(metrics: dict, num_logs: int) -> float:
    """Mean return of the episodes ppo.py completed in its last 1/num_logs.

    `metrics` is its output's "metrics", [..., updates, steps, envs] (any
    leading axes are vmapped seeds): the same window as our final return.
    With seeds, each seed's mean, then their mean (NaN ones left out), as a
    sweep's final returns are averaged: pooling every seed's episodes would
    weigh a seed by how many (shorter, worse) episodes it finished.
    """
    done = np.asarray(metrics["returned_episode"])
    num_updates = done.shape[-3]
    last = num_updates - max(1, num_updates // num_logs)
    done = done[..., last:, :, :]
    returns = np.asarray(metrics["returned_episode_returns"])[..., last:, :, :]
    axes = (-3, -2, -1)
    with np.errstate(invalid="ignore"):  # a seed with no episode: NaN, left out
        per_seed = (returns * done).sum(axes) / done.sum(axes)
    return float(np.nanmean(per_seed))


def purejaxrl(ppo: types.ModuleType, config: pjd.TrainConfig) -> dict[str, float]:
    """Runs PureJaxRL's ppo.py `make_train` (`load_purejaxrl`'s module)."""
    key = jax.random.PRNGKey(config.seed)
    train = ppo.make_train(purejaxrl_config(config))
    compile_s, seconds, out = time_program(train, key)
    m = jax.device_get(out["metrics"])
    num_updates = m["returned_episode"].shape[0]
    steps = num_updates * config.steps_per_update
    return {
        "steps_per_s": steps / seconds,
        "compile_s": compile_s,
        "return": purejaxrl_return(m, config.num_logs),
    }


def algo_config(algo: str, overrides: dict) -> pjd.TrainConfig:
    """`algo`'s cartpole preset with the benchmark's sizes (PPO: the standard ones)."""
    if algo == "ppo":
        overrides = {**overrides, "ppo": {**STANDARD_PPO, **overrides.get("ppo", {})}}
    return pjd.apply_overrides(pjd.load_preset("cartpole", algo).config, overrides)


def add_ceilings(
    report: Report,
    row: str,
    configs: dict[str, pjd.TrainConfig],
    medians: dict,
    repeats: int,
) -> None:
    """Each algorithm's act+env ceiling and its training steps/s relative to it."""
    for algo, config in configs.items():
        sps = medians[algo]["steps_per_s"]
        add_ceiling(report, row, algo, config, sps, repeats)


def ratio_pairs(names: list[str]) -> list[tuple[str, str]]:
    """The (numerator, denominator) of each ratio row, given the contenders' names.

    Each later algorithm of ours over the first one, then PureJaxRL's PPO
    under our PPO (as bench_gpu and performance.md quote it): the peer only
    ever runs PPO, so its ratio is `ppo / PureJaxRL ppo.py` whatever the
    order of `--algo` (the first algorithm may be another one).
    """
    ours = [n for n in names if not n.startswith("PureJaxRL")]
    pairs = [(name, ours[0]) for name in ours[1:]]
    pairs += [("ppo", n) for n in names if n.startswith("PureJaxRL")]
    return pairs


def run_config(
    report: Report, row: str, configs: dict, peer: types.ModuleType | None, repeats: int
) -> None:
    """The algorithms (and PureJaxRL's PPO) interleaved; ratios; ceilings."""

    def contender(algo: str, run):
        return lambda seed: run(pjd.apply_overrides(configs[algo], {"seed": seed}))

    contenders = {
        algo: contender(algo, lambda c: train_figures(pjd.train(c))) for algo in configs
    }
    if peer is not None:
        contenders["PureJaxRL ppo.py"] = contender("ppo", lambda c: purejaxrl(peer, c))
    runs = interleave(contenders, repeats)
    medians = {}
    for name, figures in runs.items():
        label = name if name.startswith("PureJaxRL") else f"purejaxdrl {name}"
        medians[name] = report.add(row, label, figures).medians()
    for a, b in ratio_pairs(list(medians)):
        ratio = medians[a]["steps_per_s"] / medians[b]["steps_per_s"]
        report.add(row, f"ratio {a} / {b}", [{"steps_per_s": ratio}])
    add_ceilings(report, row, configs, medians, repeats)


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__)
    add_purejaxrl(p)
    p.add_argument(
        "--algo",
        nargs="+",
        default=["ppo"],
        choices=pjd.agents.names(),
        help="algorithms to time, side by side (their cartpole presets' "
        "hyper-parameters); ratios are to the first (PureJaxRL's: ppo over it)",
    )
    p.add_argument("--throughput-envs", type=positive_int, default=2048)
    p.add_argument("--throughput-steps", type=positive_int, default=2048 * 128 * 8)
    args = p.parse_args(argv)
    if args.purejaxrl and "ppo" not in args.algo:
        p.error("--purejaxrl compares with PPO: add ppo to --algo")
    report = Report("PPO on CartPole-v1 (and --algo's cartpole presets)")
    peer = load_purejaxrl(args.purejaxrl) if args.purejaxrl else None
    if peer is None:
        report.skip("PureJaxRL ppo.py", "peer not run: no --purejaxrl given")
    standard = TINY if args.tiny else STANDARD
    configs = {algo: algo_config(algo, standard) for algo in args.algo}
    row = "standard: 4 envs x 128 steps, 500k steps"
    run_config(report, "tiny" if args.tiny else row, configs, peer, args.repeats)
    if args.tiny:  # the throughput configuration is the same code, larger
        return report.finish(args)
    throughput = {  # on one device too: STANDARD's
        "num_envs": args.throughput_envs,
        "total_steps": args.throughput_steps,
        "num_logs": 4,
        "ppo": {"num_minibatches": 32},
    }
    big = {algo: algo_config(algo, {**STANDARD, **throughput}) for algo in args.algo}
    row = (
        f"throughput: {args.throughput_envs} envs x 128 steps, "
        f"{args.throughput_steps:,} steps (PPO: 32 minibatches)"
    )
    run_config(report, row, big, None, args.repeats)
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
