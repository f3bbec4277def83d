"""`purejaxdrl list`: the shipped presets and the scores they must reach."""

from collections.abc import Sequence

from purejaxdrl.cli.args import Parser


def list_command(argv: Sequence[str]) -> int:
    """`purejaxdrl list`: every preset, its environment and target; exit status."""
    from purejaxdrl.training.presets import load_preset, preset_names

    Parser(prog="purejaxdrl list", description="List presets.").parse_args(argv)
    for name in preset_names():
        p = load_preset(name)
        target = (
            f"{p.target_of} return >= {p.target_return} in {p.target_steps:,} steps"
            if p.target_return is not None
            else ""
        )
        print(f"{name:<24} {p.config.env.id:<26} {target}")
    return 0
