"""The `purejaxdrl` command: `purejaxdrl train --env cartpole --algo ppo ...`.

Every field of TrainConfig is a flag (`--num-envs`, `--ppo.learning-rate`,
`--network.hidden-sizes 64 64`); defaults come from the chosen preset. Bad input
ends with one line on stderr naming the value, the rule and the fix, and exit
status 2.
"""

import argparse
import math
import pathlib
import sys
import time
from collections.abc import Sequence
from typing import Any, NoReturn

import yaml

from purejaxdrl._platform import DEFAULT_CACHE_DIR, enable_compilation_cache
from purejaxdrl.observe.loggers import LOGGERS

EXIT_USAGE = 2
EXIT_FAILURE = 1


class UsageError(Exception):
    """Bad command-line input; the message is the whole one-line error."""


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments"):
            message = (
                f"{message}; `purejaxdrl {self.prog.split()[-1]} --help` lists "
                "every option."
            )
        raise UsageError(message)


def _int_flag(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def _flag(path: str) -> str:
    return "--" + path.replace("_", "-")


def _describe(hint: Any) -> str:
    origin = getattr(hint, "__origin__", None)
    if origin is tuple:
        return "INT"
    if origin is dict:
        return "KEY=VALUE"
    name = getattr(hint, "__name__", "")
    return {"int": "INT", "str": "STR", "bool": "BOOL"}.get(name, "FLOAT")


def _train_parser(defaults: Any, preset_name: str) -> Parser:
    from purejaxdrl.training.presets import preset_names

    parser = Parser(
        prog="purejaxdrl train",
        description=(
            "Train an agent on one environment preset. Every config field below "
            f"can be overridden; defaults shown are the {preset_name!r} preset's."
        ),
        allow_abbrev=False,
    )
    parser.add_argument(
        "--env",
        help=f"preset name ({', '.join(preset_names())}) or a preset .yaml path "
        "(default: cartpole)",
    )
    parser.add_argument("--algo", help="algorithm: ppo, impala or a2c (default: ppo)")
    parser.add_argument(
        "--no-files", action="store_true", help="write no run directory"
    )
    parser.add_argument(
        "--resume",
        metavar="RUN_DIR",
        help="continue this run from its newest good checkpoint (its config; "
        "flags may change devices and checkpointing)",
    )
    parser.add_argument(
        "--override",
        action="store_true",
        help="with --resume: accept flags that change the run (e.g. the "
        "learning rate after a NaN)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    parser.add_argument(
        "--logger",
        action="append",
        default=[],
        choices=LOGGERS,
        help="also log to this sink, repeatable (metrics.jsonl is always "
        "written): tensorboard writes RUN_DIR/tensorboard/, wandb a W&B run "
        "(files in RUN_DIR/wandb/; WANDB_MODE=offline keeps them local)",
    )
    add_compile_cache_flags(parser)
    multi = parser.add_argument_group(
        "many hosts",
        "Run the same command on every host, each with its own --process-id; "
        "only process 0 prints and writes files.",
    )
    multi.add_argument(
        "--coordinator", metavar="HOST:PORT", help="process 0's address and a free port"
    )
    multi.add_argument("--num-processes", type=_int_flag, metavar="INT")
    multi.add_argument("--process-id", type=_int_flag, metavar="INT")
    multi.add_argument(
        "--distributed-auto",
        action="store_true",
        help="detect the cluster (SLURM, Cloud TPU, Open MPI) instead",
    )
    add_config_flags(parser, defaults)
    return parser


def add_compile_cache_flags(parser: argparse.ArgumentParser) -> None:
    """--compile-cache DIR and --no-compile-cache."""
    parser.add_argument(
        "--compile-cache",
        default=DEFAULT_CACHE_DIR,
        metavar="DIR",
        help="keep compiled programs here so reruns skip compilation "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--no-compile-cache", action="store_true", help="compile from scratch"
    )


def use_compile_cache(args: argparse.Namespace) -> None:
    """Turns the compilation cache on unless --no-compile-cache was given."""
    if not args.no_compile_cache:
        enable_compilation_cache(args.compile_cache)


def add_config_flags(parser: argparse.ArgumentParser, defaults: Any) -> None:
    """One flag per TrainConfig field (but `algo`), showing `defaults`' values."""
    from purejaxdrl.config import flat_fields

    group = parser.add_argument_group("config fields")
    for path, hint, value in flat_fields(defaults):
        if path in ("algo",):
            continue
        if path == "env.options":
            group.add_argument(
                "--env.option",
                dest="env.options",
                action="append",
                metavar="KEY=VALUE",
                help=f"environment option, repeatable (default: {value})",
            )
            continue
        shown = list(value) if isinstance(value, tuple) else value
        group.add_argument(
            _flag(path),
            dest=path,
            nargs="+" if getattr(hint, "__origin__", None) is tuple else None,
            metavar=_describe(hint),
            help=f"(default: {shown})",
        )


def config_overrides(namespace: argparse.Namespace, defaults: Any) -> dict[str, Any]:
    """Nested overrides from the flags the user actually gave."""
    from purejaxdrl.config import flat_fields

    out: dict[str, Any] = {}
    for path, _, default in flat_fields(defaults):
        value = getattr(namespace, path, None)
        if value is None:
            continue
        if path == "env.options":
            value = {**default, **_parse_options(value)}
        node = out
        *parents, leaf = path.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out


def _parse_options(items: Sequence[str]) -> dict[str, Any]:
    options = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise UsageError(
                f"--env.option {item!r} is not KEY=VALUE; e.g. --env.option "
                "backend=positional."
            )
        options[key] = yaml.safe_load(text)
    return options


def _train(argv: Sequence[str]) -> int:
    from purejaxdrl.config import apply_overrides
    from purejaxdrl.training.config import validate
    from purejaxdrl.training.presets import load_preset

    pre = Parser(add_help=False, allow_abbrev=False)
    pre.add_argument("--env")
    pre.add_argument("--algo")
    pre.add_argument("--resume")
    known, _ = pre.parse_known_args(argv)
    if known.resume is not None:
        from purejaxdrl.training.resume import load_run_config, resume_config

        if known.env is not None:
            raise UsageError(
                f"--env {known.env} with --resume: a resumed run keeps its own "
                "environment (see its config.yaml); drop --env."
            )
        defaults, preset = load_run_config(known.resume), None
        parser = _train_parser(defaults, f"{known.resume} run")
        args = parser.parse_args(argv)
        overrides = config_overrides(args, defaults)
        if args.algo is not None:
            overrides["algo"] = args.algo
        config, changes = resume_config(
            args.resume, overrides, allow_changes=args.override
        )
        if args.no_files:
            raise UsageError(
                "--no-files with --resume: a resumed run writes to its run "
                "directory; drop --no-files."
            )
    else:
        if known.env is None:
            known.env = "cartpole"
        preset = load_preset(known.env, known.algo or "ppo")
        parser = _train_parser(preset.config, preset.name)
        args = parser.parse_args(argv)
        if args.override:
            raise UsageError("--override only goes with --resume RUN_DIR.")
        if args.logger and args.no_files:
            raise UsageError(
                f"--logger {args.logger[0]} writes into the run directory; drop "
                "--no-files."
            )
        config = validate(
            apply_overrides(preset.config, config_overrides(args, preset.config))
        )
        changes = []

    import jax

    from purejaxdrl.parallel import (
        DistributedConfig,
        exit_on_peer_failure,
        initialize_distributed,
        is_main_process,
    )
    from purejaxdrl.training.train import train

    initialize_distributed(  # before anything starts a JAX backend
        DistributedConfig(
            coordinator=args.coordinator,
            num_processes=args.num_processes,
            process_id=args.process_id,
            auto=args.distributed_auto,
        )
    )
    use_compile_cache(args)

    from purejaxdrl.training.checkpoint import CheckpointError
    from purejaxdrl.training.faults import NonFiniteError

    for change in changes:
        print(f"purejaxdrl: resuming with {change}", file=sys.stderr)
    start = time.perf_counter()
    try:
        result = train(
            config,
            console=not args.quiet,
            write_files=not args.no_files,
            resume=args.resume,
            notify=lambda line: print(f"purejaxdrl: {line}", file=sys.stderr),
            log_to=args.logger,
        )
    except (NonFiniteError, CheckpointError) as e:
        print(f"purejaxdrl: error: {' '.join(str(e).split())}", file=sys.stderr)
        return EXIT_FAILURE
    except jax.errors.JaxRuntimeError as e:
        if jax.process_count() == 1:
            raise
        # A peer died or the network failed: one line, not a C++ error dump.
        exit_on_peer_failure(str(e).strip().splitlines()[0])
    if not is_main_process():
        return 0
    wall = time.perf_counter() - start
    ret = result.mean_return
    platform = jax.devices()[0].platform
    processes = (
        f" in {jax.process_count()} processes" if jax.process_count() > 1 else ""
    )
    lines = [
        f"done: {config.algo} on {config.env.id}, {result.num_devices} "
        f"{platform} device(s){processes}, seed {config.seed}",
        f"  final mean return  {'—' if math.isnan(ret) else f'{ret:.1f}'}",
    ]
    if not math.isnan(result.eval_return):
        lines.append(
            f"  eval return        {result.eval_return:.1f} (deterministic policy, "
            f"{config.eval.episodes} episodes)"
        )
    if result.stopped_by is not None:
        lines[0] = (
            f"stopped by {result.stopped_by} after update {result.updates:,} of "
            f"{config.num_updates:,}: {config.algo} on {config.env.id}"
        )
        if result.run_dir is not None:
            lines.append(
                f"  checkpoint saved; continue with: purejaxdrl train --resume "
                f"{result.run_dir}"
            )
    elif preset and preset.target_return is not None and config == preset.config:
        reached = not math.isnan(ret) and ret >= preset.target_return
        lines.append(
            f"  preset target      {preset.target_return} within "
            f"{preset.target_steps:,} steps: {'reached' if reached else 'NOT reached'}"
        )
    lines += [
        f"  env steps          {result.env_steps:,}",
        f"  wall time          {wall:.1f} s",
        f"  compile time       {result.compile_seconds:.1f} s",
        f"  steps/s            {result.steps_per_second:,.0f} (compile excluded), "
        f"{result.steps_per_second / result.num_devices:,.0f} per device",
    ]
    if result.run_dir is not None:
        lines.append(f"  run directory      {result.run_dir}")
    print("\n".join(lines))
    return 0


def _list(argv: Sequence[str]) -> int:
    from purejaxdrl.training.presets import load_preset, preset_names

    Parser(prog="purejaxdrl list", description="List presets.").parse_args(argv)
    for name in preset_names():
        p = load_preset(name)
        target = (
            f"return >= {p.target_return} in {p.target_steps:,} steps"
            if p.target_return is not None
            else ""
        )
        print(f"{name:<24} {p.config.env.id:<26} {target}")
    return 0


def _export(argv: Sequence[str]) -> int:
    parser = Parser(
        prog="purejaxdrl export",
        description="Write a run's trained policy (network description and "
        "parameters) to a folder; load it with purejaxdrl.load_policy(DIR).",
        allow_abbrev=False,
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    args = parser.parse_args(argv)
    from purejaxdrl.training.policy import export_policy

    out = export_policy(args.run_dir, args.out)
    print(
        f"exported the policy of {args.run_dir} to {out}; load it with "
        f"purejaxdrl.load_policy({str(out)!r})"
    )
    return 0


def _plot(argv: Sequence[str]) -> int:
    parser = Parser(
        prog="purejaxdrl plot",
        description="Draw learning curves (return vs env steps and vs training "
        "time) of run and sweep directories into one PNG. Runs that differ only "
        "in their seed, and a sweep's seeds, are drawn as a mean with a band.",
        allow_abbrev=False,
    )
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    parser.add_argument("--out", default="curves.png", help="(default: %(default)s)")
    parser.add_argument("--title", default="", help="figure title")
    parser.add_argument("--target", type=float, help="draw this score as a line")
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out)
    if not out.parent.is_dir():
        raise UsageError(
            f"--out {args.out}: folder {str(out.parent)!r} does not exist; create "
            "it or write elsewhere."
        )
    from purejaxdrl.observe.plots import load_curves, plot_curves

    n = plot_curves(
        load_curves(args.run_dirs), out, title=args.title, target=args.target
    )
    print(f"wrote {out}: {n} curve(s) from {len(args.run_dirs)} folder(s)")
    return 0


def _eval(argv: Sequence[str]) -> int:
    from purejaxdrl.cli.eval import eval_command

    return eval_command(argv)


def _sweep(argv: Sequence[str]) -> int:
    from purejaxdrl.cli.sweep import sweep_command

    return sweep_command(argv)


COMMANDS = {
    "train": _train,
    "sweep": _sweep,
    "plot": _plot,
    "eval": _eval,
    "list": _list,
    "export": _export,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `purejaxdrl` console script. Returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(
            "usage: purejaxdrl {train,sweep,eval,plot,list,export} ...\n\n"
            "  train   train an agent: purejaxdrl train --env cartpole --algo ppo\n"
            "          continue a run: purejaxdrl train --resume RUN_DIR\n"
            "  sweep   many runs in one program: purejaxdrl sweep --env cartpole "
            "--seeds 8 --grid learning_rate=1e-4,3e-4\n"
            "  eval    watch a policy: purejaxdrl eval RUN_DIR --render out.gif\n"
            "  plot    learning curves: purejaxdrl plot RUN_DIR ... --out a.png\n"
            "  list    list environment presets and their target scores\n"
            "  export  write a run's policy: purejaxdrl export RUN_DIR --out DIR\n\n"
            "`purejaxdrl train --help` lists every config field."
        )
        return 0 if argv else EXIT_USAGE
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        return _fail(
            f"unknown command {command!r}; use one of {', '.join(COMMANDS)} "
            "(see `purejaxdrl --help`)."
        )
    from purejaxdrl.config import ConfigError
    from purejaxdrl.env.registry import UnknownEnvironmentError

    try:
        return COMMANDS[command](rest)
    except (UsageError, ConfigError, UnknownEnvironmentError) as e:
        return _fail(str(e))
    except ValueError as e:  # factories validate eagerly with named values
        return _fail(str(e))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _fail(message: str) -> int:
    print(f"purejaxdrl: error: {' '.join(message.split())}", file=sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
