"""Steps/s on 1 device vs N devices of this host: same global config, one run.

The global number of environments and every other setting stay fixed; only the
mesh changes, so the N-device run does the same work split N ways. Runs are
interleaved (1, N, 1, N, ...) so that machine drift hits both alike. Compile
time is excluded from steps/s and reported separately.

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
ceiling for the N-device run. Their windows are aligned: each waits, compiled,
until all are (a file barrier) before it trains, and their steps/s is all
runs' env steps over the joint window, from the first one's start of training
to the last one's end (not a sum of rates over different windows).
"""

import argparse
import contextlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

from harness import (
    TINY,
    Report,
    interleave,
    parser,
    positive_int,
    run_main,
    train_figures,
)


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = parser(__doc__)
    p.add_argument("--env", default="cartpole", help="preset name")
    p.add_argument("--algo", default="ppo")
    p.add_argument(
        "--devices", type=positive_int, default=2, help="N to compare with 1"
    )
    p.add_argument(
        "--cpu-devices", type=positive_int, help="split the CPU into N devices"
    )
    p.add_argument("--num-envs", type=positive_int, default=2048)
    p.add_argument("--unroll-length", type=positive_int, default=128)
    p.add_argument("--num-minibatches", type=positive_int, default=32)
    p.add_argument("--total-steps", type=positive_int, default=2048 * 128 * 8)
    p.add_argument(
        "--per-core",
        action="store_true",
        help="also run each device count pinned to as many cores (CPU only; "
        "--devices at most the usable cores)",
    )
    # The cores of a pinned subprocess, comma-separated: one device per core.
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    usable = len(os.sched_getaffinity(0))
    if args.per_core and not args.worker and args.devices > usable:
        # Each pinned device needs a core of its own: with fewer, the N-device
        # run would train on fewer devices than its label says, and the N
        # independent runs' barrier would wait for runs never started.
        p.error(
            f"--per-core --devices {args.devices}: only {usable} cores are usable "
            f"here (sched_getaffinity); pass --devices {usable} or fewer"
        )
    if args.tiny:
        args.cpu_devices = args.cpu_devices or args.devices
        args.num_envs, args.unroll_length = TINY["num_envs"], TINY["unroll_length"]
        args.num_minibatches, args.total_steps = 2, TINY["total_steps"]
    return args


# A pinned worker's barrier, "<folder>:<count>": it trains once <count> files
# are in <folder>, its own among them.
BARRIER = "PJD_BENCH_BARRIER"
# What a worker prints besides its figures: its training window and steps.
WINDOW = ("start", "end", "env_steps")
# How long a worker waits at the barrier for the others (compiled, each is
# there within seconds): past it, one died, and waiting longer would hang.
BARRIER_TIMEOUT_S = 600.0


def wait_at_barrier(spec: str, timeout: float = BARRIER_TIMEOUT_S) -> None:
    """Marks this process arrived at `spec` ("<folder>:<count>") and waits for
    the `count` runs to be there.

    Raises:
      TimeoutError: the others had not all arrived after `timeout` seconds.
    """
    folder, count = spec.rsplit(":", 1)
    pathlib.Path(folder, str(os.getpid())).touch()
    deadline = time.monotonic() + timeout
    while (arrived := len(os.listdir(folder))) < int(count):
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"{arrived} of {count} pinned runs reached the barrier in "
                f"{timeout:.0f} s; the others failed or were not started"
            )
        time.sleep(0.001)


@contextlib.contextmanager
def aligned_window(window: dict[str, float]) -> Iterator[None]:
    """While in the block, a run's training waits at `BARRIER` (when set) once
    compiled, and `window` gets its start and end (a clock all processes share).
    A patch of the package's chunk loop for the block only: it has no hook.
    """
    from purejaxdrl.training.loop import ChunkLoop

    run_schedule, spec = ChunkLoop.run_schedule, os.environ.get(BARRIER)

    def schedule(self: ChunkLoop, *args: object, **kwargs: object) -> object:
        if spec:
            wait_at_barrier(spec)
            self.start = time.perf_counter()  # the wait is not training
        window["start"] = time.monotonic()
        try:
            return run_schedule(self, *args, **kwargs)
        finally:
            window["end"] = time.monotonic()

    ChunkLoop.run_schedule = schedule
    try:
        yield
    finally:
        ChunkLoop.run_schedule = run_schedule


def start_pinned(
    argv: list[str], cores: list[int], seed: int, barrier: str = ""
) -> subprocess.Popen:
    """Starts one run in a subprocess restricted to `cores`, a device on each."""
    argv = [sys.argv[0], *argv, "--worker", ",".join(map(str, cores))]
    return subprocess.Popen(
        [sys.executable, *argv, "--repeats", "1", "--cpu-devices", str(len(cores))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PJD_BENCH_SEED": str(seed), BARRIER: barrier},
    )


def result(proc: subprocess.Popen) -> dict:
    """The figures a pinned subprocess prints last."""
    out, err = proc.communicate()
    if proc.returncode:
        last = (err.strip().splitlines() or ["no output"])[-1]
        sys.exit(f"a pinned run failed (exit status {proc.returncode}): {last}")
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> Report | None:
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
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
    sizes = ("num_envs", "unroll_length", "total_steps")
    base = pjd.apply_overrides(
        pjd.load_preset(args.env, args.algo).config,
        {**{k: getattr(args, k) for k in sizes}, "num_logs": 2 if args.tiny else 4},
    )
    if args.algo == "ppo":
        minibatches = {"ppo": {"num_minibatches": args.num_minibatches}}
        base = pjd.apply_overrides(base, minibatches)

    def run(devices: int, seed: int) -> dict[str, float]:
        config = pjd.apply_overrides(base, {"devices": devices, "seed": seed})
        return train_figures(pjd.train(config))

    if args.worker:  # a pinned subprocess of --per-core: one run, one JSON line
        seed = int(os.environ["PJD_BENCH_SEED"])
        devices = len(args.worker.split(","))
        window: dict[str, float] = {}
        with aligned_window(window):
            result_ = pjd.train(
                pjd.apply_overrides(base, {"devices": devices, "seed": seed})
            )
        print(json.dumps({**train_figures(result_), **window,
                          "env_steps": result_.env_steps}))  # fmt: skip
        return None
    cores = sorted(os.sched_getaffinity(0))
    n = args.devices

    def pinned(devices: int, seed: int) -> dict[str, float]:
        figures = result(start_pinned(argv, cores[:devices], seed))
        return {k: v for k, v in figures.items() if k not in WINDOW}

    def independent(seed: int) -> dict[str, float]:
        """N 1-device runs at once, each on its own core, trained together:
        all their steps over the joint window (first start to last end)."""
        with tempfile.TemporaryDirectory(prefix="bench-devices-") as folder:
            barrier = f"{folder}:{n}"
            procs: list[subprocess.Popen] = []
            try:
                for core in cores[:n]:
                    procs.append(start_pinned(argv, [core], seed, barrier))
                runs = [result(p) for p in procs]
            finally:  # one failed (result exits): the others must not live on
                for proc in procs:
                    if proc.poll() is None:
                        proc.kill()
                        proc.wait()
        span = max(r["end"] for r in runs) - min(r["start"] for r in runs)
        first = {k: v for k, v in runs[0].items() if k not in WINDOW}
        return {**first, "steps_per_s": sum(r["env_steps"] for r in runs) / span}

    contenders = {"1": lambda s: run(1, s), "N": lambda s: run(n, s)}
    if args.per_core:
        contenders["1 pinned"] = lambda s: pinned(1, s)
        contenders["N pinned"] = lambda s: pinned(n, s)
        contenders["N independent"] = independent
    runs = interleave(contenders, args.repeats)
    report = Report(
        f"1 vs {n} devices: {args.algo} on {base.env.id}, {base.num_envs} envs x "
        f"{base.unroll_length} steps, {base.num_updates} updates"
    )
    groups = [("", f"all {len(cores)} cores", "device")]
    if args.per_core:
        groups += [(" pinned", "1 core per device", "device")]
        groups += [(" independent", "N 1-device runs at once, 1 core each", "run")]
    for suffix, row, unit in groups:
        alone = "1 pinned" if unit == "run" else "1" + suffix  # one run alone
        one = report.add(row, f"1 {unit}", runs[alone])
        many = report.add(row, f"{n} {unit}s", runs["N" + suffix])
        speedup = many.medians()["steps_per_s"] / one.medians()["steps_per_s"]
        report.add(row, f"speed-up {n} / 1", [{"ratio": speedup}])
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
