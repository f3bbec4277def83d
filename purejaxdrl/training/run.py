"""A run's host-side context: its directory, checkpointer, messages; restoring it."""

import dataclasses
import pathlib
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import yaml

from purejaxdrl.config import ConfigError
from purejaxdrl.config_docs import both_ways
from purejaxdrl.env.host.gymnasium import registered_in_main
from purejaxdrl.env.registry import registering_module
from purejaxdrl.observe.loggers import WandbLogger, logger_flags
from purejaxdrl.parallel import is_main_process, resume_command
from purejaxdrl.runners.base import Runner
from purejaxdrl.setup_warnings import warn_once
from purejaxdrl.training import opened_run
from purejaxdrl.training.checkpoint import Checkpointer, LayoutMisfit
from purejaxdrl.training.config import TrainConfig, run_dict
from purejaxdrl.training.experiment import Experiment
from purejaxdrl.training.packing import describe
from purejaxdrl.training.replay_shards import check_replay_shards, replay_devices
from purejaxdrl.training.run_files import (
    RunLock,
    agreed_run_dir,
    make_run_dir,
    run_lock,
    write_atomically,
)
from purejaxdrl.training.saved_config import (
    OVERRIDES_FILE,
    check_newest_config,
    check_saved_config,
    override_record,
    setup_notes,
)


@dataclasses.dataclass
class Run:
    """What the host keeps of a run besides its device state.

    Attributes:
      config: the run's config.
      run_dir: its output folder, or None (nothing written).
      main: whether this process speaks and writes (process 0).
      messages: what the run reported besides metrics.
      notify: called with each message on process 0.
      checkpointer: its checkpoints, with a run directory; else None.
      state_index: how a checkpoint's arrays map to the state (`describe`).
      allow_changes: a resume may continue with a config that changes the
        run's updates (`--override`).
      lock: process 0's hold on `run_dir` while it trains (`lock_run`).

    """

    config: TrainConfig
    run_dir: pathlib.Path | None
    main: bool
    messages: list[str] = dataclasses.field(default_factory=list)
    notify: Callable[[str], None] | None = None
    checkpointer: Checkpointer | None = None
    state_index: Any = None
    allow_changes: bool = False
    lock: RunLock | None = None

    def say(self, line: str) -> None:
        """Records a message and passes it to `notify` on process 0."""
        self.messages.append(line)
        if self.notify is not None and self.main:
            self.notify(line)


def open_run(
    config: TrainConfig,
    *,
    resume: str | pathlib.Path | None,
    write_files: bool,
    notify: Callable[[str], None] | None,
    allow_changes: bool = False,
    devices: int = 1,
    log_to: Sequence[str] = (),
) -> Run:
    """A run's context and directory: the resumed one, a new one, or none.

    It says each setup note (`setup_notes`: budget rounded, evaluation asked
    for without episodes) of a new run, or new at this resume. `devices` (the
    mesh's size) and `log_to` make the command that resumes it after a peer's
    failure (`opened_run.resume_after_failure`).

    A new run's directory is made under `config.run_dir`; a resumed run's
    config.yaml is rewritten only once its checkpoint restored
    (`save_resumed_config`), so a resume refused on the way changes nothing.
    """
    main = is_main_process()  # every process runs the same program
    run_dir = None
    if resume is not None:
        run_dir = pathlib.Path(resume)
    elif write_files:
        run_dir = agreed_run_dir(make_run_dir(config) if main else None)
    run = Run(
        config=config,
        run_dir=run_dir,
        main=main,
        notify=notify,
        allow_changes=allow_changes,
    )
    for note in setup_notes(config, resume):
        run.say(note)
    if run_dir is not None:
        flags = logger_flags(log_to or ())
        opened_run.remember(run_dir, resume_command("train", run_dir, flags, devices))
        _warn_unimported(config)
    return run


def _warn_unimported(config: TrainConfig) -> None:
    """Warns of a saved run's environment that no other process will find.

    Registered by the training script (`__main__`), or by a module of the
    user's that `env.imports` does not name (imported in a notebook's cell,
    say): `eval`, `export` and `train --resume` import only `env.imports`.
    """
    env_id, imports = config.env.id, config.env.imports
    module = registering_module(env_id)
    if registered_in_main(env_id) or module == "__main__":
        warn_once(_SCRIPTS_OWN_ENV.format(id=env_id), "scripts-own-env")
    elif module and not any(_imports(name, module) for name in imports):
        warn_once(
            f"env.id={env_id!r} is registered by module {module!r}, which "
            f"env.imports ({list(imports)}) does not name, so `purejaxdrl eval`, "
            "`export` and `train --resume` of this run will not find it; pass "
            + both_ways("--env.imports", "env.imports", module, [module]),
            ("unimported-env", env_id),
        )


def _imports(name: str, module: str) -> bool:
    """Whether importing `name` runs `module` (itself, a package of it or in it)."""
    inner, outer = (
        f"{module}.".startswith(f"{name}."),
        f"{name}.".startswith(f"{module}."),
    )
    return inner or outer


# A saved run of an id that only the training script registers (hr15 #5).
_SCRIPTS_OWN_ENV = (
    "env.id={id!r} is registered by the script that trains it (__main__), so "
    "`purejaxdrl eval`, `export` and `train --resume` of this run will not find "
    "it; register it in a module of its own and pass "
    + both_ways("--env.imports", "env.imports", "MODULE", ["MODULE"])
)


def lock_run(run: Run) -> RunLock | None:
    """Process 0's hold on the run's directory, kept in `run.lock` till it ends.

    Taken where `run.main` (process 0) has a directory (`run_lock`'s rule).

    Raises:
      ConfigError: another process trains the run now.

    """
    if run.main:
        run.lock = run_lock(run.run_dir)
    return run.lock


def start_wandb(
    run: Run, log_to: tuple[str, ...] | list[str], devices: int = 1
) -> WandbLogger | None:
    """A W&B run when `log_to` asks for one, on process 0.

    `devices` is the run's (its mesh's size), for a refusal's resume command.

    Started before compiling: W&B's service sets itself up (a process, system
    metadata) while XLA compiles, not while the run trains.
    """
    if "wandb" not in log_to or not run.main:
        return None
    config = run_dict(run.config)
    return WandbLogger(
        run.run_dir, run.run_dir.name, config, log_to=log_to, devices=devices
    )


def attach_checkpointer(run: Run, runner: Runner, abstract: Any) -> None:
    """Gives a run with a directory its checkpointer, for `abstract`'s layout.

    `abstract` is `runner.abstract_state(key)`: shapes with their shardings.
    """
    if run.run_dir is None:
        return
    run.checkpointer = Checkpointer(
        run.run_dir / "checkpoints",
        abstract,
        jax.tree.map(lambda a: a.sharding, abstract),
        runner.mesh,
        keep=run.config.checkpoint.keep,
        keep_best=run.config.checkpoint.keep_best,
    )
    run.state_index = describe(abstract)


def save_resumed_config(run: Run, resumed_at: int) -> None:
    """Rewrites a resumed run's config.yaml with the config it continues with.

    Changed only with --override, which `OVERRIDES_FILE` records with the
    update it resumed from (`resumed_at`) and each field changed, with its old
    and new value (`override_record`); called once the checkpoint restored.
    A replay run left to choose its devices (`devices: 0`) keeps 0 when it
    resumes on the count that 0 chooses (`replay_devices`), so that the next
    resume chooses again on its own processes and devices; each checkpoint's
    meta records the count it was saved on.
    """
    from purejaxdrl.training.resume import load_run_config

    if run.main and run.run_dir is not None:
        path, data = run.run_dir / "config.yaml", run_dict(run.config)
        saved = yaml.safe_load(path.read_text())  # its run_dir: a resume's is ignored
        data["run_dir"] = saved.get("run_dir", data["run_dir"])
        auto = dataclasses.replace(run.config, devices=0)
        if saved.get("devices") == 0 and (
            replay_devices(auto, run.run_dir)[0].devices == run.config.devices
        ):
            data["devices"] = 0
        if run.allow_changes:  # whatever changed, file or command: accepted
            before = load_run_config(run.run_dir)  # its config.yaml, not rewritten yet
            kept = dataclasses.replace(run.config, devices=data["devices"])
            record = override_record(resumed_at, before, kept)
            with open(run.run_dir / OVERRIDES_FILE, "a") as f:
                f.write(record)
        # A kill mid-write keeps the old config.
        write_atomically(path, yaml.safe_dump(data, sort_keys=False))


@dataclasses.dataclass
class Start:
    """Where a run starts: fresh (no state) or from a checkpoint."""

    state: Any = None
    done: int = 0
    history: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    seconds_before: float = 0.0
    # None: saved before 2026-12-06, which kept no count (`ChunkLoop`'s).
    device_seconds_before: float | None = None

    def progress(self) -> "Progress":
        """The `ChunkLoop` fields a session continues: updates, records, time."""
        return Progress(
            self.done, self.history, self.seconds_before, self.device_seconds_before
        )


class Progress(NamedTuple):
    """What a session continues from (`Start.progress`): `ChunkLoop`'s fields."""

    done: int
    history: list[dict[str, Any]]
    seconds_before: float
    device_seconds_before: float | None


def restore(run: Run, exp: Experiment, accepted: Sequence[str] = ()) -> Start:
    """The newest checkpoint that verifies, or a fresh start when there is none.

    `accepted`: lines said once the resume passed every check (what changed,
    on which devices), before where it resumes: a refused resume says only
    why.

    Raises:
      ConfigError: a run with a replay buffer resumed on another device count.

    """
    config, checkpointer = run.config, run.checkpointer
    check_replay_shards(config, run.run_dir, exp.runner.mesh.size)
    # A config.yaml edited by hand is named before the layout check meets it.
    check_newest_config(run.run_dir, checkpointer, config, run.allow_changes)
    start, meta = start_from_latest(run)
    if start.state is None:
        _say(run, accepted)
        return start
    check_saved_config(run.run_dir, config, meta, start.done, run.allow_changes)
    if start.done > config.num_updates:
        # Its checkpoints and summary say more than config.yaml would.
        raise ConfigError(
            f"--resume {run.run_dir}: total_steps={config.total_steps:,} ends at "
            f"update {config.num_updates:,}, before the {start.done:,} updates "
            "this run has trained; pass --total-steps of at least "
            f"{start.done * config.steps_per_update:,} (with --override; in "
            "Python, total_steps and allow_changes=True)."
        )
    # Said once the checks passed: a refused resume resumed nothing.
    _say(run, accepted)
    complete = start.done >= config.num_updates
    run.say(
        f"resumed at update {start.done:,} of {config.num_updates:,} from "
        f"{checkpointer.directory / str(start.done)}"
        + ("; the run is already complete, nothing to train" if complete else "")
    )
    for line in exp.runner.resume_notes(meta.get("devices")):
        run.say(line)
    return start


def _say(run: Run, lines: Sequence[str]) -> None:
    """Says each of `lines` (`restore`'s accepted notes)."""
    for line in lines:
        run.say(line)


def start_from_latest(run: Run) -> tuple[Start, dict[str, Any]]:
    """The newest checkpoint that verifies as a Start, and its meta record.

    Says which checkpoints were skipped, or that the run starts from update 0
    (a fresh Start, {}); `restore` says where it resumes, once it may.
    """
    restored = _restore_latest(run)
    for line in restored.skipped:
        run.say(line)
    if restored.step is None:
        run.say(f"no usable checkpoint in {run.run_dir}; starting from update 0")
        return Start(), {}
    start = Start(
        state=restored.state,
        done=restored.step,
        history=list(restored.meta["history"]),
        seconds_before=float(restored.meta["train_seconds"]),
        device_seconds_before=restored.meta.get("device_seconds"),
    )
    return start, restored.meta


def _restore_latest(run: Run) -> Any:
    """`restore_latest`, saying which --override changed the state's shapes.

    Without --override the run's shapes are the saved ones; with it, a change
    such as network.core or num_envs makes every checkpoint a misfit, which
    the checkpointer alone would blame on another version or config.
    """
    from purejaxdrl.training.resume import binding_changes, load_run_config

    try:
        return run.checkpointer.restore_latest()
    except LayoutMisfit as e:
        changes = binding_changes(load_run_config(run.run_dir), run.config)
        if not (run.allow_changes and changes):
            raise
        raise ConfigError(
            f"--resume {run.run_dir} --override: the checkpoint's state does not "
            f"fit this run's ({e.detail}); of the changes ({'; '.join(changes)}), "
            "one that sets a size (network, num_envs, buffers) changes the "
            "state's shapes, which a checkpoint cannot continue: drop it, or "
            "start a new run with it (nothing was moved or deleted)."
        ) from None
