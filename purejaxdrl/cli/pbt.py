"""`purejaxdrl pbt`: population-based training in one compiled program.

Eight members, exploring the learning rate, ready every 4 chunks:

    purejaxdrl pbt --env cartpole --algo ppo --population 8 \
        --explore learning_rate=loguniform:1e-5:1e-3 --pbt.ready 4
"""

from collections.abc import Sequence
from typing import Any

import numpy as np

from purejaxdrl.cli.args import Parser, UsageError
from purejaxdrl.cli.population import (
    PopulationCommand,
    figure_lines,
    population_command,
)
from purejaxdrl.observe.numbers import return_text


def _factors(text: str) -> tuple[float, float]:
    """`0.8,1.2` -> (0.8, 1.2): --pbt.perturb's two factors (checked later)."""
    parts = text.split(",")
    try:
        low, high = (float(p) for p in parts)
    except ValueError:  # not two parts, or one is not a number
        raise UsageError(
            f"--pbt.perturb {text!r} is not two factors LOW,HIGH; e.g. "
            "--pbt.perturb 0.8,1.25 (perturb=(0.8, 1.25) in Python)."
        ) from None
    return low, high


def _add_pbt_flags(parser: Parser) -> None:
    """The ready step's flags: interval, quantile, resampling, factors, replay."""
    pbt = parser.add_argument_group("PBT")
    pbt.add_argument(
        "--pbt.ready",
        type=int,
        default=4,
        metavar="K",
        help="chunks (of --num-logs) between ready steps (default: 4)",
    )
    pbt.add_argument(
        "--pbt.quantile",
        type=float,
        default=0.25,
        metavar="Q",
        help="share of members that copy, and that are copied (default: 0.25)",
    )
    pbt.add_argument(
        "--pbt.resample-probability",
        type=float,
        default=0.25,
        metavar="P",
        help="chance a copied field is drawn afresh instead of moved by "
        "one of the --pbt.perturb factors (default: 0.25)",
    )
    pbt.add_argument(
        "--pbt.perturb",
        type=_factors,
        default=(0.8, 1.25),
        metavar="LOW,HIGH",
        help="the two factors a copied field is otherwise moved by, one at "
        "random: a loguniform field is multiplied by F, a uniform one moves "
        "(F-1)/max(F,1) of its space (default: 0.8,1.25; Jaderberg et al. "
        "2017 use 0.8,1.2 with --pbt.quantile 0.2)",
    )
    pbt.add_argument(
        "--pbt.keep-buffer",
        action="store_true",
        help="replay learners keep their own replay data when they copy",
    )


def _add_population_flags(parser: Parser) -> None:
    """PBT's own flags: the population, its explored space, the ready steps."""
    parser.add_argument(
        "--population", type=int, default=8, metavar="N", help="members (default: 8)"
    )
    parser.add_argument(
        "--explore",
        action="append",
        default=[],
        metavar="FIELD=KIND:LOW:HIGH",
        help="a dynamic field to explore and its space, repeatable; KIND is "
        "loguniform or uniform (as sweep's --sample)",
    )
    _add_pbt_flags(parser)
    parser.add_argument(
        "--search-seed",
        type=int,
        default=0,
        metavar="INT",
        help="seeds the draws and the ready steps' choices",
    )


def _plan(args: Any, base: Any) -> dict[str, Any]:
    """PBT's keyword arguments from its flags, checked with the members' configs."""
    from purejaxdrl.config import ConfigError
    from purejaxdrl.sweeps.pbt.inputs import (
        PBT_FLAGS,
        check_keep_buffer,
        check_pbt_config,
        member_configs,
    )
    from purejaxdrl.sweeps.pbt.operators import PBTConfig
    from purejaxdrl.sweeps.spec import parse_sample_arg

    explore = {}
    for text in args.explore:
        try:
            name, spec = parse_sample_arg(text, "--explore")
        except ConfigError as e:
            raise UsageError(str(e)) from None
        if name in explore:
            raise UsageError(f"--explore {name} is given twice; give it once.")
        explore[name] = spec
    settings = {
        "ready": getattr(args, "pbt.ready"),
        "quantile": getattr(args, "pbt.quantile"),
        "resample_probability": getattr(args, "pbt.resample_probability"),
        "perturb": getattr(args, "pbt.perturb"),
        "keep_buffer": getattr(args, "pbt.keep_buffer"),
    }
    config = PBTConfig(**settings)
    # Checked here, where their errors name the flags; `pbt` checks them again.
    check_pbt_config(config, args.population, PBT_FLAGS)
    check_keep_buffer(config, base, PBT_FLAGS)
    member_configs(base, explore, args.population, args.search_seed, PBT_FLAGS)
    return {
        "explore": explore,
        "population": args.population,
        "search_seed": args.search_seed,
        **settings,
    }


def pbt_command(argv: Sequence[str]) -> int:
    """`purejaxdrl pbt ...`; returns the exit status."""
    return population_command(argv, PBT)


def _print_summary(result: Any, wall: float) -> None:
    """The best member, its schedule and the run's figures, on stdout."""
    best = result.best
    final = result.final_return
    shown = return_text(final[best])
    lines = [f"best member: {best}, final return {shown}; its schedule:"]
    previous = None
    for updates, values in result.schedule(best):
        if values != previous:  # only where its values changed
            text = ", ".join(f"{k}={v:.4g}" for k, v in values.items())
            lines.append(f"  from update {updates:>6}: {text}")
        previous = values
    lines += [
        f"  members            {result.population}",
        f"  ready steps        {result.ready_steps_text}",
    ]
    if result.target_return is not None:
        reached = int(np.sum(np.nan_to_num(final, nan=-np.inf) >= result.target_return))
        lines.append(
            f"  reached target     {reached}/{result.population} members "
            f"(final return >= {result.target_return:g})"
        )
    lines += [
        *figure_lines(result, wall, "pbt", "members"),
    ]
    print("\n".join(lines))


PBT = PopulationCommand(
    name="pbt",
    what="PBT run",
    description=(
        "Population-based training: members start from draws of the "
        "explored space and train together in one compiled program; every "
        "--pbt.ready chunks the bottom quantile copies the learner state of "
        "the top quantile and perturbs the explored fields. Config-field "
        "flags set the base; "
    ),
    add_flags=_add_population_flags,
    target_help="score a member's final return must reach to count as reaching "
    "it (default: the preset's target)",
    memory_help="memory per device it may use, e.g. 2GB (default: an estimate)",
    plan=_plan,
    module="purejaxdrl.sweeps.pbt.population",
    train="pbt",
    resume="resume_pbt",
    summary=_print_summary,
    # PBT saves at ready steps (when the window of returns is empty), not chunks.
    field_help={
        "checkpoint.every": "the population is saved after every N-th ready "
        "step (every N x --pbt.ready chunks) and when SIGINT / SIGTERM stops "
        "it; 0 saves only then."
    },
)
