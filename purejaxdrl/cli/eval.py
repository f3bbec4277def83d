"""`purejaxdrl eval RUN_DIR --episodes 5 --render out.gif`: watch a trained policy.

Evaluates the newest good checkpoint's deterministic policy on fresh
environments and, with `--render`, draws one episode: a GIF for gymnax
environments, an HTML viewer for brax ones.
"""

from collections.abc import Sequence

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
        help="draw the first episode: FILE.gif (gymnax) or FILE.html (brax)",
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
    import jax

    from purejaxdrl.observe.evaluation import make_evaluate
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
    print(
        f"{config.algo} on {config.env.id}, update {restored.step:,}: mean return "
        f"{np.mean(returns):.1f} ± {np.std(returns):.1f} over {args.episodes} "
        f"episode(s) (deterministic policy), lengths {int(lengths.min())}-"
        f"{int(lengths.max())}"
    )
    if args.render:
        episode = record_episode(
            exp.env,
            exp.network,
            state.agent.params,
            state.env_params,
            key,
            args.max_steps,
        )
        out = render(exp.env, episode, args.render)
        print(
            f"rendered one episode ({episode.length} steps, return "
            f"{episode.rewards.sum():.1f}) to {out}"
        )
    return 0
