"""`purejaxdrl eval RUN_DIR --episodes 5 --render out.gif`: watch a trained policy.

Evaluates the newest good checkpoint's deterministic policy on fresh
environments and, with `--render`, draws one episode: a GIF for gymnax
environments, an HTML viewer for brax ones. Runs on host environments
(`envpool:`, `gymnasium:`) evaluate on fresh host environments and draw a GIF
(`observe/host_render.py`).
"""

import argparse
import pathlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from purejaxdrl.cli.args import Parser


def eval_command(argv: Sequence[str]) -> int:
    """`purejaxdrl eval ...`; returns the exit status."""
    parser = Parser(
        prog="purejaxdrl eval",
        description="Play a run's trained policy (the mode of its distribution) "
        "for a few episodes on fresh environments; optionally draw one.",
        allow_abbrev=False,
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory")
    parser.add_argument("--episodes", type=int, default=5, help="(default: 5)")
    parser.add_argument(
        "--render",
        metavar="FILE",
        help="draw the first episode: FILE.gif (gymnax, host environments) or "
        "FILE.html (brax)",
    )
    parser.add_argument("--seed", type=int, default=0, help="(default: 0)")
    parser.add_argument(
        "--max-steps",
        type=int,
        default=1000,
        help="cut episodes after this many steps (default: 1000)",
    )
    args = parser.parse_args(argv)
    from purejaxdrl.config import ConfigError

    if args.episodes < 1 or args.max_steps < 1:
        raise ConfigError(
            f"--episodes {args.episodes} and --max-steps {args.max_steps} must both "
            "be >= 1."
        )
    from purejaxdrl.env.host import is_host_env
    from purejaxdrl.training.resume import load_run_config

    if is_host_env(load_run_config(args.run_dir).env.id):
        return _eval_host(args)
    return _eval_device(args)


def summary_line(
    config: Any, step: int, returns: np.ndarray, lengths: np.ndarray
) -> str:
    """The evaluation's one line: returns and lengths over the episodes."""
    return (
        f"{config.algo} on {config.env.id}, update {step:,}: mean return "
        f"{np.mean(returns):.1f} ± {np.std(returns):.1f} over {len(returns)} "
        f"episode(s) (deterministic policy), lengths {int(lengths.min())}-"
        f"{int(lengths.max())}"
    )


def _eval_device(args: argparse.Namespace) -> int:
    import jax

    from purejaxdrl.observe.evaluation import make_evaluate
    from purejaxdrl.observe.progress import counting
    from purejaxdrl.observe.render import record_episode, render
    from purejaxdrl.training.policy import restore_run

    config, exp, restored = restore_run(args.run_dir, "evaluate")
    state = restored.state
    key = jax.random.key(args.seed)
    evaluate = make_evaluate(
        exp.env, exp.network, episodes=args.episodes, max_steps=args.max_steps
    )
    returns, lengths = jax.device_get(
        evaluate(state.agent.params, state.env_params, key)
    )
    print(summary_line(config, restored.step, returns, lengths))
    if args.render:
        episode = record_episode(
            exp.env,
            exp.network,
            state.agent.params,
            state.env_params,
            key,
            args.max_steps,
        )
        drawing = f"drawing {pathlib.Path(args.render).name}"
        with counting(drawing, episode.length, "frames") as update:
            out = render(exp.env, episode, args.render, progress=update)
        print(
            f"rendered one episode ({episode.length} steps, return "
            f"{episode.rewards.sum():.1f}) to {out}"
        )
    return 0


def _eval_host(args: argparse.Namespace) -> int:
    from purejaxdrl.observe.host_evaluation import evaluate_host
    from purejaxdrl.observe.host_render import (
        check_renderable,
        record_host_episode,
        write_gif,
    )
    from purejaxdrl.training.policy import restore_host_run

    run = restore_host_run(args.run_dir, "evaluate")
    env_id, options = run.config.env.id, dict(run.config.env.options)
    if args.render:  # before evaluating: a file type or env that cannot be drawn
        check_renderable(env_id, run.spec, args.render)
    result = evaluate_host(
        env_id,
        options,
        run.network,
        run.params,
        episodes=args.episodes,
        seed=args.seed,
        max_steps=args.max_steps,
    )
    print(summary_line(run.config, run.step, result.returns, result.lengths))
    if args.render:
        episode = record_host_episode(
            env_id,
            options,
            run.network,
            run.params,
            seed=args.seed,
            max_steps=args.max_steps,
        )
        out = write_gif(episode, args.render)
        print(
            f"rendered one episode ({episode.length} steps, return "
            f"{episode.episode_return:.1f}) to {out}"
        )
    return 0
