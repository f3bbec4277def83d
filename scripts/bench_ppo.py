"""PPO on CartPole-v1: purejaxdrl vs PureJaxRL's ppo.py, side by side in one run.

Prints compile time, steps/s excluding compile, the final mean return, and the
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
cartpole preset hyper-parameters (PPO: the standard ones above), and prints each
one's steps/s relative to the first. PureJaxRL's side runs for PPO only.

    python scripts/bench_ppo.py --purejaxrl /path/to/purejaxrl --repeats 3
    python scripts/bench_ppo.py --algo ppo impala a2c --repeats 3
"""

import argparse
import importlib
import statistics
import sys
import time
import types

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from harness import time_program  # noqa: E402

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts
from purejaxdrl.agents.registry import names as algorithm_names  # noqa: E402
from purejaxdrl.rng import make_key  # noqa: E402
from purejaxdrl.runners.rollout import unroll  # noqa: E402

STANDARD = {
    "num_envs": 4,
    "unroll_length": 128,
    "total_steps": 500_000,
}
# PPO's own part of the standard configuration.
STANDARD_PPO = {"num_epochs": 4, "num_minibatches": 4, "learning_rate": 2.5e-4}


def ours(config: pjd.TrainConfig) -> dict[str, float]:
    result = pjd.train(config)
    return {
        "compile_s": result.compile_seconds,
        "sps": result.steps_per_second,
        "return": result.mean_return,
    }


def ceiling(config: pjd.TrainConfig, num_updates: int) -> dict[str, float]:
    """Env step + policy forward only: the same unroll, no learning."""
    exp = pjd.training.make_experiment(config)
    state = exp.runner.init(make_key(config.seed, config.rng_impl))

    def run(state: pjd.runners.RunnerState) -> jax.Array:
        def body(actor, key):
            actor, traj = unroll(
                exp.env,
                state.env_params,
                exp.agent,
                state.agent.params,
                actor,
                key,
                config.unroll_length,
                config.scan_unroll,
            )
            return actor, traj.reward.sum()

        keys = jax.random.split(state.key, num_updates)
        return jax.lax.scan(body, state.actor, keys)[1].sum()

    start = time.perf_counter()
    program = jax.jit(run).lower(state).compile()
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    jax.block_until_ready(program(state))
    seconds = time.perf_counter() - start
    steps = num_updates * config.steps_per_update
    return {"compile_s": compile_s, "sps": steps / seconds}


def load_purejaxrl(path: str) -> types.ModuleType:
    """PureJaxRL's ppo.py from a checkout at `path`, on gymnax 1.0's step."""
    import gymnax

    sys.path.insert(0, f"{path}/purejaxrl")
    # Its wrappers module imports navix for a wrapper this benchmark never uses.
    sys.modules.setdefault("navix", types.ModuleType("navix"))
    ppo = importlib.import_module("ppo")

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

    ppo.gymnax = types.SimpleNamespace(make=make)
    return ppo


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
    """
    done = metrics["returned_episode"]
    num_updates = done.shape[-3]
    last = num_updates - max(1, num_updates // num_logs)
    done = done[..., last:, :, :]
    returns = metrics["returned_episode_returns"][..., last:, :, :]
    return float((returns * done).sum() / done.sum())


def purejaxrl(path: str, config: pjd.TrainConfig) -> dict[str, float]:
    """Runs PureJaxRL's ppo.py `make_train` from a checkout at `path`."""
    ppo = load_purejaxrl(path)
    key = jax.random.PRNGKey(config.seed)
    train = ppo.make_train(purejaxrl_config(config))
    compile_s, seconds, out = time_program(train, key)
    m = jax.device_get(out["metrics"])
    num_updates = m["returned_episode"].shape[0]
    steps = num_updates * config.steps_per_update
    return {
        "compile_s": compile_s,
        "sps": steps / seconds,
        "return": purejaxrl_return(m, config.num_logs),
    }


def median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def show(name: str, r: dict[str, float]) -> None:
    ret = f"  return {r['return']:7.1f}" if "return" in r else ""
    print(
        f"  {name:<26} compile {r['compile_s']:6.2f} s  {r['sps']:>12,.0f} steps/s{ret}"
    )


def algo_config(algo: str, overrides: dict) -> pjd.TrainConfig:
    """`algo`'s cartpole preset with the benchmark's sizes (PPO: the standard ones)."""
    if algo == "ppo":
        overrides = {**overrides, "ppo": {**STANDARD_PPO, **overrides.get("ppo", {})}}
    return pjd.apply_overrides(pjd.load_preset("cartpole", algo).config, overrides)


def compare(title: str, runs: dict[str, list[dict[str, float]]]) -> None:
    """Prints the median of each algorithm's runs and its ratio to the first."""
    print(title)
    medians = {name: median(r) for name, r in runs.items()}
    first, base = next(iter(medians.items()))
    for name, m in medians.items():
        show(name, m)
        if name != first:
            print(f"  {'':<26}  ({m['sps'] / base['sps']:.2f}x {first})")


def show_ceilings(configs: dict[str, pjd.TrainConfig], runs: dict[str, list]) -> None:
    """Each algorithm's act+env ceiling and its training steps/s relative to it."""
    for algo, config in configs.items():
        ceil = ceiling(config, config.num_updates)
        show(f"ceiling for {algo} (act+env)", ceil)
        trained = median(runs[f"purejaxdrl {algo}"])
        print(f"  {algo} training / ceiling: {trained['sps'] / ceil['sps']:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--purejaxrl", help="path of a PureJaxRL checkout")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--algo",
        nargs="+",
        default=["ppo"],
        choices=algorithm_names(),
        help="algorithms to time, side by side (their cartpole presets' "
        "hyper-parameters); ratios are to the first",
    )
    parser.add_argument("--throughput-envs", type=int, default=2048)
    parser.add_argument("--throughput-steps", type=int, default=2048 * 128 * 8)
    args = parser.parse_args()
    if args.purejaxrl and "ppo" not in args.algo:
        parser.error("--purejaxrl compares with PPO: add ppo to --algo")

    print(
        f"jax {jax.__version__} on {jax.devices()[0].device_kind}; "
        f"median of {args.repeats} runs (seeds 0..{args.repeats - 1}), "
        "compile time excluded from steps/s"
    )
    print(
        "\nStandard config: CartPole-v1, 4 envs x 128 steps, 500k steps; PPO 4 "
        "epochs x 4 minibatches, lr 2.5e-4 annealed; impala and a2c: their "
        "cartpole presets' hyper-parameters, one gradient step per update"
    )
    configs = {algo: algo_config(algo, STANDARD) for algo in args.algo}
    runs: dict[str, list] = {f"purejaxdrl {algo}": [] for algo in args.algo}
    if args.purejaxrl:
        runs["PureJaxRL ppo.py"] = []
    for seed in range(args.repeats):  # interleaved, so drift hits all alike
        for algo, base in configs.items():
            config = pjd.apply_overrides(base, {"seed": seed})
            runs[f"purejaxdrl {algo}"].append(ours(config))
            if algo == "ppo" and args.purejaxrl:
                runs["PureJaxRL ppo.py"].append(purejaxrl(args.purejaxrl, config))
    compare("", runs)
    if args.purejaxrl:
        ours_m, theirs = (
            median(runs["purejaxdrl ppo"]),
            median(runs["PureJaxRL ppo.py"]),
        )
        print(
            f"  purejaxdrl ppo vs PureJaxRL: {ours_m['sps'] / theirs['sps']:.2f}x "
            f"steps/s; final returns {ours_m['return']:.1f} vs {theirs['return']:.1f}"
        )
    show_ceilings(configs, runs)

    throughput = {
        "num_envs": args.throughput_envs,
        "total_steps": args.throughput_steps,
        "num_logs": 4,
        "ppo": {"num_minibatches": 32},
    }
    big = {algo: algo_config(algo, {**STANDARD, **throughput}) for algo in args.algo}
    big_runs = {f"purejaxdrl {algo}": [ours(c)] for algo, c in big.items()}
    compare(
        f"\nThroughput config: {args.throughput_envs} envs x 128 steps, "
        f"{args.throughput_steps:,} steps (PPO: 32 minibatches)",
        big_runs,
    )
    show_ceilings(big, big_runs)


if __name__ == "__main__":
    main()
