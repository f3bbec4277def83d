"""`purejaxdrl list`: the shipped presets, their algorithms and targets.

With `--env PRESET`, that preset's lines only; with `--envs`, the environment
ids `--env.id` takes instead.
"""

import difflib
from collections.abc import Sequence
from typing import Any

from purejaxdrl.cli.args import Parser, UsageError, tuple_items


def _unknown_preset(name: str, names: list[str]) -> str:
    """The refusal of `list --env NAME` naming no shipped preset: no path offered."""
    folded = {n.casefold(): n for n in names}
    close = difflib.get_close_matches(name.casefold(), list(folded), n=1)
    hint = f"did you mean {folded[close[0]]!r}? " if close else ""
    return (
        f"Unknown environment preset {name!r}: {hint}list shows the shipped "
        f"presets: {', '.join(names)}."
    )


def list_command(argv: Sequence[str]) -> int:
    """`purejaxdrl list`: one line per preset and algorithm section; exit status.

    Each line names the preset, its environment, the algorithm (the section
    `--algo` picks), the score that section must reach within how many steps,
    and the steps it trains where that budget differs; a target no run here
    has measured (`measured: false`) says so, and an evaluation target of a
    section that does not evaluate says how to check it.
    """
    from purejaxdrl.training.presets.load import (
        load_preset,
        preset_algorithms,
        preset_names,
        presets_dir,
    )

    parser = Parser(
        prog="purejaxdrl list",
        description="List presets: one line per algorithm section, with its "
        "target; or, with --envs, the environment ids --env.id takes.",
        allow_abbrev=False,  # `--env` is no abbreviation of --envs: a hint
    )
    parser.add_argument(
        "--envs",
        action="store_true",
        help="list environment ids instead: gymnax, brax/, playground/ (where "
        "installed), Craftax-* (installed or not) and those your --env.imports "
        "modules register (Gymnasium's as gymnasium:<id>), one a line",
    )
    parser.add_argument(
        "--env.imports",
        dest="imports",
        nargs="*",
        default=[],
        metavar="MODULE",
        help="with --envs: modules to import first (your own environments)",
    )
    parser.add_argument(
        "--env", metavar="PRESET", help="list only this preset's sections"
    )
    args = parser.parse_args(argv)
    if args.env is not None and not args.env.strip():
        raise UsageError(
            f"list --env {args.env!r}: an empty preset name; pass a preset's name "
            "(`purejaxdrl list` lists them all), or drop --env."
        )
    if args.envs:
        if args.env is not None:
            raise UsageError(
                f"list --envs lists environment ids, so --env {args.env} has no "
                "effect; drop one of them (`list --env PRESET` lists its sections)."
            )
        return _list_envs(tuple_items(args.imports))
    if args.env and args.env not in preset_names():
        if not args.env.endswith((".yaml", ".yml")):
            raise UsageError(_unknown_preset(args.env, preset_names()))
        load_preset(args.env)  # a bad file's one-line error first
        raise UsageError(
            f"list --env {args.env!r}: list shows shipped presets only; pass one's "
            "name (`purejaxdrl list` lists them) or read the file itself."
        )
    if args.env:  # where its settings and targets come from
        path = presets_dir() / f"{args.env}.yaml"
        print(f"# {path}: {load_preset(args.env).description}")
    rows = [("preset", "env", "algo", "needs", "target")]
    for name in [args.env] if args.env else preset_names():
        for algo in preset_algorithms(name):
            p = load_preset(name, algo)
            rows.append((name, p.config.env.id, algo, _needs(p.config.env.id)))
            rows[-1] += (_target(p),)
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for *columns, target in rows:
        cells = [c.ljust(w) for c, w in zip(columns, widths, strict=True)]
        print(*cells, target)
    return 0


def _needs(env_id: str) -> str:
    """The extra an environment id needs, `[envpool]`, and whether it is there."""
    from purejaxdrl.env.extras import missing_package, needed_extra

    extra = needed_extra(env_id)
    if extra is None:
        return "-"
    return f"[{extra}]" + ("(missing)" if missing_package(env_id) else "")


def _target(p: Any) -> str:
    """Preset `p`'s target and budget, as `list` shows them."""
    from purejaxdrl.training.presets.load import CHECK_EVALUATION, UNMEASURED

    # What a run trains: whole updates of num_envs x unroll_length
    # (`schedule.budget_note`), 499,712 of cartpole's 500,000.
    trained = p.config.num_updates * p.config.steps_per_update
    if p.target_return is None:
        return f"no target; trains {trained:,} steps"
    target = f"{p.target_of} return >= {p.target_return:g} in {p.target_steps:,} steps"
    if trained != p.target_steps:
        target += f" (trains {trained:,})"
    if not p.target_measured:
        target += f" {UNMEASURED}"
    if p.target_of == "evaluation" and not p.config.eval.episodes:
        target += f" (check it with {CHECK_EVALUATION})"
    return target


def _list_envs(imports: Sequence[str]) -> int:
    """Prints the device environment ids, then how host ids are spelt.

    After them, a comment names the Playground ids that cannot load here (no
    MuJoCo Menagerie found for their robot models). The Gymnasium ids the
    modules of `imports` register come between, as `gymnasium:<id>` (what
    `--env.id` takes): the registry is compared before and after they are
    imported.
    """
    from purejaxdrl.env import import_modules, registered

    before = _gymnasium_ids() if imports else set()
    import_modules(imports)
    for env_id in registered():
        print(env_id)
    if unloadable := _without_menagerie(registered()):
        print(
            "# these need MuJoCo Menagerie's robot models, not found here (see "
            "--env.option menagerie_path=DIR or $MUJOCO_MENAGERIE_PATH): "
            + ", ".join(unloadable)
        )
    if imports:  # Gymnasium's own ids are too many to list: the modules' only
        for env_id in sorted(_gymnasium_ids() - before):
            print(f"gymnasium:{env_id}")
    print(
        "# and host environments: envpool:<task> (envpool.list_all_envs()), "
        "gymnasium:<id> (gymnasium.registry)"
    )
    return 0


def _without_menagerie(ids: Sequence[str]) -> list[str]:
    """The Playground ids of `ids` that need MuJoCo Menagerie, if none is found."""
    from purejaxdrl.env.registry import PLAYGROUND_PREFIX

    playground = [i for i in ids if i.startswith(PLAYGROUND_PREFIX)]
    if not playground:  # the extra is not installed
        return []
    from purejaxdrl.env.menagerie import find_menagerie, needs_menagerie

    if find_menagerie() is not None:
        return []
    names = [i.removeprefix(PLAYGROUND_PREFIX) for i in playground]
    return [PLAYGROUND_PREFIX + n for n in names if needs_menagerie(n)]


def _gymnasium_ids() -> set[str]:
    """The ids in Gymnasium's registry now; none where it is not installed."""
    try:
        import gymnasium
    except ImportError:  # then no module can register one either
        return set()
    return set(gymnasium.registry)
