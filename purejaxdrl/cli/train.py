"""`purejaxdrl train`: one run from a preset (or a resumed run) and flags."""

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
    config_overrides,
    pre_parse,
    preset_run,
    reject_other_algorithms,
    use_compile_cache,
)
from purejaxdrl.cli.early_signals import EarlySignals
from purejaxdrl.cli.exits import EXIT_FAILURE
from purejaxdrl.cli.host_errors import host_error
from purejaxdrl.cli.process_flags import add_process_flags
from purejaxdrl.cli.start import command_start
from purejaxdrl.cli.target import run_preset, target_line
from purejaxdrl.env.host import is_host_env
from purejaxdrl.observe.loggers import LOGGERS, logger_flags
from purejaxdrl.observe.numbers import return_text
from purejaxdrl.parallel import resume_command


def parser(
    defaults: Any, source: str, note: str = "", *, resumed: bool = False
) -> Parser:
    """The train parser, its config flags those of `defaults.algo`.

    Args:
      defaults: the config whose values the flags show (a preset's or a run's).
      source: where the defaults come from, for the description: a preset's
        name, or with `resumed` the run directory being resumed.
      note: what the description says of the defaults instead.
      resumed: the parser of `--resume RUN_DIR`, whose flags change a run's
        saved config (most of them only with --override).

    """
    from purejaxdrl.field_roles import FREE_ON_RESUME
    from purejaxdrl.training.presets.load import preset_names

    free = ", ".join(f"{f}*" if f.endswith(".") else f for f in FREE_ON_RESUME)
    if resumed:
        description = (
            f"Continue the run in {source}. Defaults shown are its saved config; "
            f"{free} may change, other fields only with --override; the "
            "environment and algorithm never."
        )
    else:
        # A note (no section for the algorithm) says itself what can run.
        description = "Train an agent on one environment preset" + (
            f"; {note}"
            if note
            else ". Every config field below can be overridden; defaults shown "
            f"are the {source!r} preset's."
        )
    parser = Parser(
        prog="purejaxdrl train", description=description, allow_abbrev=False
    )
    parser.add_argument(
        "--env",
        help=f"preset name ({', '.join(preset_names())}) or a preset .yaml path "
        "(default: cartpole)",
    )
    add_algo_flag(parser, defaults.algo)
    parser.add_argument(
        "--no-files", action="store_true", help="write no run directory"
    )
    parser.add_argument(
        "--resume",
        metavar="RUN_DIR",
        help="continue this run from its newest good checkpoint with its saved "
        f"config; flags may change {free}, other fields only with --override",
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
    add_process_flags(parser)
    add_config_flags(parser, defaults, defaults.algo)
    return parser


def _resumed(argv: Sequence[str], run_dir: str) -> tuple[Any, Any]:
    """(args, config) of `--resume RUN_DIR`.

    The config is the run's saved one with the flags' changes, which are
    refused unless they are safe or --override is given (`train` says them
    once it accepts the resume).
    """
    from purejaxdrl.training.resume import load_run_config, resume_config

    defaults = load_run_config(run_dir)
    reject_other_algorithms(argv, defaults.algo, resumed=True)
    args = parser(defaults, run_dir, resumed=True).parse_args(argv)
    overrides = config_overrides(args, defaults, defaults.algo)
    if args.algo is not None:
        overrides["algo"] = args.algo
    config, _ = resume_config(
        args.resume, overrides, allow_changes=args.override, resuming=True
    )
    if args.no_files:
        raise UsageError(
            "--no-files with --resume: a resumed run writes to its run "
            "directory; drop --no-files."
        )
    return args, config


def _fresh(
    argv: Sequence[str], env: str, algo: str, named: bool
) -> tuple[Any, Any, Any]:
    """(args, config, preset) of a new run of preset `env` (`named`: by --env)."""
    preset, args, config = preset_run(argv, env, algo, parser, named=named)
    if args.override:
        raise UsageError("--override only goes with --resume RUN_DIR.")
    if args.logger and args.no_files:
        raise UsageError(
            f"--logger {args.logger[0]} writes into the run directory; drop --no-files."
        )
    return args, config, preset


def _join_processes(argv: Sequence[str], early: EarlySignals) -> bool:
    """Joins the other processes (when asked) before JAX starts a backend.

    First of all: the user's modules of `--env.imports`, imported to read the
    preset, may touch JAX (a module-level `jnp` constant starts the backend).
    While a process joins, `early` gives the signals back to Python (a hung
    join ends on SIGTERM, as before). Returns whether it joined.
    """
    pre = Parser(prog="purejaxdrl train", add_help=False, allow_abbrev=False)
    add_process_flags(pre)  # the same flags the full parser reads later
    k, _ = pre.parse_known_args(argv)
    named = (k.coordinator, k.num_processes, k.process_id, k.distributed_auto)
    from purejaxdrl.cli import processes  # imports JAX: seconds

    config = processes.DistributedConfig(*named, init_timeout=k.init_timeout)
    running = {"-h", "--help"}.isdisjoint(argv)  # not only asking for help
    if running and config.enabled:
        early.hand_over()
    return running and processes.initialize_distributed(config)


def train_command(argv: Sequence[str]) -> int:
    """`purejaxdrl train ...`; returns the exit status.

    SIGINT / SIGTERM are a request to stop from its first line: one process
    holds them (`SetupHold`, which `train()` takes over) and stops before it
    trains, with one line; many hold them from joining on
    (`held_stop_signals`) and stop together.
    """
    with EarlySignals() as early:
        if _join_processes(argv, early):
            from purejaxdrl.cli.processes import held_stop_signals

            with held_stop_signals(True, saves="--no-files" not in argv):
                return _train(argv, None)
        from purejaxdrl.training.setup_stop import SetupHold

        with SetupHold() as held:
            early.hand_over()
            return _train(argv, held)


def _train(argv: Sequence[str], held: Any) -> int:
    """`train_command`, once the processes have joined (`held`: one's hold)."""
    known = pre_parse(argv, "--env", "--env.id", "--algo", "--resume", command="train")
    if known.resume is not None:
        if known.env is not None:
            raise UsageError(
                f"--env {known.env} with --resume: a resumed run keeps its own "
                "environment (see its config.yaml); drop --env."
            )
        (args, config), preset = _resumed(argv, known.resume), None
        started = None
    else:
        env, algo, started = command_start(known)
        args, config, preset = _fresh(argv, env, algo, known.env is not None)
    if held is not None:  # asked to stop while the config was read: untouched
        held.stop_if_asked(None, resuming=args.resume is not None)
    use_compile_cache(args)
    import jax

    from purejaxdrl.cli.processes import exit_on_peer_failure
    from purejaxdrl.cli.run_agreement import agree_on_run
    from purejaxdrl.parallel import is_main_process
    from purejaxdrl.runners.sebulba import HostEnvError
    from purejaxdrl.training.checkpoint import CheckpointError
    from purejaxdrl.training.faults import NonFiniteError, lost_process
    from purejaxdrl.training.log_writes import LogWriteError
    from purejaxdrl.training.memory import out_of_memory, out_of_memory_refusal
    from purejaxdrl.training.replay_shards import replay_devices
    from purejaxdrl.training.train import train

    # The processes agree on the devices the resume will take; `train` says
    # which, and what changed, once it accepts the resume (not before a refusal).
    agreed = replay_devices(config, args.resume)[0] if args.resume else config
    agree_on_run(args, agreed)
    start = time.perf_counter()
    try:
        result = train(
            config,
            console=not args.quiet,
            write_files=not args.no_files,
            resume=args.resume,
            notify=lambda line: print(f"purejaxdrl: {line}", file=sys.stderr),
            log_to=args.logger,
            allow_changes=bool(args.resume and args.override),
        )
    except (NonFiniteError, CheckpointError, LogWriteError, HostEnvError) as e:
        if isinstance(e, CheckpointError) and (lost := lost_process(e)) is not None:
            # A process died while the run saved: the peer-failure line, at
            # once, before JAX's error poller aborts this one (status 134).
            exit_on_peer_failure(str(lost).strip().splitlines()[0])
        status, message = EXIT_FAILURE, str(e)
        if isinstance(e, HostEnvError):
            status, message = host_error(e)
        print(f"purejaxdrl: error: {' '.join(message.split())}", file=sys.stderr)
        return status
    except (jax.errors.JaxRuntimeError, ValueError, MemoryError) as e:
        if (said := out_of_memory(e)) is not None:
            raise out_of_memory_refusal(config, said) from None
        if jax.process_count() == 1 or not runtime_failure(e):
            raise
        # A peer died or the network failed: one line, not a C++ error dump.
        exit_on_peer_failure(str(e).strip().splitlines()[0])
    if is_main_process():
        # A resumed run names no preset: the one it began from judges it.
        preset = preset or run_preset(config)
        wall = time.perf_counter() - start
        print(summary(config, preset, result, wall, args.logger))
        if started:  # here, not first: a refusal stays one line
            print(f"  settings           {started}")
    return 0


def runtime_failure(error: Exception) -> bool:
    """Whether `error` is the runtime's (a failed computation), not a check's."""
    from purejaxdrl.training.faults import runtime_failure as failed

    return failed(error)


def _mean_return(ret: float, env_steps: int) -> str:
    """The summary's mean return, or why there is none (NaN: no episode ended)."""
    if not math.isnan(ret):
        return return_text(ret)
    if not env_steps:
        return "—"
    return (
        f"— (no episode ended in {env_steps:,} steps; train longer or check the "
        "environment's time limit)"
    )


def _return_chunk(result: Any) -> str:
    """Where the mean return is older than the last chunk (no episode ended since)."""
    returns = [(r["updates"], r.get("episode/mean_return")) for r in result.history]
    ended = [at for at, value in returns if value is not None and not math.isnan(value)]
    if math.isnan(result.mean_return) or not ended or ended[-1] == result.updates:
        return ""
    return f" (chunk ending at update {ended[-1]:,}: no episode ended after it)"


def _per_device(result: Any, learner: str) -> str:
    """The summary's per-device speed, named as what it is.

    It is steps per device-second over every session: where a resume changed
    the device count (the records' `devices` differ), "per device" would read
    as this session's devices' share, which it is not.
    """
    figure = f"{result.steps_per_second_per_device:,.0f} per{learner} device"
    counts = {r.get("devices", result.num_devices) for r in result.history}
    if counts <= {result.num_devices}:
        return figure
    *most, last = (str(n) for n in sorted(counts | {result.num_devices}))
    return (
        f"{figure}-second over all sessions (on {', '.join(most)} and {last} devices)"
    )


def summary(
    config: Any, preset: Any, result: Any, wall: float, log_to: Sequence[str] = ()
) -> str:
    """What a finished run prints: returns, target, steps, times, directory.

    `log_to` is the session's `--logger` names, which its resume commands
    repeat: loggers are not in the saved config.
    """
    import jax

    ret = result.mean_return
    platform = jax.devices()[0].platform
    count = jax.process_count()
    processes = f" in {count} processes" if count > 1 else ""
    # A host-env run counts its learner's devices (its actors may have others).
    learner = " learner" if is_host_env(config.env.id) else ""
    lines = [
        f"done: {config.algo} on {config.env.id}, {result.num_devices} "
        f"{platform}{learner} device(s){processes}, seed {config.seed}",
        f"  final mean return  {_mean_return(ret, result.env_steps)}"
        f"{_return_chunk(result)}",
    ]
    if not math.isnan(result.eval_return):
        # The last evaluation may be chunks old (a run stopped by a signal).
        evals = [r for r in result.history if "eval/mean_return" in r]
        last = evals[-1] if evals else {"updates": result.updates}
        at, cut = last["updates"], last.get("eval/cut", 0)
        # Its own episode count: a resume may have changed eval.episodes since.
        episodes = last.get("eval/episodes", config.eval.episodes)
        # Beside eval.stop_at's own update: the chunk queued behind it is evaluated too.
        stopped = (result.stopped_by or "").startswith("eval.stop_at")
        when = f", at update {at:,}" if at != result.updates or stopped else ""
        cut = f", {cut} cut at eval.max_steps {config.eval.max_steps:,}" if cut else ""
        lines.append(
            f"  eval return        {return_text(result.eval_return)} "
            f"(deterministic policy, {episodes} episodes{cut}{when})"
        )
    flags = logger_flags(log_to)  # run as printed, a resume logs there still
    after: list[str] = []  # lines below the block
    if result.stopped_by is not None:
        lines[0] = (
            f"stopped by {result.stopped_by} after update {result.updates:,} of "
            f"{config.num_updates:,}: {config.algo} on {config.env.id}"
        )
        if result.run_dir is not None:
            # A resume alone would stop again at the same evaluation return.
            lift = (
                " --eval.stop-at none"
                if result.stopped_by.startswith("eval.stop_at")
                else ""
            )
            # Resumed as one process, a replay learner's run is refused.
            hosts = " (on every host, with its process flags)" if count > 1 else ""
            again = resume_command(
                "train", result.run_dir, flags + lift, result.num_devices
            )
            lines.append(f"  checkpoint saved; continue with: {again}{hosts}")
    elif math.isnan(result.steps_per_second) and result.updates >= config.num_updates:
        lines[0] = (
            f"nothing to train: {config.algo} on {config.env.id} was already "
            f"complete ({result.updates:,} of {config.num_updates:,} updates)"
        )
        if result.run_dir is not None:  # after the block, not lost inside it
            more = f"{flags} --total-steps N --override"
            resume = resume_command("train", result.run_dir, more, result.num_devices)
            after.append(f"to train on, raise the budget: {resume}")
    elif (target := target_line(config, preset, result)) is not None:
        lines.append(target)
    lines += [
        f"  env steps          {result.env_steps:,}",
        f"  wall time          {wall:.1f} s",
        f"  compile time       {result.compile_seconds:.1f} s",
    ]
    if math.isnan(result.steps_per_second):  # no update ran in this session
        lines.append("  steps/s            — (no updates in this session)")
    else:
        lines.append(
            f"  steps/s            {result.steps_per_second:,.0f} (compile "
            f"excluded), {_per_device(result, learner)}"
        )
    if result.run_dir is not None:
        lines.append(f"  run directory      {result.run_dir}")
    return "\n".join(lines + after)
