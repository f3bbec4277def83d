"""64 PPO runs on CartPole as one sweep vs the same 64 runs one after another.

Both sides train the same runs (8 learning rates x 8 seeds by default, the
CartPole preset's PPO otherwise) in this one process on the same machine:

- sweep: `purejaxdrl.sweeps(...)`, all runs vmapped in one compiled program;
- sequential: `purejaxdrl.training.train(config)` for each run, one after another.

Both use one fresh persistent compilation cache, so the sequential runs compile
once per learning rate (a program bakes its hyper-parameters in) and load it
for the other seeds: the most favourable honest baseline. Printed: total wall
time of each (compile included), compile and training time apart, and the
ratios.

    python scripts/bench_sweep.py                # 64 runs, the preset's budget
    python scripts/bench_sweep.py --total-steps 100000
"""

import argparse
import tempfile
import time

import jax
import numpy as np

import purejaxdrl as pjd
from purejaxdrl.sweeps.program import sweep


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="cartpole")
    parser.add_argument("--algo", default="ppo")
    parser.add_argument("--settings", type=int, default=8, help="learning rates")
    parser.add_argument("--seeds", type=int, default=8, help="seeds per setting")
    parser.add_argument("--total-steps", type=int, default=None, help="per run")
    parser.add_argument("--devices", type=int, default=0, help="0: all")
    return parser.parse_args()


def main() -> None:
    args = parse()
    pjd.enable_compilation_cache(tempfile.mkdtemp(prefix="bench-sweep-cache-"))
    preset = pjd.load_preset(args.env, args.algo)
    overrides = {"devices": args.devices}
    if args.total_steps:
        overrides["total_steps"] = args.total_steps
    base = pjd.apply_overrides(preset.config, overrides)
    peak = base.algo_config.learning_rate
    rates = [float(x) for x in np.geomspace(peak / 4, peak * 4, args.settings)]
    runs = args.settings * args.seeds
    print(
        f"{runs} {base.algo} runs on {base.env.id} ({args.settings} learning rates "
        f"x {args.seeds} seeds), {base.num_updates * base.steps_per_update:,} env "
        f"steps each; {jax.local_device_count()} {jax.default_backend()} device(s)"
    )

    start = time.perf_counter()
    result = sweep(base, grid={"learning_rate": rates}, seeds=args.seeds)
    sweep_wall = time.perf_counter() - start
    (layout,) = result.layouts
    print(
        f"sweep:      {sweep_wall:8.1f} s wall = {result.compile_seconds:6.1f} s "
        f"compile + {result.train_seconds:7.1f} s training "
        f"({layout.sweep} x {layout.data} mesh, {layout.runs_per_device} runs "
        f"per device, {result.env_steps / result.train_seconds:,.0f} steps/s)"
    )

    compile_s = train_s = 0.0
    returns = []
    start = time.perf_counter()
    for i in range(runs):
        r = pjd.train(result.plan.run_config(i))
        compile_s += r.compile_seconds
        train_s += r.train_seconds
        returns.append(r.mean_return)
    seq_wall = time.perf_counter() - start
    print(
        f"sequential: {seq_wall:8.1f} s wall = {compile_s:6.1f} s compile + "
        f"{train_s:7.1f} s training "
        f"({result.env_steps / train_s:,.0f} steps/s), rest host overhead"
    )
    print(
        f"ratio (sequential / sweep): {seq_wall / sweep_wall:.2f}x wall time, "
        f"{train_s / result.train_seconds:.2f}x training time (compile excluded)"
    )
    same = np.isclose(returns, result.final_return, rtol=1e-4, equal_nan=True)
    # Both sides run the same updates; vmapped and unbatched kernels round
    # differently, and hundreds of updates amplify that until an action flips.
    print(
        f"final returns: sweep mean {np.nanmean(result.final_return):.1f}, "
        f"sequential mean {np.nanmean(returns):.1f}; {int(same.sum())} of {runs} "
        "runs end with the same return (the rest drift apart from float "
        "rounding over many updates; tests/sweeps/test_sweep.py checks short runs "
        "to 1e-5)"
    )


if __name__ == "__main__":
    main()
