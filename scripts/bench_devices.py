"""Steps/s on 1 device vs N devices of this host: same global config, one run.

The global number of environments and every other setting stay fixed; only the
mesh changes, so the N-device run does the same work split N ways. Runs are
interleaved (1, N, 1, N, ...) so that machine drift hits both alike; the median
is printed. Compile time is excluded from steps/s and reported separately.

On a CPU host, `--cpu-devices N` splits the CPU into N XLA devices (each runs on
its own thread, so N should not exceed the core count); on GPU/TPU hosts the
real devices are used.

    python scripts/bench_devices.py --devices 2 --cpu-devices 2

On CPU one XLA device already spreads its larger operations over every core
(intra-op threads), so "1 device" is not "1 core". `--per-core` adds a second
comparison, each run in a subprocess whose CPU affinity gives it exactly as many
cores as devices (1 device on 1 core, N devices on N cores): the scaling when
each device gets its own core. Beside it, N independent 1-device runs at once,
each on its own core, measure the machine's own N-core scaling (shared caches,
memory bandwidth, a VM's scheduling) with no collective between them: the
ceiling for the N-device run.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="cartpole", help="preset name")
    parser.add_argument("--algo", default="ppo")
    parser.add_argument("--devices", type=int, default=2, help="N to compare with 1")
    parser.add_argument(
        "--cpu-devices", type=int, default=None, help="split the CPU into N devices"
    )
    parser.add_argument("--num-envs", type=int, default=2048)
    parser.add_argument("--unroll-length", type=int, default=128)
    parser.add_argument("--num-minibatches", type=int, default=32)
    parser.add_argument("--total-steps", type=int, default=2048 * 128 * 8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--per-core",
        action="store_true",
        help="also run each device count pinned to as many cores (CPU only)",
    )
    # The cores of a pinned subprocess, comma-separated: one device per core.
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    return parser.parse_args()


def start_pinned(cores: list[int], seed: int) -> subprocess.Popen:
    """Starts one run in a subprocess restricted to `cores`, a device on each."""
    argv = [sys.argv[0], *sys.argv[1:], "--worker", ",".join(map(str, cores))]
    return subprocess.Popen(
        [sys.executable, *argv, "--repeats", "1", "--cpu-devices", str(len(cores))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PJD_BENCH_SEED": str(seed)},
    )


def result(proc: subprocess.Popen) -> dict:
    """The summary a pinned subprocess prints last."""
    out, err = proc.communicate()
    if proc.returncode:
        last = (err.strip().splitlines() or ["no output"])[-1]
        sys.exit(f"a pinned run failed (exit status {proc.returncode}): {last}")
    return json.loads(out.strip().splitlines()[-1])


def pinned_run(devices: int, seed: int) -> dict:
    """One run on the first `devices` cores."""
    return result(start_pinned(sorted(os.sched_getaffinity(0))[:devices], seed))


def independent_runs(n: int, seed: int) -> dict:
    """N 1-device runs at once, each on its own core: their summed steps/s."""
    cores = sorted(os.sched_getaffinity(0))[:n]
    runs = [result(p) for p in [start_pinned([c], seed) for c in cores]]
    return {**runs[0], "sps": sum(r["sps"] for r in runs)}


def main() -> None:
    args = parse()
    if args.worker:  # before JAX starts its thread pools
        os.sched_setaffinity(0, {int(c) for c in args.worker.split(",")})
    if args.cpu_devices:
        # Before JAX starts its CPU backend (purejaxdrl merges its own flags in).
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = (
            f"{flags} --xla_force_host_platform_device_count={args.cpu_devices}"
        )
    import jax

    import purejaxdrl as pjd

    if not args.worker and jax.local_device_count() < args.devices:
        sys.exit(
            f"only {jax.local_device_count()} devices; on CPU pass --cpu-devices "
            f"{args.devices}."
        )
    base = pjd.apply_overrides(
        pjd.load_preset(args.env, args.algo).config,
        {
            "num_envs": args.num_envs,
            "unroll_length": args.unroll_length,
            "total_steps": args.total_steps,
            "num_logs": 4,
        },
    )
    if args.algo == "ppo":
        minibatches = {"ppo": {"num_minibatches": args.num_minibatches}}
        base = pjd.apply_overrides(base, minibatches)
    print(
        f"jax {jax.__version__}, {jax.local_device_count()} x "
        f"{jax.devices()[0].device_kind} ({os.cpu_count()} CPU cores); "
        f"{args.algo} on {base.env.id}, {base.num_envs} envs x {base.unroll_length} "
        f"steps, {base.num_updates} updates; median of {args.repeats}"
    )
    if args.worker:  # a pinned subprocess of --per-core: one run, one JSON line
        seed = int(os.environ["PJD_BENCH_SEED"])
        devices = len(args.worker.split(","))
        r = pjd.train(pjd.apply_overrides(base, {"devices": devices, "seed": seed}))
        print(json.dumps(summary(r)))
        return
    counts = (1, args.devices)
    runs: dict[int, list] = {n: [] for n in counts}
    pinned: dict[int, list] = {n: [] for n in counts}
    independent: dict[int, list] = {n: [] for n in counts}
    for seed in range(args.repeats):
        for n in counts:
            r = pjd.train(pjd.apply_overrides(base, {"devices": n, "seed": seed}))
            runs[n].append(summary(r))
            if args.per_core:
                pinned[n].append(pinned_run(n, seed))
        if args.per_core:
            independent[1].append(pinned[1][-1])
            independent[args.devices].append(independent_runs(args.devices, seed))
    print(f"every run on all {len(os.sched_getaffinity(0))} cores:")
    report(runs, args.devices)
    if args.per_core:
        print("each run pinned to as many cores as devices (1 device on 1 core):")
        report(pinned, args.devices)
        print(
            f"the machine's own scaling: {args.devices} independent 1-device runs at "
            "once, one per core (no collectives), vs one alone:"
        )
        report(independent, args.devices, "run")


def summary(r) -> dict:
    return {
        "sps": r.steps_per_second,
        "compile_s": r.compile_seconds,
        "return": r.mean_return,
    }


def report(runs: dict[int, list], devices: int, unit: str = "device") -> None:
    """Median steps/s, compile time and return per count, and the speed-up."""
    sps = {}
    for n, rs in runs.items():
        sps[n] = statistics.median(r["sps"] for r in rs)
        compile_s = statistics.median(r["compile_s"] for r in rs)
        ret = statistics.median(r["return"] for r in rs)
        print(
            f"  {n} {unit}(s): {sps[n]:>12,.0f} steps/s ({sps[n] / n:,.0f} per "
            f"{unit})  compile {compile_s:5.1f} s  return {ret:7.1f}"
        )
    print(f"  speed-up {devices} {unit}s / 1: {sps[devices] / sps[1]:.2f}x")


if __name__ == "__main__":
    main()
