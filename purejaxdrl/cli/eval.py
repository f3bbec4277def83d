"""`purejaxdrl eval RUN_DIR --episodes 5 --render out.gif`: watch a trained policy.

Evaluates the newest good checkpoint's (or `--checkpoint best|N`'s)
deterministic policy on fresh environments and, with `--render`, draws one
episode: a GIF for the gymnax environments gymnax draws (`observe/gif.py`),
an HTML viewer for brax ones, a GIF or MP4 for MuJoCo Playground ones
(MuJoCo's renderer, off screen). Runs on
host environments (`envpool:`, `gymnasium:`) evaluate on fresh host
environments and draw a GIF (`observe/render.py`, `observe/players.py`). An
exported policy folder (a sweep's or PBT's best `policy/` too) plays on its
environment made again (`training/policy/evaluate.py`).
"""

import json
import pathlib
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from purejaxdrl.cli.host_errors import host_error
from purejaxdrl.cli.parser import run_dir_parser
from purejaxdrl.cli.plot import check_out_folder
from purejaxdrl.env.registry import PLAYGROUND_PREFIX
from purejaxdrl.observe.numbers import mean_std_text, return_text
from purejaxdrl.observe.play import EPISODES, RENDER_STEPS, SEED
from purejaxdrl.observe.play_args import check_play_args
from purejaxdrl.training.policy.folder import SPEC_FILE

# The defaults are a Player's (`observe.play`): RENDER_STEPS, the steps drawn
# at most: a drawing holds a frame per step, and a long one is a large file.
EPISODES_HELP = (
    "how many episodes to play, one per fresh environment; their mean return "
    f"is reported (default: {EPISODES})"
)
CHECKPOINT_HELP = (
    "which checkpoint of a run directory to {verb}: latest (the newest that "
    "verifies), best (the one --checkpoint.keep-best kept: the best training "
    "return of those saved) or N (the one saved after update N) (default: "
    "latest)"
)
SEED_HELP = (
    "seeds the fresh environments (start states, any randomness in their "
    f"steps); the same seed plays the same episodes (default: {SEED})"
)


def eval_command(argv: Sequence[str]) -> int:
    """`purejaxdrl eval ...`; returns the exit status."""
    parser = run_dir_parser(
        "eval",
        "Play a run's trained policy (the mode of its distribution, or samples "
        "of it with --sample) for a few episodes on fresh environments, "
        "optionally with other environment options; optionally draw one.",
        "a run directory (its newest good checkpoint), or an exported policy "
        "folder (`purejaxdrl export`, a sweep's or PBT's policy/)",
    )
    episodes = parser.add_argument(
        "--episodes", type=int, default=EPISODES, help=EPISODES_HELP
    )
    episodes.example, episodes.python = 10, "episodes"  # for a non-number
    parser.add_argument(
        "--render",
        metavar="FILE",
        help="draw the first episode: FILE.gif (the gymnax environments gymnax "
        "draws: classic control, Catch, MinAtar, Pong, PointRobot, MetaMaze, "
        "FourRooms; MuJoCo Playground; host environments), FILE.html (brax) "
        "or FILE.mp4 (MuJoCo Playground, with imageio-ffmpeg)",
    )
    seed = parser.add_argument("--seed", type=int, default=SEED, help=SEED_HELP)
    seed.example, seed.python = 1, "seed"
    parser.add_argument(
        "--checkpoint",
        default="latest",
        metavar="latest|best|N",
        help=CHECKPOINT_HELP.format(verb="play"),
    )
    max_steps = parser.add_argument(
        "--max-steps",
        type=int,
        default=None,
        help="cut episodes after this many steps (default: the run's "
        "eval.max_steps for the returns, 100,000 for an exported policy's; "
        f"{RENDER_STEPS:,} for the drawing)",
    )
    max_steps.example, max_steps.python = 1000, "max_steps"
    _add_play_flags(parser)
    args = parser.parse_args(argv)
    _check_args(args)
    from purejaxdrl.runners.host_waits import HostEnvError

    try:
        return _play(args)
    except HostEnvError as e:  # a user's host env raised as it was made
        status, message = host_error(e)  # its traceback first, then the line
        print(f"purejaxdrl: error: {' '.join(message.split())}", file=sys.stderr)
        return status


def _add_play_flags(parser: Any) -> None:
    """--env.option and --sample: the environment changed, the policy sampled."""
    parser.add_argument(
        "--env.option",
        dest="env_options",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change an option of the environment, e.g. episode_length=2000 "
        "(brax) or max_steps_in_episode=1000 (gymnax); repeatable (default: "
        "the options it was trained with)",
    )
    parser.add_argument(
        "--sample",
        action="store_true",
        help="play samples of the policy, as it acted in training (ε-greedy "
        "for a Q-learner, with the ε it ended with), instead of its mode; "
        "--seed seeds them too",
    )


def _play(args: Any) -> int:
    """Plays the policy `args` name (and draws it); returns the exit status."""
    from purejaxdrl.training.policy.evaluate import (
        is_policy_folder,
        policy_player,
        run_policy,
    )
    from purejaxdrl.training.restored import restore_run

    options, sample_seed = args.env_options, args.seed if args.sample else None
    if is_policy_folder(args.run_dir):  # exported, or a sweep's best
        _check_one_policy(args)
        config, player, state, step = policy_player(args.run_dir, options, sample_seed)
        close, cap = _nothing_open, "the default max_steps"  # no eval config
    elif options or args.sample:  # played as its export is: anywhere, sampled
        config, policy = run_policy(args.run_dir, args.checkpoint)
        _, player, state, step = policy_player(policy, options, sample_seed)
        close, cap = _nothing_open, "the run's eval.max_steps"
    else:
        config, exp, restored = restore_run(args.run_dir, "evaluate", args.checkpoint)
        player, state, step, close = (
            exp.player,
            restored.state,
            restored.step,
            exp.runner.close,
        )
        cap = "the run's eval.max_steps"
    # The player caps at the run's eval.max_steps itself (`args.max_steps`
    # None); the figure is for the line that says how many episodes it cut.
    max_steps = config.eval.max_steps if args.max_steps is None else args.max_steps
    if args.max_steps is not None:  # where the cap came from, said if it cut
        cap = "--max-steps"
    try:
        if args.render:  # before evaluating: a file or env that cannot be drawn
            player.check_render(args.render)
        result = _evaluate(player, state, args)
        _print_result(config, step, result, max_steps, cap, args)
        if args.render:
            _render(player, state, args)
    finally:
        close()
    return 0


def _evaluate(player: Any, state: Any, args: Any) -> Any:
    """`player.evaluate`, with running out of memory said in one line.

    Every episode plays at once, one environment each: memory grows with
    --episodes, and a count far beyond the device ends in XLA's
    RESOURCE_EXHAUSTED (or Python's MemoryError on the host) after a long
    traceback, which names neither the flag nor the fix.
    """
    import jax

    from purejaxdrl.config import ConfigError
    from purejaxdrl.training.memory import out_of_memory

    try:
        return player.evaluate(
            state, episodes=args.episodes, max_steps=args.max_steps, seed=args.seed
        )
    except (jax.errors.JaxRuntimeError, MemoryError) as e:
        said = out_of_memory(e)
        if said is None:
            raise
        fewer = max(1, args.episodes // 10)
        raise ConfigError(
            f"--episodes {args.episodes}: out of memory ({said})"
            "; eval plays every episode at once, one environment each; pass "
            f"fewer, e.g. --episodes {fewer}, and other --seed values for more."
        ) from None


def _render(player: Any, state: Any, args: Any) -> None:
    """`player.render` of the first episode just scored, and its line.

    A file that cannot be written after all (a full disk, a folder that
    refuses writes though it looked writable) is said in one line.
    """
    from purejaxdrl.config import ConfigError

    try:
        drawn = player.render(
            state,
            args.render,
            max_steps=args.max_steps,  # None: the player's RENDER_STEPS
            seed=args.seed,
            episodes=args.episodes,  # the first of those just scored
        )
    except OSError as e:
        said = " ".join(str(e).split())[:160] or type(e).__name__
        raise ConfigError(
            f"--render {args.render}: could not write it ({said}); draw elsewhere."
        ) from None
    print(
        f"rendered one episode ({drawn.length} steps, return "
        f"{return_text(drawn.episode_return)}) to {drawn.path}"
    )


def _check_args(args: Any) -> None:
    """Refuses counts, seeds and files eval cannot use, in one line each."""
    from purejaxdrl.cli.args import parse_options
    from purejaxdrl.config import ConfigError
    from purejaxdrl.env.option_spelling import PLAY, spelled_as
    from purejaxdrl.training.restored import checkpoint_choice

    # evaluate_policy's checks, in flags: one rule for both.
    check_play_args(args.episodes, args.max_steps, args.seed, flags=True)
    with spelled_as(PLAY):  # evaluate_policy's env_options
        args.env_options = parse_options(args.env_options)
    args.checkpoint = checkpoint_choice(args.checkpoint)
    if args.render:  # before a minute of playing and drawing
        out = pathlib.Path(args.render)
        if out.is_dir():
            raise ConfigError(
                f"--render {args.render}: {args.render!r} is a folder; name a "
                f"file, e.g. {out / 'episode.gif'}."
            )
        check_out_folder("--render", args.render, out)
        if _saved_env_id(args.run_dir).startswith(PLAYGROUND_PREFIX):
            from purejaxdrl.observe.mujoco_render import check_video

            # An MP4 without imageio-ffmpeg: known from the name and the run's
            # env. Other envs draw no MP4 at all: `check_render` says so first.
            check_video(out)


def _saved_env_id(path: str | pathlib.Path) -> str:
    """The env id a run's config.yaml (a policy's policy.json) names; "" if none."""
    import yaml

    path = pathlib.Path(path)
    try:
        if (path / "config.yaml").is_file():
            saved = yaml.safe_load((path / "config.yaml").read_text())
            return str(saved["env"]["id"])
        return str(json.loads((path / SPEC_FILE).read_text())["env_id"])
    except (OSError, ValueError, LookupError, TypeError, yaml.YAMLError):
        return ""  # restoring it says what is wrong with the folder


def _check_one_policy(args: Any) -> None:
    """Refuses --checkpoint other than latest for a policy folder: it holds one."""
    from purejaxdrl.config import ConfigError

    if args.checkpoint != "latest":
        raise ConfigError(
            f"--checkpoint {args.checkpoint}: {str(args.run_dir)!r} is an "
            "exported policy, which holds one update; --checkpoint chooses "
            "among a run directory's checkpoints: pass the run's own folder."
        )


def _print_result(
    config: Any, step: int, result: Any, max_steps: int, cap: str, args: Any
) -> None:
    """Prints an evaluation's summary line, and its metrics' line if any.

    The line names the options `--env.option` changed: a score on a longer
    episode read later is not the run's own.
    """
    returns, lengths, ended = result.returns, result.lengths, result.ended
    policy = "sampled policy" if args.sample else "deterministic policy"
    if args.env_options:
        changed = ", ".join(f"{k}={v!r}" for k, v in args.env_options.items())
        policy += f"; with --env.option {changed}"
    print(summary_line(config, step, returns, lengths, max_steps, ended, cap, policy))
    if result.metrics:
        print(metrics_line(result.metrics))


def _nothing_open() -> None:
    """What closing a policy folder's player takes: nothing (it has no runner)."""


def metrics_line(metrics: dict[str, np.ndarray]) -> str:
    """The environment's own metrics: each one's episode sum, mean over episodes."""
    means = ", ".join(f"{k} {float(np.mean(v)):.4g}" for k, v in metrics.items())
    return f"  environment's metrics, episode sums (mean over episodes): {means}"


def summary_line(
    config: Any,
    step: int,
    returns: np.ndarray,
    lengths: np.ndarray,
    max_steps: int | None = None,
    ended: np.ndarray | None = None,
    cap: str = "--max-steps",
    policy: str = "deterministic policy",
) -> str:
    """The evaluation's one line: returns and lengths over the episodes.

    Episodes cut short at `max_steps` have partial returns: the line says how
    many, and where the cap came from (`cap`: "--max-steps", or e.g. "the
    run's eval.max_steps" when the flag was not given). `ended` (bool [E])
    says which episodes ended by themselves, on the capped step too; without
    it, every episode that ran `max_steps` counts. `policy` says which was
    played: "deterministic policy" (its mode), or "sampled policy".
    """
    line = (
        f"{config.algo} on {config.env.id}, update {step:,}: mean return "
        f"{mean_std_text(np.mean(returns), np.std(returns))} (std) over {len(returns)} "
        f"episode(s) ({policy}), lengths {int(lengths.min())}-"
        f"{int(lengths.max())}"
    )
    if ended is not None:
        cut = int(np.sum(~np.asarray(ended, bool)))
    else:
        cut = int(np.sum(lengths >= max_steps)) if max_steps else 0
    if cut:
        fix = "raise it" if cap == "--max-steps" else "pass a larger --max-steps"
        line += (
            f"; {cut} cut at {cap} {max_steps:,} (their returns partial: "
            f"{fix} for whole episodes)"
        )
    return line
