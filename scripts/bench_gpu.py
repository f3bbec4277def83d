"""The GPU suite: every headline figure, ours beside its peer, in one process.

Rows (`--rows` picks a subset, run in the order given, each once; by default
all of them, in this order, most wanted first):

- ppo_cartpole: PPO on CartPole-v1 at PureJaxRL's settings (128 steps,
  4 epochs x 4 minibatches, lr 2.5e-4 annealed), `--seeds` seeds vmapped at
  each of `--ppo-envs` environment counts: ours as one `purejaxdrl.sweeps`,
  PureJaxRL's `ppo.py` as `jit(vmap(make_train))` (`--purejaxrl DIR`, a
  fetched checkout, never part of this repository). Aggregate env steps/s
  over all seeds, compile excluded, and the final return (each seed's, then
  their mean, on both sides).
- brax_ant: our `ant` preset beside brax's own `ppo.train` on the same
  configuration and budget (`scripts/bench_brax.py`'s mapping); steps/s over
  chunks 2..n and the final policies' return under brax's evaluation protocol;
  ours' own steps/s (`own_steps_per_s`) beside it, and a note where the two
  disagree by over 10%.
- apex_dqn: Ape-X's and DQN's gradient steps/s on CartPole with a 1M replay
  (`scripts/bench_apex.py`).
- breakout_minatar: the `breakout_minatar` PPO preset, seeds vmapped, at its
  64 environments and at 1024.
- cnn_learners: the Nature CNN and the IMPALA ResNet on 84x84x4 frames:
  forward obs/s and training samples/s (`scripts/bench_networks.py`).
- recurrent: masked-CartPole PPO with GRU, LSTM and minGRU cores beside two
  feed-forward baselines (`scripts/bench_recurrent.py`).
- playground: MuJoCo Playground's CartpoleBalance PPO beside brax's trainer
  on `wrap_for_brax_training` (`scripts/bench_playground.py`), at the
  `cartpole_balance` preset's settings with `--playground-envs` environments;
  then, where MuJoCo Menagerie's models are found (`MUJOCO_MENAGERIE_PATH`),
  Go1JoystickFlatTerrain the same way at its preset's settings (8192 envs,
  Playground's randomiser on both sides) for `--go1-updates` updates. Both
  budgets are rounded down to an even number of updates, as brax's trainer
  runs two epochs of ceil(updates / 2): the two sides train equal steps.

`--budget-seconds` stops before a row that would not fit (`ESTIMATES`; at
`--tiny`, 15 s each), or before an environment count of ppo_cartpole or
breakout_minatar when under 15 s are left, and the table says what did not
run. A row that fails is listed as failed and the others still run; the
suite then exits with status 1. `--purejaxrl DIR` is checked before any row:
DIR/purejaxrl/ppo.py must exist. `--json` and
`--markdown` are rewritten after every line, so a killed run keeps them all.
`--profile DIR` runs each contender of the rows beside a peer (and
breakout_minatar) once more under `jax.profiler`, and adds a line per
contender saying where its device's time went: busy share, operations, and
the idle gaps where it waited on the host (`scripts/device_time.py`; only
the timed region of each run counts, not its compile or cache loads).
`--tiny` runs every row but playground (MJX's step compiles for minutes on a
CPU) at toy sizes on any machine (CI runs it on a CPU). Results: printed as
they come, and written with `--json` / `--markdown`, with the date, the
command line and the total seconds. Compile time is excluded from every rate;
a `--tiny` ratio is a check that the code runs, not a measurement (its note
says so).

    python scripts/bench_gpu.py --purejaxrl /tmp/purejaxrl --json out.json
    python scripts/bench_gpu.py --tiny --rows ppo_cartpole apex_dqn
    bash scripts/gpu_setup.sh   # the wheels a bare GPU machine needs (docs/gpu.md)
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import os
import sys
import tempfile
import time
import traceback
import types
from collections.abc import Callable, Iterable

import jax
import numpy as np
from harness import (
    TINY,
    TINY_NOTE,
    Budget,
    Report,
    Row,
    add_purejaxrl,
    interleave,
    parser,
    positive_float,
    positive_int,
    run_main,
    slug,
    time_program,
    train_seeded,
)

import purejaxdrl as pjd  # sets the XLA CPU flags before JAX starts a backend

# Rough seconds each row needs on one H100/H200 at full size (compiles
# included): a row starts only if the budget has this much left.
ESTIMATES = {
    "ppo_cartpole": 120,
    "brax_ant": 150,
    "apex_dqn": 40,
    "breakout_minatar": 40,
    "cnn_learners": 20,
    "recurrent": 60,
    # CartpoleBalance took 179 s on an H200 (2026-11-28): 47 s of compile per
    # run of ours, which the persistent cache did not shorten, and brax's.
    "playground": 180,
    # Within the playground row, not yet measured beside brax: our Go1 run
    # compiled for 141 s on an H200; brax's compile is assumed alike.
    "go1": 360,
}


def row_ppo_cartpole(report: Report, args: argparse.Namespace, budget: Budget) -> None:
    """Aggregate PPO steps/s over vmapped seeds, ours vs PureJaxRL, per env count."""
    import bench_ppo

    peer = _load_peer(report, args.purejaxrl)
    unroll = 8 if args.tiny else 128
    for num_envs in [8] if args.tiny else args.ppo_envs:
        if not budget.allows(15):
            report.skip("ppo_cartpole", f"{num_envs} envs: out of budget")
            continue
        # At least 8 updates, and about 1M steps per seed at small sizes.
        updates = 2 if args.tiny else max(8, 2**20 // (num_envs * unroll))
        config = bench_ppo.algo_config(
            "ppo",
            {
                "num_envs": num_envs,
                "unroll_length": unroll,
                "total_steps": num_envs * unroll * updates,
                "num_logs": 2,
                "devices": 1,
            },
        )
        seeds = args.seeds

        def ours(
            repeat: int, config: pjd.TrainConfig = config, seeds: int = seeds
        ) -> dict[str, float]:
            base = pjd.apply_overrides(config, {"seed": repeat * seeds})
            result = pjd.sweep(base, seeds=seeds, target_return=None, console=False)
            return {
                "steps_per_s": result.env_steps / result.train_seconds,
                "compile_s": result.compile_seconds,
                "return": float(np.nanmean(result.final_return)),
            }

        contenders: dict[str, Callable[[int], dict[str, float]]] = {"ours": ours}
        if peer is not None:
            contenders["PureJaxRL"] = functools.partial(
                _purejaxrl_vmapped, peer, config, seeds
            )
        row = f"ppo_cartpole {num_envs} envs x {seeds} seeds"
        runs = interleave(contenders, args.repeats, _trace_dir(args, row))
        ours_row = report.add(row, "purejaxdrl sweep", runs["ours"])
        if peer is not None:
            name = "PureJaxRL jit(vmap(make_train))"
            theirs = report.add(row, name, runs["PureJaxRL"])
            ratio = ours_row.medians()["steps_per_s"] / theirs.medians()["steps_per_s"]
            note = _tiny_note(args)
            report.add(row, "ratio ours / PureJaxRL", [{"steps_per_s": ratio}], note)
        _add_device_time(report, args, row, contenders)


def _load_peer(report: Report, path: str | None) -> types.ModuleType | None:
    """PureJaxRL's ppo.py, or None with the reason skipped: ours runs either way.

    A checkout that fails to import (its wrappers import brax) is a failed
    part of the row, which the suite's exit status reports.
    """
    import bench_ppo

    if path is None:
        report.skip("ppo_cartpole", "PureJaxRL side not run: no --purejaxrl given")
        return None
    try:
        return bench_ppo.load_purejaxrl(path)
    except Exception as e:  # our side of the row still runs
        why = f"{type(e).__name__}: {str(e).splitlines()[0]}"
        report.skip("ppo_cartpole", f"failed: PureJaxRL side ({path}): {why}")
        return None


def _tiny_note(args: argparse.Namespace) -> str:
    # A ratio at toy sizes compares first-call costs, not throughput.
    return TINY_NOTE if args.tiny else ""


def _purejaxrl_vmapped(
    ppo: types.ModuleType, config: pjd.TrainConfig, seeds: int, repeat: int
) -> dict[str, float]:
    """PureJaxRL's `make_train` vmapped over `seeds` keys, compile excluded."""
    import bench_ppo

    keys = jax.random.split(jax.random.PRNGKey(repeat), seeds)
    train = jax.vmap(ppo.make_train(bench_ppo.purejaxrl_config(config)))
    compile_s, seconds, out = time_program(train, keys)
    metrics = {
        k: np.asarray(out["metrics"][k])
        for k in ("returned_episode", "returned_episode_returns")
    }
    num_updates = metrics["returned_episode"].shape[1]
    steps = seeds * num_updates * config.steps_per_update
    return {
        "steps_per_s": steps / seconds,
        "compile_s": compile_s,
        "return": bench_ppo.purejaxrl_return(metrics, config.num_logs),
    }


def row_brax_ant(report: Report, args: argparse.Namespace, budget: Budget) -> None:
    """Our ant preset beside brax's ppo.train: steps/s and evaluation return."""
    import bench_brax

    bench_brax.install_jax_shims()
    chunks = 3
    sizes = types.SimpleNamespace(
        env="inverted_pendulum" if args.tiny else "ant",
        # 64: brax's trainer splits envs over every local device (8 fake
        # ones in the tests), and each device's share over 8 minibatches.
        num_envs=64 if args.tiny else None,
        unroll_length=4 if args.tiny else None,
        total_steps=64 * 4 * chunks if args.tiny else args.ant_steps,
    )
    config = bench_brax.make_config(sizes, chunks)
    if args.tiny:  # brax's trivial test env: both trainers, compiled in seconds
        fast = {"id": "brax/fast", "options": config.env.options}  # ant's options
        config = pjd.apply_overrides(config, {"env": fast})
    evaluate = bench_brax.make_evaluate(config, 4 if args.tiny else 128)
    policies: dict[str, Callable] = {}

    def ours(repeat: int) -> dict[str, float]:
        seeded = pjd.apply_overrides(config, {"seed": repeat})
        figures, params = bench_brax.run_ours(seeded)
        if "ours" not in policies:
            agent = pjd.training.make_experiment(config).agent
            policies["ours"] = bench_brax.our_policy_fn(agent)
        return {
            "steps_per_s": figures["steps_per_s"],
            "own_steps_per_s": figures["own_steps_per_s"],  # the clock's check
            "compile_s": figures["compile_s"],
            "eval_return": evaluate(policies["ours"], params),
        }

    def brax(repeat: int) -> dict[str, float]:
        seeded = pjd.apply_overrides(config, {"seed": repeat})
        figures, make_policy, params = bench_brax.run_brax(seeded, chunks)
        policies.setdefault("brax", make_policy)
        return {
            "steps_per_s": figures["steps_per_s"],
            "compile_s": figures["compile_s"],
            "eval_return": evaluate(policies["brax"], params),
        }

    row = f"{config.env.id} PPO, {config.num_envs} envs, {config.total_steps:,} steps"
    contenders = {"ours": ours, "brax": brax}
    runs = interleave(contenders, args.brax_repeats, _trace_dir(args, row))
    note = bench_brax.clock_note(Row(row, "", runs["ours"]).medians(), args.tiny)
    a = report.add(row, "purejaxdrl", runs["ours"], note)
    b = report.add(row, "brax ppo.train", runs["brax"], "compile estimated")
    ratio = a.medians()["steps_per_s"] / b.medians()["steps_per_s"]
    report.add(row, "ratio ours / brax", [{"steps_per_s": ratio}], _tiny_note(args))
    _add_device_time(report, args, row, contenders)


def row_apex_dqn(report: Report, args: argparse.Namespace, budget: Budget) -> None:
    """Ape-X's gradient steps/s against DQN's, same replay and batch sizes."""
    import bench_apex

    sizes = bench_apex.TINY_SIZES if args.tiny else {}
    total = sizes.get("total_steps", 400_000)
    buffer = sizes.get("buffer_size", 1_000_000)
    configs = bench_apex.configs(total, buffer, sizes.get("batch_size", 256))
    runs = bench_apex.measure(configs, args.repeats)
    row = f"Ape-X / DQN CartPole, replay {buffer:,}, {total:,} steps"
    apex = report.add(row, "apex", runs["apex"])
    dqn = report.add(row, "dqn", runs["dqn"])
    ratio = apex.medians()["grad_steps_per_s"] / dqn.medians()["grad_steps_per_s"]
    note = _tiny_note(args)
    report.add(row, "ratio apex / dqn", [{"grad_steps_per_s": ratio}], note)


def row_breakout_minatar(
    report: Report, args: argparse.Namespace, budget: Budget
) -> None:
    """The Breakout-MinAtar PPO preset, seeds vmapped, at two env counts."""
    preset = pjd.load_preset("breakout_minatar", "ppo").config
    for num_envs in [4] if args.tiny else [64, 1024]:
        if not budget.allows(15):
            report.skip("breakout_minatar", f"{num_envs} envs: out of budget")
            continue
        unroll = 8 if args.tiny else preset.unroll_length
        updates = 2 if args.tiny else max(16, 2**21 // (num_envs * unroll))
        config = pjd.apply_overrides(
            preset,
            {
                "num_envs": num_envs,
                "unroll_length": unroll,
                "total_steps": num_envs * unroll * updates,
                "num_logs": 2,
                "devices": 1,
            },
        )

        def ours(repeat: int, config: pjd.TrainConfig = config) -> dict[str, float]:
            base = pjd.apply_overrides(config, {"seed": repeat * args.seeds})
            result = pjd.sweep(
                base, seeds=args.seeds, target_return=None, console=False
            )
            return {
                "steps_per_s": result.env_steps / result.train_seconds,
                "compile_s": result.compile_seconds,
                "return": float(np.nanmean(result.final_return)),
            }

        row = f"breakout_minatar PPO {num_envs} envs x {args.seeds} seeds"
        runs = interleave({"ours": ours}, args.repeats, _trace_dir(args, row))
        steps = f"{config.total_steps:,} steps"
        report.add(row, "purejaxdrl sweep", runs["ours"], steps)
        _add_device_time(report, args, row, runs)


def row_cnn_learners(report: Report, args: argparse.Namespace, budget: Budget) -> None:
    """Nature CNN and IMPALA ResNet: forward and training throughput."""
    import bench_networks

    batch = 8 if args.tiny else 256
    lowering = "im2col" if jax.default_backend() == "cpu" else "lax.conv"
    # At toy size the Nature CNN alone: the ResNet's gradient programs take a
    # minute of CPU to compile, and bench_networks.py --tiny (its own test)
    # runs them; this keeps the whole suite's --tiny within 2 minutes.
    for torso in ("nature",) if args.tiny else ("nature", "impala_resnet"):
        figures = bench_networks.measure(torso, lowering, batch, args.repeats)
        # One figures dict, each the fastest of the repeats: no spread to show.
        report.add(
            f"{torso} torso, batch {batch}, {lowering}",
            torso,
            [figures],
            f"best of {args.repeats}",
        )


def row_recurrent(report: Report, args: argparse.Namespace, budget: Budget) -> None:
    """Recurrent cores against feed-forward PPO on masked CartPole."""
    import bench_recurrent

    # At toy size, one core beside its baseline: the code path, not the table
    # (bench_recurrent.py --tiny's programs).
    only = ["ff + core-size layer", "core gru"] if args.tiny else None
    sizes = TINY if args.tiny else {"total_steps": 2_000_000, "num_envs": 512}
    runs = bench_recurrent.part_cores("cartpole_masked", "ppo", 1, sizes, only)
    row = (
        f"cartpole_masked PPO {sizes['num_envs']} envs, {sizes['total_steps']:,} steps"
    )
    bench_recurrent.add_with_ratios(report, row, runs, ["ff + core-size layer"])


def row_playground(report: Report, args: argparse.Namespace, budget: Budget) -> None:
    """Playground's CartpoleBalance and Go1 PPO beside brax's trainer."""
    row = "playground CartpoleBalance PPO"
    if args.tiny:  # MJX's step compiles for minutes on a CPU
        report.skip(row, "--tiny: scripts/bench_playground.py --tiny (-m slow)")
        return
    from purejaxdrl.env import menagerie

    overrides = {"num_envs": args.playground_envs, "total_steps": args.playground_steps}
    _playground_beside_brax(report, args, row, "cartpole_balance", overrides)
    row = "playground Go1JoystickFlatTerrain PPO"
    if menagerie.find_menagerie() is None:
        report.skip(row, "needs MuJoCo Menagerie's models (MUJOCO_MENAGERIE_PATH)")
    elif not budget.allows(ESTIMATES["go1"]):
        report.skip(row, f"out of budget ({budget.left():.0f} s left)")
    else:
        import bench_playground

        preset = "go1_joystick_flat_terrain"
        per_update = bench_playground.config_for(False, preset).steps_per_update
        overrides = {"total_steps": args.go1_updates * per_update}  # its batch
        _playground_beside_brax(report, args, row, preset, overrides)


def _playground_beside_brax(
    report: Report, args: argparse.Namespace, row: str, preset: str, overrides: dict
) -> None:
    import bench_playground

    config = bench_playground.config_for(
        False, preset, **overrides, eval={"episodes": 128, "every": 0}
    )
    row = f"{row}, {config.num_envs} envs, {config.total_steps:,} steps"
    runs = interleave(
        {
            "ours": lambda seed: train_seeded(config, seed),
            "brax": lambda seed: bench_playground.brax_ppo(config, seed),
        },
        args.repeats,
        _trace_dir(args, row),
    )
    a = report.add(row, "purejaxdrl", runs["ours"])
    b = report.add(row, "brax ppo.train", runs["brax"])
    ratio = a.medians()["steps_per_s"] / b.medians()["steps_per_s"]
    report.add(row, "ratio ours / brax", [{"steps_per_s": ratio}])
    _add_device_time(report, args, row, runs)


def _trace_dir(args: argparse.Namespace, row: str) -> str | None:
    # With --profile, where interleave traces this row's contenders.
    return os.path.join(args.profile, slug(row)) if args.profile else None


def _add_device_time(
    report: Report, args: argparse.Namespace, row: str, names: Iterable[str]
) -> None:
    """With --profile, a line per contender: where its device's time went."""
    if not args.profile:
        return
    import device_time

    for name in names:
        directory = os.path.join(args.profile, slug(row), slug(name))
        try:
            figures, note = device_time.read(directory)
        except (FileNotFoundError, ValueError) as e:
            report.skip(row, f"{name}'s device time: {e}")
            continue
        report.add(row, f"{name}: device time", [figures], note)


ROWS: dict[str, Callable[[Report, argparse.Namespace, Budget], None]] = {
    "ppo_cartpole": row_ppo_cartpole,
    "brax_ant": row_brax_ant,
    "apex_dqn": row_apex_dqn,
    "breakout_minatar": row_breakout_minatar,
    "cnn_learners": row_cnn_learners,
    "recurrent": row_recurrent,
    "playground": row_playground,
}


def make_parser() -> argparse.ArgumentParser:
    """The suite's options; `--help` prints the module docstring (the rows)."""
    p = parser(__doc__)
    p.set_defaults(repeats=2)
    p.add_argument(
        "--rows",
        nargs="+",
        choices=list(ROWS),
        default=list(ROWS),
        metavar="ROW",
        help=f"rows to run ({', '.join(ROWS)}: each described above), in the "
        "order given (default: all, in that order)",
    )
    pos = positive_int
    p.add_argument(
        "--budget-seconds",
        type=positive_float,
        default=None,
        help="wall-clock seconds for the suite: a row starts only if its "
        "estimate (at --tiny, 15 s) fits what is left, an environment count "
        "of ppo_cartpole or breakout_minatar only if 15 s do; the table lists "
        "what was skipped (default: no limit)",
    )
    add_purejaxrl(p)
    p.add_argument("--seeds", type=pos, default=8, help="vmapped seeds per sweep")
    p.add_argument(
        "--ppo-envs",
        type=pos,
        nargs="+",
        default=[64, 512, 2048, 8192],
        help="ppo_cartpole's environment counts, a row of the table each",
    )
    p.add_argument(
        "--ant-steps",
        type=pos,
        default=10_000_000,
        help="env steps of each brax_ant run",
    )
    p.add_argument(
        "--playground-envs",
        type=pos,
        default=2048,
        help="environments of the playground row's CartpoleBalance runs",
    )
    p.add_argument(
        "--playground-steps",
        type=pos,
        default=2048 * 30 * 24,
        help="env steps of each CartpoleBalance run, rounded down to an even "
        "number of updates (brax's two epochs)",
    )
    p.add_argument(
        "--go1-updates",
        type=pos,
        default=10,
        help="Go1's updates (of its preset's batch)",
    )
    p.add_argument("--brax-repeats", type=pos, default=1, help="ant runs per side")
    p.add_argument(
        "--profile",
        metavar="DIR",
        help="then run each contender once more, traced by jax.profiler into "
        "DIR/<row>/<contender> (not counted in the figures), and add where its "
        "device's time went (device_time.py)",
    )
    p.add_argument(
        "--compile-cache",
        default=None,
        help="persistent compilation cache (default: a fresh temporary folder, so "
        "a repeat reloads its program instead of compiling it again)",
    )
    return p


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    args = make_parser().parse_args(argv)
    args.rows = list(dict.fromkeys(args.rows))  # a row named twice runs once
    if args.tiny:
        args.seeds = min(args.seeds, 2)
        args.repeats = 1
    return args


def stub_seaborn() -> None:
    """An empty `seaborn` module where seaborn is not installed.

    gymnax 1.0.1 imports seaborn at import time (`environments/misc/pong.py`,
    for rendering, which no row does); seaborn needs pandas, and the two
    would take the wheels of gpu_setup.sh past what a GPU allocation lets us
    bring (docs/gpu.md). As bench_ppo stubs navix for PureJaxRL's wrappers.
    """
    if importlib.util.find_spec("seaborn") is None:
        sys.modules.setdefault("seaborn", types.ModuleType("seaborn"))


def main(argv: list[str] | None = None) -> Report:
    args = parse(argv)
    stub_seaborn()  # before any row imports gymnax
    with tempfile.TemporaryDirectory(prefix="bench-gpu-cache-") as fresh:
        pjd.enable_compilation_cache(args.compile_cache or fresh)
        return run_rows(args)


def run_rows(args: argparse.Namespace) -> Report:
    """Runs the chosen rows within the budget; each row's seconds are printed."""
    budget = Budget(args.budget_seconds)
    report = Report("purejaxdrl GPU suite" + (" (tiny)" if args.tiny else ""))
    report.save_as_it_goes(args.json, args.markdown)  # a kill keeps every line
    for name in args.rows:
        # At --tiny, every row fits the env-count margin: toy sizes, toy times.
        if not budget.allows(15 if args.tiny else ESTIMATES[name]):
            report.skip(name, f"out of budget ({max(0, budget.left()):.0f} s left)")
            continue
        left = max(0, budget.left())
        left = f", {left:.0f} s of budget left" if args.budget_seconds else ""
        print(f"\n[{name}]{left}", flush=True)
        start = time.perf_counter()
        try:
            ROWS[name](report, args, budget)
        except Exception as e:  # one broken row must not lose the others
            traceback.print_exc()
            report.skip(name, f"failed: {type(e).__name__}: {str(e).splitlines()[0]}")
        print(f"[{name}] took {time.perf_counter() - start:.0f} s", flush=True)
    report.finish(args)
    print(f"total {report.machine['total_s']:.0f} s", flush=True)
    failed = list(dict.fromkeys(r for r, why in report.skipped if why[:6] == "failed"))
    if failed:  # a scripted run (CI) must see it, not only the table
        print(f"bench_gpu.py: rows failed: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)
    return report


if __name__ == "__main__":
    run_main(main)
