"""The GPU suite's rows beside a peer: PureJaxRL's PPO, brax's trainer.

ppo_cartpole (ours as a sweep, PureJaxRL's `jit(vmap(make_train))`, where
`--purejaxrl` names a checkout), brax_ant (`bench_brax.py`'s mapping) and
playground (`bench_playground.py`'s, CartpoleBalance then Go1).
"""

from __future__ import annotations

import argparse
import functools
import types
from collections.abc import Callable

import jax
import numpy as np
from harness import Budget, Report, Row, interleave, time_program, train_seeded

import purejaxdrl as pjd

from .common import ESTIMATES, add_device_time, tiny_note, trace_dir


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
        runs = interleave(contenders, args.repeats, trace_dir(args, row))
        ours_row = report.add(row, "purejaxdrl sweep", runs["ours"])
        if peer is not None:
            name = "PureJaxRL jit(vmap(make_train))"
            theirs = report.add(row, name, runs["PureJaxRL"])
            ratio = ours_row.medians()["steps_per_s"] / theirs.medians()["steps_per_s"]
            note = tiny_note(args)
            report.add(row, "ratio ours / PureJaxRL", [{"steps_per_s": ratio}], note)
        add_device_time(report, args, row, contenders)


def _load_peer(report: Report, path: str | None) -> types.ModuleType | None:
    """PureJaxRL's ppo.py, or None with the reason skipped: ours runs either way.

    A checkout that fails to import (its wrappers import brax) is a failed
    part of the row, which the suite's exit status reports.
    """
    import bench_ppo

    if path is None:
        status = "our side ran; the PureJaxRL side did not"
        report.skip("ppo_cartpole", "no --purejaxrl given", status=status)
        return None
    try:
        return bench_ppo.load_purejaxrl(path)
    except Exception as e:  # our side of the row still runs
        why = f"{type(e).__name__}: {str(e).splitlines()[0]}"
        status = "our side ran; the peer failed"
        report.skip("ppo_cartpole", f"PureJaxRL ({path}): {why}", status=status)
        return None


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
    from ppo_beside_brax import brax_side, clock
    from ppo_beside_brax import ours as our_ppo

    brax_side.install_jax_shims()
    chunks = 3
    sizes = types.SimpleNamespace(
        env="inverted_pendulum" if args.tiny else "ant",
        # 64: brax's trainer splits envs over every local device (8 fake
        # ones in the tests), and each device's share over 8 minibatches.
        num_envs=64 if args.tiny else None,
        unroll_length=4 if args.tiny else None,
        total_steps=64 * 4 * chunks if args.tiny else args.ant_steps,
    )
    config = our_ppo.make_config(sizes, chunks)
    if args.tiny:  # brax's trivial test env: both trainers, compiled in seconds
        fast = {"id": "brax/fast", "options": config.env.options}  # ant's options
        config = pjd.apply_overrides(config, {"env": fast})
    evaluate = brax_side.make_evaluate(config, 4 if args.tiny else 128)
    policies: dict[str, Callable] = {}

    def ours(repeat: int) -> dict[str, float]:
        seeded = pjd.apply_overrides(config, {"seed": repeat})
        figures, params = our_ppo.run_ours(seeded)
        if "ours" not in policies:
            agent = pjd.training.make_experiment(config).agent
            policies["ours"] = our_ppo.our_policy_fn(agent)
        return {
            "steps_per_s": figures["steps_per_s"],
            "own_steps_per_s": figures["own_steps_per_s"],  # the clock's check
            "compile_s": figures["compile_s"],
            "eval_return": evaluate(policies["ours"], params),
        }

    def brax(repeat: int) -> dict[str, float]:
        seeded = pjd.apply_overrides(config, {"seed": repeat})
        figures, make_policy, params = brax_side.run_brax(seeded, chunks)
        policies.setdefault("brax", make_policy)
        return {
            "steps_per_s": figures["steps_per_s"],
            "compile_s": figures["compile_s"],
            "eval_return": evaluate(policies["brax"], params),
        }

    row = f"{config.env.id} PPO, {config.num_envs} envs, {config.total_steps:,} steps"
    contenders = {"ours": ours, "brax": brax}
    runs = interleave(contenders, args.brax_repeats, trace_dir(args, row))
    note = clock.clock_note(Row(row, "", runs["ours"]).medians(), args.tiny)
    a = report.add(row, "purejaxdrl", runs["ours"], note)
    b = report.add(row, "brax ppo.train", runs["brax"], "compile estimated")
    ratio = a.medians()["steps_per_s"] / b.medians()["steps_per_s"]
    report.add(row, "ratio ours / brax", [{"steps_per_s": ratio}], tiny_note(args))
    add_device_time(report, args, row, contenders)


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
        trace_dir(args, row),
    )
    a = report.add(row, "purejaxdrl", runs["ours"])
    b = report.add(row, "brax ppo.train", runs["brax"])
    ratio = a.medians()["steps_per_s"] / b.medians()["steps_per_s"]
    report.add(row, "ratio ours / brax", [{"steps_per_s": ratio}])
    add_device_time(report, args, row, runs)
