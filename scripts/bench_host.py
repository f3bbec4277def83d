"""Host environments: where the actor-learner runner's time goes, and a peer beside it.

In one run on one machine, for a preset's host-env configuration (default: the
`pong` preset's PPO section, CleanRL's Atari settings, EnvPool Pong-v5):

- C_env: EnvPool agent steps/s with random actions, through the same adapter
  calls the actors make (send / recv), same pool size and EnvPool threads;
- C_act: the actors' policy (the runner's jitted policy, host transfer
  included) on a batch of uint8 frames of the actors' batch size, obs/s;
- C_learn: the learner's update (the runner's jit(shard_map(agent.update)))
  on one fixed [T, B] batch on the device, agent steps consumed/s (PPO passes
  over each num_epochs times);
- the bound 1 / (1/C_env + 1/C_act + 1/C_learn): agent steps/s if the three
  took turns on the same cores with nothing lost between them;
- training: `purejaxdrl.train` on the preset, agent steps/s between the
  records of the first and the last timed update (one record per update), so
  compilation and warm-up updates are excluded; and its ratio to the bound;
- with --peer, a public JAX implementation at the same settings (same envs,
  unroll, minibatches, epochs, EnvPool threads and Atari protocol), run as a
  subprocess right after ours, and the ratio ours / peer.

The peer is CleanRL's cleanrl/ppo_atari_envpool_xla_jax.py
(github.com/vwxyzjn/cleanrl), not part of this repository, with a small shim
for JAX 0.10 / flax 0.12 / EnvPool 1.2.5: EnvPool's gymnasium API (5-value
step and 2-value reset), argparse for tyro, a no-op TensorBoard writer (no
torch), `AgentParams.__contains__` for flax's TrainState, EnvPool's
`num_threads` and our Atari options, and flags `--num-iterations-override`
and `--warmup-iterations` after which it prints `STEADY
agent_steps_per_second=...`, which this script reads. PPO only: the same
algorithm on both sides. Both run with the XLA_FLAGS purejaxdrl sets.

Every figure counts agent steps; frames = 4 x agent steps (Atari frame skip 4).

    python scripts/bench_host.py --preset pong --algo ppo --updates 20 \\
        --peer /path/to/ppo_atari_envpool_xla_jax.py
"""

import argparse
import math
import os
import re
import subprocess
import sys
import time

import jax
import numpy as np
from harness import Report, parser, positive_int, run_main
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts
from purejaxdrl.parallel import DATA_AXIS
from purejaxdrl.runners.actor import initial_carry
from purejaxdrl.runners.trajectories import TrajectoryBuilder
from purejaxdrl.training.experiment import make_host_experiment

FRAME_SKIP = 4  # EnvPool Atari's default, and the Machado protocol's


def bench_env(env, steps: int, warmup: int) -> float:
    """Agent steps/s of `env` stepped with uniformly random actions."""
    if not isinstance(env.spec.action, pjd.env.Discrete):
        raise SystemExit(f"{env.spec.action} actions: this benchmark is for Atari")
    rng = np.random.default_rng(0)
    n = env.spec.action.num_values
    step = env.reset()
    for i in range(warmup + steps):
        if i == warmup:
            start = time.perf_counter()
        env.send(rng.integers(0, n, len(step.env_id)), step.env_id)
        step = env.recv()
    return steps * env.num_envs / (time.perf_counter() - start)


def bench_policy(exp, params, calls: int, warmup: int) -> float:
    """Observations/s through the actors' policy, uint8 frames in, host arrays out."""
    spec = exp.runner.envs[0].spec
    batch = exp.runner.envs[0].num_envs
    obs = (
        np.random.default_rng(0)
        .integers(0, 256, (batch, *spec.observation.shape), dtype=np.uint8)
        .astype(spec.observation_dtype)
    )
    first, env_id = np.zeros(batch, bool), np.arange(batch, dtype=np.int32)
    key = pjd.rng.make_key(0, exp.config.rng_impl)
    carry = [initial_carry(exp.agent, batch)]

    def go(start: int, count: int) -> None:
        for i in range(start, start + count):
            carry[0], out = exp.runner.policy(
                params, carry[0], obs, first, env_id, key, np.uint32(i), 0
            )
            jax.device_get(out)

    go(0, warmup)  # compiles
    start = time.perf_counter()
    go(warmup, calls)
    return calls * batch / (time.perf_counter() - start)


def actor_batch(exp, params):
    """One [T, B] learner batch built as an actor builds it (real frames)."""
    env = exp.runner.envs[0]
    spec = env.spec
    action_shape = getattr(spec.action, "shape", ())
    carry = initial_carry(exp.agent, env.num_envs)
    builder = TrajectoryBuilder(
        env.num_envs,
        exp.config.unroll_length,
        spec.observation.shape,
        spec.observation_dtype,
        action_shape,
        np.float32 if action_shape else np.int32,
        core_state=jax.tree.map(lambda s: s[0], carry),
    )
    key = pjd.rng.make_key(1, exp.config.rng_impl)
    step = env.reset()
    for i in range(10**9):
        carry, out = exp.runner.policy(
            params, carry, step.observation, step.first, step.env_id, key,
            np.uint32(i), 0,
        )  # fmt: skip
        out = jax.device_get(out)
        builder.add(step, out, 0)
        if builder.ready():
            return builder.take().transitions
        env.send(out.env_action, step.env_id)
        step = env.recv()
    raise AssertionError("unreachable")


def bench_learner(exp, state, updates: int, warmup: int) -> float:
    """Agent steps/s the learner's update consumes on one fixed device batch."""
    params = exp.agent.acting_params(state)
    local = jax.tree.map(lambda x: x.addressable_data(0), params)
    traj = actor_batch(exp, local)
    # All actor threads' batches side by side make the learner's B.
    threads = len(exp.runner.envs)
    if threads > 1:
        traj = jax.tree.map(lambda x: np.concatenate([x] * threads, axis=1), traj)
    traj = jax.device_put(traj, NamedSharding(exp.runner.mesh, P(None, DATA_AXIS)))
    key = pjd.rng.make_key(2, exp.config.rng_impl)
    for u in range(warmup):  # compiles
        state, metrics = exp.runner.update(state, traj, jax.random.fold_in(key, u))
    jax.block_until_ready((state, metrics))
    start = time.perf_counter()
    for u in range(warmup, warmup + updates):
        state, metrics = exp.runner.update(state, traj, jax.random.fold_in(key, u))
    jax.block_until_ready((state, metrics))
    return updates * exp.runner.steps_per_update / (time.perf_counter() - start)


def components(config: pjd.TrainConfig, args: argparse.Namespace) -> dict:
    """C_env, C_act and C_learn, measured one after another."""
    exp = make_host_experiment(config)
    try:
        state = exp.runner.init(pjd.rng.make_key(config.seed, config.rng_impl)).agent
        params = jax.tree.map(
            lambda x: x.addressable_data(0), exp.agent.acting_params(state)
        )
        params = jax.device_put(params, exp.runner.actor_devices[0])
        steps = args.updates * config.unroll_length
        c_env = bench_env(exp.runner.envs[0], steps, args.warmup * config.unroll_length)
        c_act = bench_policy(exp, params, steps, args.warmup)
        c_learn = bench_learner(exp, state, args.updates, args.warmup)
    finally:
        exp.runner.close()
    return {
        "c_env": c_env,
        "c_act": c_act,
        "c_learn": c_learn,
        "pool": len(exp.runner.envs),
    }


def training(config: pjd.TrainConfig, args: argparse.Namespace) -> dict:
    """Steady agent steps/s of `train`, between the first and last timed update."""
    total = args.warmup + args.updates
    config = pjd.apply_overrides(
        config,
        {"total_steps": total * config.steps_per_update, "num_logs": total},
    )
    result = pjd.train(config)
    records = result.history
    if len(records) != total:
        raise RuntimeError(f"expected one record per update, got {len(records)}")
    first, last = records[args.warmup - 1], records[-1]
    seconds = last["time"] - first["time"]
    sps = (last["env_steps"] - first["env_steps"]) / seconds
    # The split from the second timed record on: an actor's wait is reported
    # in the record after it ends, so the first one holds waits that began
    # before the window (during the learner's compile).
    timed = records[args.warmup + 1 :]
    window = last["time"] - records[args.warmup]["time"] if timed else math.nan
    split = {
        name: sum(r.get(name, 0.0) for r in timed) / window
        for name in (
            "actor/env_seconds",
            "actor/act_seconds",
            "actor/params_wait",
            "actor/queue_wait",
            "time/learner_wait",
        )
    }
    split["lag/mean"] = float(np.mean([r.get("lag/mean", np.nan) for r in timed]))
    return {"sps": sps, "warmup_s": first["time"], "split": split}


def peer(path: str, config: pjd.TrainConfig, args: argparse.Namespace) -> dict:
    """The peer's steady agent steps/s at our settings, run as a subprocess."""
    ppo = config.ppo
    options = {
        "env-id": config.env.id.partition(":")[2],
        "num-envs": config.num_envs,
        "num-steps": config.unroll_length,
        "num-minibatches": ppo.num_minibatches,
        "update-epochs": ppo.num_epochs,
        "learning-rate": float(ppo.learning_rate),
        "num-threads": args.env_threads,
        "num-iterations-override": args.warmup + args.updates,
        "warmup-iterations": args.warmup,
        "seed": config.seed,
    }
    command = [sys.executable, path]
    for name, value in options.items():
        command += [f"--{name}", str(value)]
    print("peer:", " ".join(command), flush=True)
    start = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    match = re.search(r"STEADY agent_steps_per_second=([0-9.]+)", out.stdout)
    if out.returncode or match is None:
        tail = (out.stdout + out.stderr)[-2000:]
        raise RuntimeError(f"the peer failed (exit {out.returncode}):\n{tail}")
    return {"sps": float(match.group(1)), "wall_s": wall}


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__, repeats=False)  # whole runs, once each
    p.add_argument("--preset", default="pong", help="a preset with host envs")
    p.add_argument("--algo", default="ppo", help="the preset's section")
    p.add_argument(
        "--num-envs", type=positive_int, default=None, help="default: preset"
    )
    p.add_argument(
        "--env-threads",
        type=positive_int,
        default=os.cpu_count(),
        help="EnvPool worker threads, ours and the peer's (default: the cores)",
    )
    p.add_argument("--updates", type=positive_int, default=20, help="timed updates")
    p.add_argument("--warmup", type=int, default=3, help="untimed updates first")
    p.add_argument("--peer", default=None, help="path of the peer's script")
    args = p.parse_args(argv)
    overrides: dict = {}
    if args.tiny:  # CartPole on EnvPool: the same runner, an MLP to compile
        args.preset, args.updates, args.warmup, args.env_threads = (
            "cartpole_envpool",
            1,
            1,
            1,
        )
        overrides = {"num_envs": 4, "unroll_length": 8}
    if args.warmup < 1 or args.updates < 1:
        p.error("--warmup and --updates must be >= 1")
    if args.peer and args.algo != "ppo":
        p.error("the peer is CleanRL's PPO: pass --algo ppo with --peer")

    preset = pjd.load_preset(args.preset, args.algo)
    overrides["host"] = {"env_threads": args.env_threads}
    if args.num_envs is not None:
        overrides["num_envs"] = args.num_envs
    config = pjd.apply_overrides(preset.config, overrides)
    if not config.env.id.startswith("envpool:"):
        p.error(f"{args.preset} is on {config.env.id}, not an envpool: id")
    report = Report(
        f"Host envs: {args.algo} on {config.env.id} ({args.preset} preset), "
        f"{config.num_envs} envs x {config.unroll_length} steps per update, "
        f"network {config.network.torso}, EnvPool threads {args.env_threads}; "
        f"{args.warmup} warm-up + {args.updates} timed updates per measurement"
    )
    c = components(config, args)
    bound = 1.0 / (1.0 / c["c_env"] + 1.0 / c["c_act"] + 1.0 / c["c_learn"])
    ours = training(config, args)
    theirs = peer(args.peer, config, args) if args.peer else None

    def steps(sps: float) -> dict[str, float]:
        return {"agent_steps_per_s": sps, "frames_per_s": FRAME_SKIP * sps}

    row = "agent steps/s"
    report.add(
        row, f"C_env: EnvPool, random actions ({c['pool']} pool)", [steps(c["c_env"])]
    )
    report.add(row, "C_act: policy, uint8 frames -> host", [{"obs_per_s": c["c_act"]}])
    epochs = getattr(config.algo_config, "num_epochs", 1)
    note = f"{epochs} epochs: x{epochs} samples/s" if epochs > 1 else ""
    report.add(row, "C_learn: learner update, fixed batch", [steps(c["c_learn"])], note)
    report.add(row, "bound: 1/(1/C_env + 1/C_act + 1/C_learn)", [steps(bound)])
    report.add(row, "training, compile excluded", [steps(ours["sps"])])
    ratio = {"ratio": ours["sps"] / bound}
    report.add(row, "training / bound", [ratio], "target >= 0.8")
    if theirs is not None:
        report.add(
            row, "peer (CleanRL ppo_atari_envpool_xla_jax)", [steps(theirs["sps"])]
        )
        ratio = {"ratio": ours["sps"] / theirs["sps"]}
        report.add(row, "ours / peer", [ratio], "target >= 1.2")
    split = {k.replace("/", "_"): v for k, v in ours["split"].items()}
    split["warmup_s"] = ours["warmup_s"]
    report.add(
        "training's time split",
        "seconds per wall second",
        [split],
        "actor/* summed over actor threads (can exceed 1)",
    )
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
