"""`purejaxdrl eval RUN_DIR --episodes 5 --render out.gif`: watch a trained policy.

Evaluates the newest good checkpoint's deterministic policy on fresh
environments and, with `--render`, draws one episode: a GIF for gymnax
environments, an HTML viewer for brax ones, a GIF or MP4 for MuJoCo
Playground ones (MuJoCo's renderer, off screen). Runs on host environments
(`envpool:`, `gymnasium:`) evaluate on fresh host environments and draw a GIF
(`observe/render.py`, `observe/players.py`).
"""

from collections.abc import Sequence
from typing import Any

import numpy as np

from purejaxdrl.cli.args import run_dir_parser


def eval_command(argv: Sequence[str]) -> int:
    """`purejaxdrl eval ...`; returns the exit status."""
    parser = run_dir_parser(
        "eval",
        "Play a run's trained policy (the mode of its distribution) for a few "
        "episodes on fresh environments; optionally draw one.",
    )
    parser.add_argument("--episodes", type=int, default=5, help="(default: 5)")
    parser.add_argument(
        "--render",
        metavar="FILE",
        help="draw the first episode: FILE.gif (gymnax, MuJoCo Playground, host "
        "environments), FILE.html (brax) or FILE.mp4 (MuJoCo Playground, with "
        "imageio-ffmpeg)",
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
    from purejaxdrl.training.policy import restore_run

    config, exp, restored = restore_run(args.run_dir, "evaluate")
    try:
        if args.render:  # before evaluating: a file or env that cannot be drawn
            exp.player.check_render(args.render)
        returns, lengths = exp.player.evaluate(
            restored.state,
            episodes=args.episodes,
            max_steps=args.max_steps,
            seed=args.seed,
        )
        print(summary_line(config, restored.step, returns, lengths))
        if args.render:
            drawn = exp.player.render(
                restored.state, args.render, max_steps=args.max_steps, seed=args.seed
            )
            print(
                f"rendered one episode ({drawn.length} steps, return "
                f"{drawn.episode_return:.1f}) to {drawn.path}"
            )
    finally:
        exp.runner.close()
    return 0


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
