"""Recurrent PPO (or R2D2) against feed-forward, and beside PureJaxRL's ppo_rnn.py.

Part 1 trains one config (the `cartpole_masked` preset by default) five or
six ways in one process: `--network.core gru`, `lstm` and `mingru` (and, where
the preset has no head layers, minGRU with a dense layer of `core_size` after
it, which it needs to learn reliably), and two feed-forward networks
(`--network.core none`): "ff", the preset's torso and head layers, and
"ff + core-size layer", which also has a dense layer of `core_size` where
the core was (the same depth and widths: its ratio is the
cost of recurrence alone, not of the core's extra layer). It reports each
one's steps/s (compile excluded), compile seconds and final return, and the
recurrent/feed-forward ratios of steps/s (target >= 0.5x) and compile time
(target < 10 s). `--algo r2d2` does the same for the preset's R2D2 config.

Part 2 (`--peer DIR`) runs PureJaxRL's `ppo_rnn.py` (fetched, with a shim for
current JAX; never part of this repository) at its CartPole-v1 defaults (4 envs
x 128 steps, 4 epochs x 4 minibatches, lr 2.5e-4 annealed; dense 128, a GRU
of 128, then a dense 128 in each head) and
ours at the same settings, seed by seed, in this process: steps/s (compile
excluded) and final return (episodes of the last 5% of training).
`DIR/run_peer.py` must define `run(config: dict, seed: int) -> dict` with keys
`steps_per_s`, `compile_s` and `final_return`.

    python scripts/bench_recurrent.py --seeds 3
    python scripts/bench_recurrent.py --seeds 1 --num-envs 64 512
    python scripts/bench_recurrent.py --seeds 3 --peer /path/to/purejaxrl_shim
    python scripts/bench_recurrent.py --preset craftax_classic --total-steps 196608
    python scripts/bench_recurrent.py --algo r2d2 --seeds 3 --total-steps 200000
"""

import statistics
import sys

from harness import TINY, Report, parser, train_figures

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts


def ours(config: pjd.TrainConfig, seed: int) -> dict[str, float]:
    config = pjd.apply_overrides(config, {"seed": seed, "devices": 1})
    return train_figures(pjd.train(config))


def add_with_ratios(
    report: Report, row: str, runs: dict[str, list[dict]], baselines: list[str]
) -> None:
    """Each run's figures and its steps/s relative to each baseline's median."""
    base = {
        b: statistics.median(r["steps_per_s"] for r in runs[b])
        for b in baselines
        if b in runs
    }
    for name, rows in runs.items():
        figures = [
            {**r, **{f"vs {b}": r["steps_per_s"] / v for b, v in base.items()}}
            for r in rows
        ]
        report.add(row, name, figures)


def part_cores(
    preset: str,
    algo: str,
    seeds: int,
    overrides: dict,
    only: list[str] | None = None,
) -> dict[str, list[dict]]:
    """Trains each core and both feed-forward baselines: name -> figures per seed."""
    config = pjd.apply_overrides(pjd.load_preset(preset, algo).config, overrides)
    runs = {}
    network = config.network
    # Two feed-forward baselines. A core has heads after it, so the first
    # gets their layers in its torso (the preset's layers minus the core's);
    # the second also gets the core's layer, as a dense layer of core_size:
    # the same depth and widths, so its ratio is the cost of recurrence alone.
    torso, heads = list(network.hidden_sizes), list(network.head_sizes)
    variants = {
        "ff": torso + heads,
        "ff + core-size layer": torso + [network.core_size] + heads,
    }
    variants = {
        name: {"core": "none", "hidden_sizes": sizes, "head_sizes": []}
        for name, sizes in variants.items()
    }
    for core in ("gru", "lstm", "mingru"):
        variants[f"core {core}"] = {"core": core}
    if not heads:  # minGRU's recurrence is linear: it learns with a layer after
        dense = [network.core_size]
        variants["core mingru + dense head"] = {"core": "mingru", "head_sizes": dense}
    for name, net in variants.items():
        if only is not None and name not in only:
            continue
        cfg = pjd.apply_overrides(config, {"network": net})
        runs[name] = [ours(cfg, seed) for seed in range(seeds)]
    return runs


# PureJaxRL ppo_rnn.py's CartPole-v1 defaults, as our config.
PEER_CONFIG = {
    "env": {"id": "CartPole-v1"},
    "num_envs": 4,
    "unroll_length": 128,
    "total_steps": 500_000,
    "ppo": {
        "num_epochs": 4, "num_minibatches": 4, "learning_rate": 2.5e-4,
        "anneal_lr": True, "gamma": 0.99, "gae_lambda": 0.95, "clip_eps": 0.2,
        "entropy_cost": 0.01, "value_cost": 0.5, "max_grad_norm": 0.5,
    },
    "network": {"hidden_sizes": [128], "activation": "relu", "core": "gru",
                "core_size": 128, "head_sizes": [128]},
}  # fmt: skip


def part_peer(report: Report, peer_dir: str, seeds: int) -> None:
    sys.path.insert(0, peer_dir)
    from run_peer import run  # the fetched peer's shim, outside this repository

    config = pjd.apply_overrides(pjd.TrainConfig(), PEER_CONFIG)
    peer_config = {"NUM_ENVS": 4, "NUM_STEPS": 128, "TOTAL_TIMESTEPS": 500_000}
    runs = {"PureJaxRL ppo_rnn.py": [], "purejaxdrl --network.core gru": []}
    for seed in range(seeds):  # alternated, so drifts in machine load hit both
        peer = run(peer_config, seed)
        runs["PureJaxRL ppo_rnn.py"].append(
            {
                "steps_per_s": peer["steps_per_s"],
                "compile_s": peer["compile_s"],
                "return": peer["final_return"],
            }
        )
        runs["purejaxdrl --network.core gru"].append(ours(config, seed))
    row = "CartPole-v1, PureJaxRL ppo_rnn.py defaults on both sides"
    add_with_ratios(report, row, runs, ["PureJaxRL ppo_rnn.py"])


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__, repeats=False)  # whole runs, once each
    p.add_argument("--preset", default="cartpole_masked")
    p.add_argument("--algo", default="ppo", help="the preset's algorithm")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--total-steps", type=int, default=None)
    p.add_argument(
        "--num-envs",
        type=int,
        nargs="+",
        default=[0],
        help="environment counts to compare at (0: the preset's)",
    )
    p.add_argument("--peer", default=None, help="folder with run_peer.py")
    p.add_argument("--skip-cores", action="store_true")
    args = p.parse_args(argv)
    report = Report(f"Recurrent cores vs feed-forward: {args.preset} {args.algo}")
    # At toy size, one core beside its baseline: the code path, not the table.
    only = ["ff + core-size layer", "core gru"] if args.tiny else None
    if args.tiny:
        args.seeds, args.num_envs = 1, [0]
    if not args.skip_cores:
        for num_envs in args.num_envs:
            overrides = dict(TINY) if args.tiny else {}
            if args.total_steps:
                overrides["total_steps"] = args.total_steps
            if num_envs:
                overrides["num_envs"] = num_envs
            runs = part_cores(args.preset, args.algo, args.seeds, overrides, only)
            row = f"{num_envs or 'preset'} envs, seeds 0..{args.seeds - 1}"
            add_with_ratios(report, row, runs, ["ff", "ff + core-size layer"])
    if args.peer:
        part_peer(report, args.peer, args.seeds)
    return report.finish(args)


if __name__ == "__main__":
    main()
