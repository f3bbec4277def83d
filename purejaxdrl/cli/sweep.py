"""`purejaxdrl sweep`: a grid or random search x seeds, as one compiled program.

    purejaxdrl sweep --env cartpole --algo ppo --seeds 8 \
        --grid learning_rate=1e-4,3e-4,1e-3 --grid entropy_cost=0,0.01

Flags for config fields set the base every setting starts from (defaults: the
preset's). Bad input ends with one line naming the field and the rule, exit 2.
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


def _parser(defaults: Any, preset_name: str, note: str = "") -> Parser:
    from purejaxdrl.training.presets import preset_names

    parser = Parser(
        prog="purejaxdrl sweep",
        description=(
            "Train every setting of a grid (or random search) with several seeds. "
            "Runs that differ only in dynamic fields (learning rate, gamma, clip, "
            "entropy cost, ...) and seeds train in one compiled program, split "
            "over devices; each value of a static field (num_envs, epochs, "
            "network sizes, ...) is a program of its own. Config-field flags set "
            "the base setting; "
            + (note or f"defaults shown are the {preset_name!r} preset's.")
        ),
        allow_abbrev=False,
    )
    parser.add_argument(
        "--env", help=f"preset ({', '.join(preset_names())}) or a .yaml path"
    )
    add_algo_flag(parser, defaults.algo)
    parser.add_argument(
        "--seeds",
        default="1",
        metavar="N",
        help="seeds per setting: a count N (--seed, --seed+1, ...) or a list "
        "0,5,9 (default: 1)",
    )
    parser.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="FIELD=V1,V2",
        help="values of a field, repeatable; the product is trained. The "
        "algorithm's fields may be named bare (learning_rate); list-valued "
        "fields take a YAML list: network.hidden_sizes=[[64,64],[256,256]]",
    )
    parser.add_argument(
        "--sample",
        action="append",
        default=[],
        metavar="FIELD=KIND:LOW:HIGH",
        help="random search over a dynamic field, repeatable; KIND is "
        "loguniform or uniform (with --samples)",
    )
    parser.add_argument(
        "--samples", type=int, default=0, metavar="N", help="random-search draws"
    )
    parser.add_argument(
        "--search-seed", type=int, default=0, metavar="INT", help="seeds the draws"
    )
    parser.add_argument(
        "--target",
        type=float,
        metavar="RETURN",
        help="score a run's final return must reach to count as reaching the "
        "target; its first crossing is reported too (default: the preset's)",
    )
    parser.add_argument(
        "--device-memory",
        metavar="SIZE",
        help="memory per device the sweep may use, e.g. 2GB (default: an "
        "estimate from the device); runs that do not fit train in batches",
    )
    parser.add_argument(
        "--no-files", action="store_true", help="write no files (no checkpoints)"
    )
    parser.add_argument(
        "--resume",
        metavar="DIR",
        help="continue a stopped sweep from its directory's checkpoints",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    add_compile_cache_flags(parser)
    add_config_flags(parser, defaults, defaults.algo)
    return parser


def _seeds(text: str) -> int | list[int]:
    items = [t for t in text.replace(",", " ").split() if t]
    try:
        values = [int(t) for t in items]
    except ValueError:
        raise UsageError(
            f"--seeds {text!r} is not a count or a list of integers; e.g. --seeds 8 "
            "or --seeds 0,5,9."
        ) from None
    if not values:
        raise UsageError("--seeds is empty; e.g. --seeds 8.")
    return values[0] if len(values) == 1 and "," not in text else values


def sweep_command(argv: Sequence[str]) -> int:
    """`purejaxdrl sweep ...`; returns the exit status."""
    from purejaxdrl.config import apply_overrides
    from purejaxdrl.sweeps.spec import parse_grid_arg, parse_sample_arg
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
    overrides = config_overrides(args, preset.config, algo)
    base = validate(apply_overrides(preset.config, overrides))
    grid = dict(parse_grid_arg(text) for text in args.grid)
    if len(grid) != len(args.grid):
        raise UsageError("a --grid field is given twice; merge its values.")
    sample = dict(parse_sample_arg(text) for text in args.sample)
    memory = None if args.device_memory is None else bytes_flag(args.device_memory)
    target = args.target if args.target is not None else preset.target_return
    # Validate the whole plan before starting JAX.
    from purejaxdrl.sweeps.spec import make_plan

    seeds = _seeds(args.seeds)
    plan_args = {"grid": grid, "sample": sample, "num_samples": args.samples}
    make_plan(base, seeds=seeds, search_seed=args.search_seed, **plan_args)

    use_compile_cache(args)
    from purejaxdrl.sweeps.program import sweep

    start = time.perf_counter()
    result = sweep(
        base,
        seeds=seeds,
        search_seed=args.search_seed,
        target_return=target,
        write_files=not args.no_files,
        device_memory=memory,
        notify=None if args.quiet else lambda line: print(line, file=sys.stderr),
        **plan_args,
    )
    _print_summary(result, time.perf_counter() - start)
    return 0


def _resume_command(argv: Sequence[str]) -> int:
    """`purejaxdrl sweep --resume DIR`: continues a stopped sweep."""

    def resume() -> Any:
        from purejaxdrl.sweeps.program import resume_sweep

        return resume_sweep

    return resume_command(argv, "sweep", "sweep", resume, _print_summary)


def _print_summary(result: Any, wall: float) -> None:
    """The table, the best setting and the sweep's figures, on stdout."""
    best = result.best
    values = ", ".join(
        f"{k}={v}" for k, v in best.items() if k in {f.path for f in result.plan.fields}
    )
    mean = best["mean_return"]
    steps = result.env_steps
    lines = [
        result.table(),
        "",
        f"best setting: {best['setting']} ({values or 'the base config'}): mean "
        f"return {'—' if math.isnan(mean) else f'{mean:.1f}'} ± "
        f"{best['std_return']:.1f} over {best['seeds']} seed(s)",
        f"  runs               {result.plan.num_runs}",
        f"  env steps          {steps:,} (all runs)",
        f"  wall time          {wall:.1f} s",
        f"  compile time       {result.compile_seconds:.1f} s "
        f"({result.programs_compiled} program(s))",
        f"  steps/s            {steps / max(result.train_seconds, 1e-9):,.0f} "
        "(compile excluded, all runs together)",
    ]
    if result.run_dir is not None:
        lines.append(f"  sweep directory    {result.run_dir}")
    print("\n".join(lines))
