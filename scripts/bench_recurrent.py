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

Part 2 (`--purejaxrl DIR`, a checkout of luchris429/purejaxrl, never part of
this repository) runs PureJaxRL's `ppo_rnn.py` at its CartPole-v1 defaults
(4 envs x 128 steps, 4 epochs x 4 minibatches, lr 2.5e-4 annealed; dense 128,
a GRU of 128, then a dense 128 in each head) and ours at the same settings,
seed by seed, in this process: steps/s (compile excluded) and final return
(episodes of the last 1/num_logs of training, 5% at 20). `load_purejaxrl_rnn`
loads it for current libraries without changing its file: gymnax 1.0's step
as the five values it unpacks (bench_ppo's shim), an unused `navix` import
stubbed, and its `ScannedRNN` given flax >= 0.8's GRUCell (which now needs its
width; the carry is zeros, as before). Its `make_train` is timed by
`harness.time_program` (compiled ahead, then one call until ready), as
bench_ppo times `ppo.py`. With `--tiny` both train at `harness.TINY`'s sizes.

    python scripts/bench_recurrent.py --seeds 3
    python scripts/bench_recurrent.py --seeds 1 --num-envs 64 512
    python scripts/bench_recurrent.py --seeds 3 --skip-cores --purejaxrl ../purejaxrl
    python scripts/bench_recurrent.py --preset craftax_classic --total-steps 196608
    python scripts/bench_recurrent.py --algo r2d2 --seeds 3 --total-steps 200000
"""

import functools
import statistics
import types

import jax
import jax.numpy as jnp
from flax import linen as nn
from harness import (
    TINY,
    TINY_NOTE,
    Report,
    add_purejaxrl,
    parser,
    positive_int,
    run_main,
    time_program,
    train_figures,
)

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts


def ours(config: pjd.TrainConfig, seed: int) -> dict[str, float]:
    config = pjd.apply_overrides(config, {"seed": seed, "devices": 1})
    return train_figures(pjd.train(config))


def add_with_ratios(
    report: Report,
    row: str,
    runs: dict[str, list[dict]],
    baselines: list[str],
    note: str = "",
) -> None:
    """Each run's figures and its steps/s over each baseline's median.

    The ratio's key says what it divides, which way round: `steps_per_s /
    ff's` is this run's steps/s over the `ff` baseline's (not a return).
    """
    base = {
        b: statistics.median(r["steps_per_s"] for r in runs[b])
        for b in baselines
        if b in runs
    }
    for name, rows in runs.items():
        figures = [
            {
                **r,
                **{
                    f"steps_per_s / {b}'s": r["steps_per_s"] / v
                    for b, v in base.items()
                },
            }
            for r in rows
        ]
        report.add(row, name, figures, note)


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


class ScannedGRU(nn.Module):
    """ppo_rnn.py's `ScannedRNN` on flax >= 0.8: a GRU scanned over time that
    resets its carry to zeros where an episode began. Its GRUCell is given its
    width (the input's, 128), which flax now requires; the rest is its code."""

    @functools.partial(
        nn.scan,
        variable_broadcast="params",
        in_axes=0,
        out_axes=0,
        split_rngs={"params": False},
    )
    @nn.compact
    def __call__(self, carry, x):
        ins, resets = x
        zeros = self.initialize_carry(ins.shape[0], ins.shape[1])
        carry = jnp.where(resets[:, None], zeros, carry)
        return nn.GRUCell(features=ins.shape[1])(carry, ins)

    @staticmethod
    def initialize_carry(batch_size, hidden_size):
        # flax's GRUCell carry is zeros (what the old static call returned).
        return jnp.zeros((batch_size, hidden_size))


def load_purejaxrl_rnn(path: str) -> types.ModuleType:
    """PureJaxRL's ppo_rnn.py from a checkout at `path`, for current libraries."""
    import bench_ppo

    module = bench_ppo.load_purejaxrl(path, "ppo_rnn")
    if hasattr(module, "ScannedRNN"):  # looked up at call time, by name
        module.ScannedRNN = ScannedGRU
    return module


def purejaxrl_rnn(module: types.ModuleType, config: pjd.TrainConfig) -> dict:
    """Runs ppo_rnn.py's `make_train` at `config`'s settings, timed as bench_ppo's."""
    import bench_ppo

    peer_config = bench_ppo.purejaxrl_config(config)
    del peer_config["ACTIVATION"]  # ppo_rnn.py's network is relu throughout
    train = module.make_train(peer_config)
    compile_s, seconds, out = time_program(train, jax.random.PRNGKey(config.seed))
    metric = jax.device_get(out["metric"])
    steps = metric["returned_episode"].shape[0] * config.steps_per_update
    return {
        "steps_per_s": steps / seconds,
        "compile_s": compile_s,
        "return": bench_ppo.purejaxrl_return(metric, config.num_logs),
    }


def part_peer(report: Report, module: types.ModuleType, seeds: int, tiny: bool) -> None:
    """PureJaxRL's ppo_rnn.py and ours at its defaults, seed by seed."""
    config = pjd.apply_overrides(pjd.TrainConfig(), PEER_CONFIG)
    if tiny:
        config = pjd.apply_overrides(config, TINY)
    peer, mine = "PureJaxRL ppo_rnn.py", "purejaxdrl --network.core gru"
    runs = {peer: [], mine: []}
    for seed in range(seeds):  # alternated, so drifts in machine load hit both
        seeded = pjd.apply_overrides(config, {"seed": seed})
        runs[peer].append(purejaxrl_rnn(module, seeded))
        runs[mine].append(ours(config, seed))
    row = "CartPole-v1, PureJaxRL ppo_rnn.py defaults on both sides"
    add_with_ratios(report, row, runs, [peer], TINY_NOTE if tiny else "")


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__, repeats=False)  # whole runs, once each
    p.add_argument("--preset", default="cartpole_masked")
    p.add_argument("--algo", default="ppo", help="the preset's algorithm")
    p.add_argument("--seeds", type=positive_int, default=3)
    p.add_argument("--total-steps", type=positive_int, default=None)
    p.add_argument(
        "--num-envs",
        type=int,
        nargs="+",
        default=[0],
        help="environment counts to compare at (0: the preset's)",
    )
    add_purejaxrl(p, "ppo_rnn")
    p.add_argument("--skip-cores", action="store_true")
    args = p.parse_args(argv)
    # Loaded first: a checkout that does not import fails before the cores train.
    peer = load_purejaxrl_rnn(args.purejaxrl) if args.purejaxrl else None
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
            note = TINY_NOTE if args.tiny else ""
            add_with_ratios(report, row, runs, ["ff", "ff + core-size layer"], note)
    if peer is not None:
        part_peer(report, peer, args.seeds, args.tiny)
    else:
        report.skip("PureJaxRL ppo_rnn.py", "peer not run: no --purejaxrl given")
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
