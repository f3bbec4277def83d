"""`purejaxdrl pbt`: population-based training in one compiled program.

    purejaxdrl pbt --env cartpole --algo ppo --population 8 \
        --explore learning_rate=loguniform:1e-5:1e-3 --pbt.ready 4

Flags for config fields set the base every member starts from (defaults: the
preset's). Bad input ends with one line naming the value and the rule, exit 2.
"""

import math
import sys
import time
from collections.abc import Sequence
from typing import Any

from purejaxdrl.cli.args import (
    Parser,
    UsageError,
    add_algo_flag,
    add_compile_cache_flags,
    add_config_flags,
    bytes_flag,
    config_overrides,
    load_preset_or_help,
    pre_parse,
    reject_other_algorithms,
    resume_command,
    use_compile_cache,
)


def _add_pbt_flags(parser: Parser) -> None:
    """The ready step's flags: interval, quantile, resampling, replay."""
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
        help="chance a copied field is drawn afresh instead of multiplied by "
        "0.8 or 1.25 (default: 0.25)",
    )
    pbt.add_argument(
        "--pbt.keep-buffer",
        action="store_true",
        help="replay learners keep their own replay data when they copy",
    )


def _parser(defaults: Any, preset_name: str, note: str = "") -> Parser:
    from purejaxdrl.training.presets import preset_names

    parser = Parser(
        prog="purejaxdrl pbt",
        description=(
            "Population-based training: members start from draws of the "
            "explored space and train together in one compiled program; every "
            "--pbt.ready chunks the bottom quantile copies the learner state of "
            "the top quantile and perturbs the explored fields. Config-field "
            "flags set the base; "
            + (note or f"defaults shown are the {preset_name!r} preset's.")
        ),
        allow_abbrev=False,
    )
    parser.add_argument(
        "--env", help=f"preset ({', '.join(preset_names())}) or a .yaml path"
    )
    add_algo_flag(parser, defaults.algo)
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
    parser.add_argument("--target", type=float, metavar="RETURN")
    parser.add_argument(
        "--device-memory",
        metavar="SIZE",
        help="memory per device it may use, e.g. 2GB (default: an estimate)",
    )
    parser.add_argument(
        "--no-files", action="store_true", help="write no files (no checkpoints)"
    )
    parser.add_argument(
        "--resume",
        metavar="DIR",
        help="continue a stopped PBT run from its directory's checkpoints",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    add_compile_cache_flags(parser)
    add_config_flags(parser, defaults, defaults.algo)
    return parser


def pbt_command(argv: Sequence[str]) -> int:
    """`purejaxdrl pbt ...`; returns the exit status."""
    from purejaxdrl.config import ConfigError, apply_overrides
    from purejaxdrl.sweeps.pbt_operators import PBTConfig
    from purejaxdrl.sweeps.population import check_pbt_config, member_configs
    from purejaxdrl.sweeps.spec import parse_sample_arg
    from purejaxdrl.training.config import validate

    known = pre_parse(argv, "--env", "--algo", "--resume")
    if known.resume is not None:
        return _resume_command(argv)
    preset, note = load_preset_or_help(
        argv, known.env or "cartpole", known.algo or "ppo"
    )
    algo = preset.config.algo
    reject_other_algorithms(argv, algo)
    args = _parser(preset.config, preset.name, note).parse_args(argv)
    base = validate(
        apply_overrides(preset.config, config_overrides(args, preset.config, algo))
    )
    explore = {}
    for text in args.explore:
        try:
            name, spec = parse_sample_arg(text)
        except ConfigError as e:
            raise UsageError(str(e).replace("--sample", "--explore")) from None
        if name in explore:
            raise UsageError(f"--explore {name} is given twice; give it once.")
        explore[name] = spec
    settings = {
        "ready": getattr(args, "pbt.ready"),
        "quantile": getattr(args, "pbt.quantile"),
        "resample_probability": getattr(args, "pbt.resample_probability"),
        "keep_buffer": getattr(args, "pbt.keep_buffer"),
    }
    # Everything checked before JAX starts compiling.
    check_pbt_config(PBTConfig(**settings), args.population)
    member_configs(base, explore, args.population, args.search_seed)
    memory = None if args.device_memory is None else bytes_flag(args.device_memory)
    use_compile_cache(args)
    from purejaxdrl.sweeps.population import pbt

    start = time.perf_counter()
    result = pbt(
        base,
        explore=explore,
        population=args.population,
        search_seed=args.search_seed,
        target_return=args.target if args.target is not None else preset.target_return,
        write_files=not args.no_files,
        device_memory=memory,
        notify=None if args.quiet else lambda line: print(line, file=sys.stderr),
        **settings,
    )
    _print_summary(result, time.perf_counter() - start)
    return 0


def _resume_command(argv: Sequence[str]) -> int:
    """`purejaxdrl pbt --resume DIR`: continues a stopped PBT run."""

    def resume() -> Any:
        from purejaxdrl.sweeps.population import resume_pbt

        return resume_pbt

    return resume_command(argv, "pbt", "PBT run", resume, _print_summary)


def _print_summary(result: Any, wall: float) -> None:
    """The best member, its schedule and the run's figures, on stdout."""
    best = result.best
    final = result.final_return
    shown = "—" if math.isnan(final[best]) else f"{final[best]:.1f}"
    lines = [f"best member: {best}, final return {shown}; its schedule:"]
    previous = None
    for updates, values in result.schedule(best):
        if values != previous:  # only where its values changed
            text = ", ".join(f"{k}={v:.4g}" for k, v in values.items())
            lines.append(f"  from update {updates:>6}: {text}")
        previous = values
    steps = result.env_steps
    lines += [
        f"  members            {result.population}",
        f"  ready steps        {len(result.lineage) - 1}",
        f"  env steps          {steps:,} (all members)",
        f"  wall time          {wall:.1f} s",
        f"  compile time       {result.compile_seconds:.1f} s",
        f"  steps/s            {steps / max(result.train_seconds, 1e-9):,.0f} "
        "(compile excluded, all members together)",
    ]
    if result.run_dir is not None:
        lines.append(f"  pbt directory      {result.run_dir}")
    print("\n".join(lines))
