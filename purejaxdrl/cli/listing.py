"""`purejaxdrl list`: the shipped presets, their algorithms and targets."""

from collections.abc import Sequence

from purejaxdrl.cli.args import Parser


def list_command(argv: Sequence[str]) -> int:
    """`purejaxdrl list`: one line per preset and algorithm section; exit status.

    Each line names the preset, its environment, the algorithm (the section
    `--algo` picks) and the score that section must reach.
    """
    from purejaxdrl.training.presets import (
        load_preset,
        preset_algorithms,
        preset_names,
    )

    Parser(
        prog="purejaxdrl list",
        description="List presets: one line per algorithm section, with its target.",
    ).parse_args(argv)
    for name in preset_names():
        for algo in preset_algorithms(name):
            p = load_preset(name, algo)
            target = (
                f"{p.target_of} return >= {p.target_return:g} in "
                f"{p.target_steps:,} steps"
                if p.target_return is not None
                else "no target"
            )
            print(f"{name:<24} {p.config.env.id:<28} {algo:<7} {target}")
    return 0
