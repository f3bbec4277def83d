"""What `sweep` and `pbt` share: many members of one base config in one program.

Config flags set the base every member starts from (defaults: the preset's);
all input is checked before JAX starts (bad input: one line naming the value
and the rule, exit 2). `PopulationCommand` is what each command says of itself.
"""

import argparse
import functools
import importlib
import math
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

from purejaxdrl.cli.args import (
    Parser,
    UsageError,
    add_algo_flag,
    add_compile_cache_flags,
    add_config_flags,
    pre_parse,
    preset_run,
    use_compile_cache,
)
from purejaxdrl.cli.early_signals import EarlySignals
from purejaxdrl.cli.exits import EXIT_FAILURE
from purejaxdrl.cli.start import command_start
from purejaxdrl.config_docs import both_ways

_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_TARGET_EXAMPLE = both_ways("--target", "target_return", 475)
_SIZE_EXAMPLE = "e.g. --device-memory 2GB (device_memory=2 * 2**30 in Python, bytes)"


def bytes_flag(text: str) -> int:
    """`2GB`, `512MiB`, `1.5g` or a number of bytes -> bytes."""
    # Only what float() reads (one point at most, a digit): one check, one message.
    number = r"([0-9]+\.?[0-9]*|\.[0-9]+)"
    match = re.fullmatch(rf"\s*{number}\s*([kmgt]?)(i?b)?\s*", text.lower())
    if not match:
        raise UsageError(f"--device-memory {text!r} is not a size; {_SIZE_EXAMPLE}.")
    value = float(match.group(1)) * _UNITS[match.group(2)]
    if value < 1:
        raise UsageError(
            f"--device-memory {text} must be a positive size; {_SIZE_EXAMPLE}."
        )
    return int(value)


class PopulationCommand(NamedTuple):
    """A population command (`sweep`, `pbt`): what it says of itself.

    Attributes:
      name: `sweep` or `pbt`; `what`: a run of it in the help (`PBT run`).
      description: its help's, up to what it says of the defaults.
      add_flags: adds its own flags (after --env and --algo).
      target_help, memory_help: --target's (None: none), --device-memory's.
      plan: (args, base config) -> the keyword arguments its own flags give
        `train`, every value checked (raises UsageError or ConfigError).
      module: the library module, imported only once the arguments are
        checked (JAX starts with it); `train`, `resume`: its functions.
      summary: prints the result, given it and the wall time.
      field_help: {config field path: its help here}, where the command
        reads a field otherwise than a run does (PBT's `checkpoint.every`).
      resume_memory_help: --device-memory's on `--resume`, where it differs.

    """

    name: str
    what: str
    description: str
    add_flags: Callable[[Parser], None]
    target_help: str | None
    memory_help: str
    plan: Callable[[argparse.Namespace, Any], dict[str, Any]]
    module: str
    train: str
    resume: str
    summary: Callable[[Any, float], None]
    field_help: Mapping[str, str] = MappingProxyType({})
    resume_memory_help: str | None = None


def population_parser(
    command: PopulationCommand, defaults: Any, preset_name: str, note: str = ""
) -> Parser:
    """`command`'s parser: the shared flags around its own, showing `defaults`.

    The description names `preset_name` as their source, or says `note`.
    """
    from purejaxdrl.sweeps.inputs import NOT_HONOURED
    from purejaxdrl.training.presets.load import preset_names

    parser = Parser(
        prog=f"purejaxdrl {command.name}",
        description=command.description
        + (note or f"defaults shown are the {preset_name!r} preset's."),
        allow_abbrev=False,
    )
    parser.add_argument(
        "--env", help=f"preset ({', '.join(preset_names())}) or a .yaml path"
    )
    add_algo_flag(parser, defaults.algo)
    command.add_flags(parser)
    target = parser.add_argument(
        "--target", type=float, metavar="RETURN", help=command.target_help
    )
    # A value argparse refuses is told the example too (`Parser._number_fix`).
    target.example, target.python = 475, "target_return"
    parser.add_argument("--device-memory", metavar="SIZE", help=command.memory_help)
    parser.add_argument(
        "--no-files", action="store_true", help="write no files (no checkpoints)"
    )
    parser.add_argument(
        "--resume",
        metavar="DIR",
        help=f"continue a stopped {command.what} from its directory's checkpoints",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    add_compile_cache_flags(parser)
    # Flags sweeps and PBT do not honour parse (to be refused), unlisted.
    add_config_flags(parser, defaults, defaults.algo, unused=tuple(NOT_HONOURED))
    for action in parser._actions:
        if action.dest in command.field_help and action.help != argparse.SUPPRESS:
            default = action.help[action.help.rfind("(default: ") :]
            action.help = f"{command.field_help[action.dest]} {default}"
    return parser


def refuse_not_honoured(args: argparse.Namespace) -> None:
    """Raises UsageError for a config flag given that sweeps and PBT ignore."""
    from purejaxdrl.sweeps.inputs import NOT_HONOURED

    for path, value in vars(args).items():
        why = NOT_HONOURED.get(path) or NOT_HONOURED.get(path.split(".")[0])
        if why is not None and value is not None:
            shown = " ".join(value) if isinstance(value, list) else value
            raise UsageError(f"{path}={shown}: {why}.")


def population_command(argv: Sequence[str], command: PopulationCommand) -> int:
    """`purejaxdrl sweep|pbt ...`, fresh or `--resume DIR`; returns the exit status.

    SIGINT / SIGTERM are a request to stop from its first line (`EarlySignals`,
    then `_run`'s `SetupHold`, which the library's takes over): it stops
    before the first chunk, with one line.
    """
    with EarlySignals() as early:
        known = pre_parse(
            argv, "--env", "--env.id", "--algo", "--resume", command=command.name
        )
        if known.resume is not None:
            return _resume(argv, command, early)
        return _fresh(argv, command, known, early)


def _fresh(
    argv: Sequence[str],
    command: PopulationCommand,
    known: argparse.Namespace,
    early: EarlySignals,
) -> int:
    """`population_command` of a new sweep or PBT run."""
    parser = functools.partial(population_parser, command)
    env, algo, started = command_start(known)
    named = known.env is not None
    preset, args, base = preset_run(argv, env, algo, parser, refuse_not_honoured, named)
    if args.target is not None and not math.isfinite(args.target):
        # NaN would judge every run short of it, -inf every run past it.
        raise UsageError(
            f"--target {args.target} must be a finite return; e.g. {_TARGET_EXAMPLE}."
        )
    kwargs = command.plan(args, base)
    from purejaxdrl.sweeps.inputs import check_device_env, off_budget, unjudged

    check_device_env(base.env.id)  # a refusal is its one line alone
    target = args.target if args.target is not None else preset.target_return
    grid = {k.replace("-", "_") for k in kwargs.get("grid") or {}}
    why = unjudged(preset, base.env.id)
    if target is not None and not why:
        why = off_budget(preset, [base], swept=grid)
    note = None
    if args.target is None and why:
        note = f"{command.name}: {why}: not judged (--target sets one)"
        target = None

    return _run(
        args,
        command,
        command.train,
        early,
        base,
        target_return=target,
        write_files=not args.no_files,
        settings=started,
        note=note,
        **kwargs,
    )


def _resume(
    argv: Sequence[str], command: PopulationCommand, early: EarlySignals
) -> int:
    """`purejaxdrl COMMAND --resume DIR`: continues a stopped sweep or PBT run."""
    parser = Parser(
        prog=f"purejaxdrl {command.name}",  # the usage names --resume DIR
        description=f"Continue a {command.what} that was stopped, from its "
        "checkpoints.",
        allow_abbrev=False,
    )
    parser.help_command = f"purejaxdrl {command.name} --resume DIR --help"
    parser.add_argument(
        "--resume", metavar="DIR", required=True, help=f"the {command.what}'s folder"
    )
    memory_help = command.resume_memory_help or command.memory_help
    parser.add_argument("--device-memory", metavar="SIZE", help=memory_help)
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    add_compile_cache_flags(parser)
    args = parser.parse_args(argv)

    return _run(args, command, command.resume, early, args.resume)


def _run(
    args: argparse.Namespace,
    command: PopulationCommand,
    function: str,
    early: EarlySignals,
    *positional: Any,
    settings: str | None = None,
    note: str | None = None,
    **kwargs: Any,
) -> int:
    """Calls `function` of the command's module, timed, and prints its summary.

    `settings`: whose settings it trained, where the command chose the preset
    (`preset_choice.starting_note`), the summary's last line. `note`: a line
    printed before the run's first message (even with --quiet). A signal
    `early` holds, or one while JAX is imported, stops it here, untouched.
    """
    memory = None if args.device_memory is None else bytes_flag(args.device_memory)
    use_compile_cache(args)
    # Imported only now: JAX starts with it, after the cache is on.
    run = getattr(importlib.import_module(command.module), function)
    from purejaxdrl.sweeps.batch import SweepStopped
    from purejaxdrl.training.checkpoint import CheckpointError
    from purejaxdrl.training.log_writes import LogWriteError
    from purejaxdrl.training.setup_stop import SetupHold

    start = time.perf_counter()
    try:
        with SetupHold() as held:  # the library's own takes it over
            early.hand_over()
            held.stop_if_asked(None, resuming=function == command.resume)
            result = run(
                *positional,
                device_memory=memory,
                notify=_after_checks(note, not args.quiet),
                console=False,  # the command's own lines, or none with --quiet
                **kwargs,
            )
    except SweepStopped as e:  # saved: says how to continue, as a command here
        from purejaxdrl.parallel import resume_command

        print(
            f"purejaxdrl: {command.name} {e.reason}; continue with: "
            f"{resume_command(command.name, e.path, devices=e.devices)}",
            file=sys.stderr,
        )
        return 0
    except (CheckpointError, LogWriteError) as e:  # a full disk, say: as train's
        print(f"purejaxdrl: error: {' '.join(str(e).split())}", file=sys.stderr)
        return EXIT_FAILURE
    command.summary(result, time.perf_counter() - start)
    if settings:  # here, not first: a refusal stays one line
        print(f"  settings           {settings}")
    return 0


def _after_checks(note: str | None, loud: bool) -> Callable[[str], None] | None:
    """The run's `notify`: stderr lines if `loud`, `note` first (if any).

    The library says its first line only once every check of its own has
    passed (pjd.pbt lays the population out in memory first), so a refusal
    stays its one line, with no note before it.
    """

    def say(line: str) -> None:
        nonlocal note
        if note:  # once, before the first line
            print(note, file=sys.stderr)
            note = None
        if loud:
            print(line, file=sys.stderr)

    return say if loud or note else None


def figure_lines(
    result: Any, wall: float, command: str, members: str, compiled: str = ""
) -> list[str]:
    """A summary's closing lines: steps, times, speed and `command`'s directory.

    `result` is a SweepResult or PBTResult, `wall` the wall time in seconds,
    `members` what the steps count (`runs`), `compiled` a note on compiling.
    """
    steps = result.env_steps
    # A resumed run's env steps and training time are every session's, its
    # wall time this command's: each line says which, and steps/s is the
    # steps over the training time shown beside it, so the figures agree.
    lines = [
        f"  env steps          {steps:,} (all {members}, every session)",
        f"  wall time          {wall:.1f} s (this command)",
        f"  compile time       {result.compile_seconds:.1f} s{compiled}",
        f"  training time      {result.train_seconds:.1f} s (every session, "
        "compile excluded)",
        f"  steps/s            {steps / max(result.train_seconds, 1e-9):,.0f} "
        f"(env steps / training time, all {members} together)",
    ]
    if result.run_dir is not None:
        lines.append(f"  {command + ' directory':<19}{result.run_dir}")
    return lines
