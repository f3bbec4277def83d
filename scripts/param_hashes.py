"""Hashes of the final parameters of short runs of every algorithm, and a sweep's.

A refactoring that must not change what the library computes is checked by
running this before and after it and comparing the two outputs line by line:

    python scripts/param_hashes.py > before.txt
    ... change the code ...
    python scripts/param_hashes.py > after.txt && diff before.txt after.txt

Each device count runs in its own process (fake CPU devices are fixed when JAX
starts). A hash is the SHA-256 of the parameters as `params.msgpack` holds them.
"""

import argparse
import hashlib
import os
import subprocess
import sys

from harness import positive_int, run_main

_GRU = {"network": {"core": "gru", "core_size": 32}}
_HOST = {"host": {"deterministic": True}}

# name -> (preset, algo, overrides): a few updates each, learning included
# (replay learners start learning well inside their budget).
RUNS = {
    "ppo": ("cartpole", "ppo", {"total_steps": 4 * 128 * 8}),
    "impala": ("cartpole", "impala", {"total_steps": 32 * 16 * 8}),
    "impala+replay": (
        "cartpole",
        "impala",
        {"total_steps": 32 * 16 * 8, "impala": {"replay_ratio": 0.5}},
    ),
    "a2c": ("cartpole", "a2c", {"total_steps": 32 * 16 * 8}),
    "dqn": (
        "cartpole",
        "dqn",
        {"total_steps": 16 * 4 * 40, "dqn": {"min_replay": 512}},
    ),
    "apex": (
        "cartpole",
        "apex",
        {"total_steps": 16 * 4 * 40, "apex": {"min_replay": 512}},
    ),
    "sac": (
        "inverted_pendulum",
        "sac",
        {"total_steps": 1024 * 4, "sac": {"min_replay": 1024}},
    ),
    # A recurrent device run of every algorithm that takes a core.
    "ppo+gru": ("cartpole_masked", "ppo", {"total_steps": 2 * 32 * 16}),
    "a2c+gru": ("cartpole", "a2c", {"total_steps": 4 * 32 * 16, **_GRU}),
    "impala+gru": ("cartpole", "impala", {"total_steps": 4 * 32 * 16, **_GRU}),
    "r2d2": (
        "cartpole_masked",
        "r2d2",
        {"total_steps": 16 * 4 * 40, "r2d2": {"min_replay": 64}},
    ),
    # Host environments (the actor-learner runner), deterministic so they repeat.
    "host-ppo": ("cartpole_envpool", "ppo", {"total_steps": 4 * 8 * 64, **_HOST}),
    "host-ppo+gru": (
        "cartpole_envpool",
        "ppo",
        {"total_steps": 4 * 8 * 64, **_HOST, **_GRU},
    ),
    "host-impala": (
        "cartpole_envpool",
        "impala",
        {"total_steps": 4 * 32 * 16, **_HOST},
    ),
    "host-impala+gru": (
        "cartpole_envpool",
        "impala",
        {"total_steps": 4 * 32 * 16, **_HOST, **_GRU},
    ),
}


def _digest(params) -> str:
    import flax
    import jax

    data = flax.serialization.msgpack_serialize(jax.device_get(params))
    return hashlib.sha256(data).hexdigest()[:16]


def _child(devices: int, names: list[str]) -> None:
    import purejaxdrl as pjd

    for name in (n for n in names if n != "sweep"):
        preset, algo, overrides = RUNS[name]
        config = pjd.load_preset(preset, algo).config
        config = pjd.apply_overrides(
            config, {**overrides, "devices": devices, "num_logs": 2}
        )
        result = pjd.train(config)
        print(f"{name} devices={devices} {_digest(result.state.agent.params)}")
        sys.stdout.flush()
    if "sweep" in names:
        result = pjd.sweep(
            pjd.apply_overrides(
                pjd.load_preset("cartpole").config,
                {"total_steps": 4 * 128 * 8, "num_logs": 2, "devices": devices},
            ),
            grid={"learning_rate": [1e-3, 3e-4]},
            console=False,
            seeds=2,
        )
        for run, params in enumerate(result.final_params):
            print(f"sweep run={run} devices={devices} {_digest(params)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=positive_int, nargs="+", default=[1, 2])
    names = [*RUNS, "sweep"]
    parser.add_argument("--runs", nargs="+", choices=names, default=names)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        _child(args.child, args.runs)
        return
    for devices in args.devices:
        env = dict(os.environ)
        flag = f"--xla_force_host_platform_device_count={devices}"
        env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} {flag}".strip()
        child = subprocess.run(
            [sys.executable, __file__, "--child", str(devices), "--runs", *args.runs],
            env=env,
        )
        if child.returncode:  # its traceback is above: one line here, not two
            sys.exit(f"param_hashes: the {devices}-device run failed")


if __name__ == "__main__":
    run_main(main)
