"""`purejaxdrl sweep`: a grid or random search x seeds, as one compiled program.

Eight seeds of each of three learning rates and two entropy costs:

    purejaxdrl sweep --env cartpole --algo ppo --seeds 8 \
        --grid learning_rate=1e-4,3e-4,1e-3 --grid entropy_cost=0,0.01
"""

import math
from collections.abc import Sequence
from typing import Any

from purejaxdrl.cli.args import Parser, UsageError
from purejaxdrl.cli.population import (
    PopulationCommand,
    figure_lines,
    population_command,
)
from purejaxdrl.observe.numbers import mean_std_text, return_text
from purejaxdrl.observe.plots import short_value


def _add_search_flags(parser: Parser) -> None:
    """The sweep's own flags: seeds, grid, random search."""
    parser.add_argument(
        "--seeds",
        default="1",
        metavar="N",
        help="seeds per setting: a count N (--seed, --seed+1, ...) or a list "
        "0,5,9, which names every seed (then --seed is refused) (default: 1)",
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
        "--samples", type=int, default=None, metavar="N", help="random-search draws"
    )
    parser.add_argument(
        "--search-seed",
        type=int,
        default=None,
        metavar="INT",
        help="seeds --sample's draws (default: 0)",
    )


def _seeds(text: str) -> int | list[int]:
    """A count, or a list (`0,5,9`; `5,` is the list of seed 5)."""
    # An empty item before the last (`1,,2`) is a value left out, not a gap.
    if any(not t.strip() for t in text.split(",")[:-1]):
        raise UsageError(
            f"--seeds {text!r} has an empty item (a seed left out?); name each "
            "seed once, e.g. --seeds 0,5,9 (seeds=[0, 5, 9] in Python)."
        )
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


def _once(flag: str, texts: list[str], parse: Any, fix: str) -> dict[str, Any]:
    """`flag`'s values `texts`, parsed into (field, value) pairs, as a dict.

    Raises:
      UsageError: naming a field given twice, as the user wrote it.

    """
    out: dict[str, Any] = {}
    written: dict[str, str] = {}
    for text in texts:
        name, value = parse(text)
        if name in out:
            raise UsageError(
                f"{flag} {name} is given twice ({written[name]} and {text}); {fix}."
            )
        out[name], written[name] = value, text
    return out


def _plan(args: Any, base: Any) -> dict[str, Any]:
    """The sweep's keyword arguments from its flags; the whole plan validated."""
    from purejaxdrl.sweeps.fields import SWEEP_FLAGS
    from purejaxdrl.sweeps.spec import make_plan, parse_grid_arg, parse_sample_arg

    grid = _once("--grid", args.grid, parse_grid_arg, "merge their values")
    sample = _once("--sample", args.sample, parse_sample_arg, "give it one range")
    seeds = _seeds(args.seeds)
    if isinstance(seeds, list) and args.seed is not None:
        # A list never reads base.seed: refused, not silently ignored.
        first = int(base.seed)
        counted = ", ".join(str(first + i) for i in range(min(len(seeds), 3)))
        raise UsageError(
            f"--seed {args.seed} with --seeds {args.seeds}: a list names every "
            "seed, so --seed is not used; drop --seed, or pass a count "
            f"(--seeds {len(seeds)} trains {counted}{', ...' * (len(seeds) > 3)})."
        )
    # None: a flag left out, which the refusals tell from an explicit 0.
    given = {"num_samples": args.samples, "search_seed": args.search_seed}
    plan = {"grid": grid, "sample": sample, "seeds": seeds, **given}
    make_plan(base, **plan, wording=SWEEP_FLAGS)  # its errors name the flags
    return {**plan, **{k: v or 0 for k, v in given.items()}}


def sweep_command(argv: Sequence[str]) -> int:
    """`purejaxdrl sweep ...`; returns the exit status."""
    return population_command(argv, SWEEP)


def _print_summary(result: Any, wall: float) -> None:
    """The table, the best setting and the sweep's figures, on stdout."""
    best = result.best
    values = ", ".join(  # as the table shows them
        f"{f.path}={short_value(best[f.path])}" for f in result.plan.fields
    )
    mean, std = best["mean_return"], best["std_return"]
    kept = best["seeds"] - best["diverged"]
    seeds = f"{kept} of {best['seeds']}" if best["diverged"] else f"{kept}"
    shown = return_text(mean) if math.isnan(std) else mean_std_text(mean, std)
    lines = [
        result.table(),
        "",
        f"best setting: {best['setting']} ({values or 'the base config'}): mean "
        f"return {shown} over {seeds} seed(s)"
        + (" (the others diverged)" if best["diverged"] else ""),
        f"  runs               {result.plan.num_runs}",
        *figure_lines(
            result, wall, "sweep", "runs", f" ({result.programs_compiled} program(s))"
        ),
    ]
    print("\n".join(lines))


SWEEP = PopulationCommand(
    name="sweep",
    what="sweep",
    description=(
        "Train every setting of a grid (or random search) with several seeds. "
        "Runs that differ only in dynamic fields (learning rate, gamma, clip, "
        "entropy cost, ...) and seeds train in one compiled program, split "
        "over devices; each value of a static field (num_envs, epochs, "
        "network sizes, ...) is a program of its own. Config-field flags set "
        "the base setting; "
    ),
    add_flags=_add_search_flags,
    target_help="score a run's final return must reach to count as reaching "
    "the target; its first crossing is reported too (default: the preset's)",
    memory_help="memory per device the sweep may use, e.g. 2GB (default: an "
    "estimate from the device); runs that do not fit train in batches",
    plan=_plan,
    module="purejaxdrl.sweeps.program",
    train="sweep",
    resume="resume_sweep",
    summary=_print_summary,
    resume_memory_help="memory per device the programs not started yet may "
    "use, e.g. 2GB (default: an estimate from the device); a started one keeps "
    "its recorded batches (its checkpoints hold them), and a budget they do not "
    "fit is refused",
    # A sweep writes every due save (none is replaced) and saves its runs'
    # files as each batch ends, not a checkpoint.
    field_help={
        "checkpoint.every": "a batch's state is saved after every N-th chunk "
        "and when SIGINT / SIGTERM stops the sweep (--resume continues it); "
        "0 saves only on such a stop. A finished batch writes its runs' files."
    },
)
