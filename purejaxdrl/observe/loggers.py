"""Host-side metric sinks: JSONL, TensorBoard, W&B (the progress line: `progress`).

Each receives one record per chunk (metrics leave the device once per chunk).
Returns are only logged from completed episodes: a chunk in which no episode
ended carries NaN, which every sink leaves out rather than log as 0.
"""

import json
import math
import os
import pathlib
import time
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from purejaxdrl.config_types import ConfigError
from purejaxdrl.parallel import resume_command

LOGGERS = ("tensorboard", "wandb")  # sinks chosen by name (`--logger`)
WANDB_MISSING = (
    "--logger wandb (log_to=['wandb'] in Python) needs the wandb package, "
    "which is not installed: pip install 'purejaxdrl[wandb]', or drop it"
)


class Logger(Protocol):
    """Receives one record per chunk of updates. Not jittable: does I/O."""

    def write(self, record: dict[str, Any]) -> None:
        """Records the metrics of one chunk (`env_steps` is always present)."""

    def close(self) -> None:
        """Flushes and releases resources."""


def clean_record(record: dict[str, Any]) -> dict[str, Any]:
    """`record` as strict JSON takes it: NaN and infinities as null."""
    return {
        k: None if isinstance(v, float) and not math.isfinite(v) else v
        for k, v in record.items()
    }


def logger_flags(log_to: Iterable[str]) -> str:
    """The `--logger NAME` flags of `log_to`, each once, to end a command with.

    Loggers are not part of a run's saved config, so every resume command the
    CLI prints carries the session's (`" --logger tensorboard"`; "" for none):
    run as printed, it goes on logging where the session did.
    """
    return "".join(f" --logger {name}" for name in dict.fromkeys(log_to))


class JsonlLogger:
    """Appends each record as one JSON line to `path` (NaN written as null)."""

    def __init__(self, path: pathlib.Path):
        self.path = path
        self._file = path.open("a", buffering=1)

    def write(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(clean_record(record)) + "\n")

    def close(self) -> None:
        self._file.close()


class TensorBoardLogger:
    """Each record's numbers as TensorBoard scalars, at x = env_steps.

    Writes an event file (tensorboardX's format) into `logdir`; `tensorboard
    --logdir runs/` then compares runs. NaN values are skipped, so a chunk in
    which no episode ended leaves a gap in the return curve, never a fake 0.
    Written on the caller's thread, one flush per record: tensorboardX's
    `SummaryWriter` writes on a thread of its own, which a full disk ended
    (a traceback) while the next records waited on its queue for ever.
    """

    def __init__(self, logdir: pathlib.Path, resumed_at: int | None = None):
        """Writes into `logdir`; a resumed run's from `resumed_at` on.

        `resumed_at` is its env steps at the checkpoint: what a killed
        session wrote past them is purged, so no step has two values (-1:
        all of it, a resume from update 0).
        """
        from tensorboardX.event_file_writer import EventsWriter
        from tensorboardX.proto.event_pb2 import Event, SessionLog

        logdir.mkdir(parents=True, exist_ok=True)
        self._events = EventsWriter(str(logdir / "events"))  # SummaryWriter's name
        if resumed_at is not None:  # as SummaryWriter's purge_step writes it
            start = SessionLog(status=SessionLog.START)
            self._events.write_event(Event(step=resumed_at + 1, session_log=start))
        self._events.flush()

    def write(self, record: dict[str, Any]) -> None:
        from tensorboardX.proto.event_pb2 import Event
        from tensorboardX.proto.summary_pb2 import Summary
        from tensorboardX.summary import scalar

        values = [
            scalar(name, value).value[0]
            for name, value in record.items()
            if name != "env_steps"
            and isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
        ]
        step, summary = int(record["env_steps"]), Summary(value=values)
        event = Event(wall_time=time.time(), step=step, summary=summary)
        self._events.write_event(event)
        self._events.flush()

    def close(self) -> None:
        self._events.close()


class WandbLogger:
    """Each record's finite numbers to a Weights & Biases run, x = env_steps.

    Needs the `wandb` extra (`pip install "purejaxdrl[wandb]"`). The W&B
    files go to `directory/wandb/`; `WANDB_MODE=offline` keeps them local, for
    `wandb sync` later; `WANDB_PROJECT` names the project (default
    purejaxdrl). Every metric is plotted against `env_steps` (W&B's own step
    counter would restart on a resume). A resume continues the run's W&B run;
    what a killed session logged past its last checkpoint stays there (W&B
    cannot remove points; metrics.jsonl and TensorBoard's are replaced).
    """

    def __init__(
        self,
        directory: pathlib.Path,
        name: str,
        config: dict[str, Any],
        log_to: Sequence[str] = ("wandb",),
        devices: int = 1,
    ):
        """Starts (or, with the id saved in `directory/wandb/`, continues) it.

        `log_to` is the session's named sinks, which the resume command of a
        refusal repeats (a resume without them would not log there), and
        `devices` the run's (its mesh's size), whose fake CPU device setting
        that command starts with.

        Raises:
          ConfigError: W&B did not start (no login, say); nothing was trained.

        """
        try:
            import wandb
        except ImportError:
            raise ConfigError(WANDB_MISSING) from None
        (directory / "wandb").mkdir(parents=True, exist_ok=True)
        # A resumed run goes on in the W&B run it started (its id kept here).
        id_file = directory / "wandb" / "purejaxdrl-run-id"
        run_id = id_file.read_text().strip() if id_file.is_file() else None
        try:
            self._run = wandb.init(
                project=os.environ.get("WANDB_PROJECT", "purejaxdrl"),
                name=name,
                dir=str(directory),
                config=config,
                id=run_id,
                resume="allow" if run_id else None,
                reinit="create_new",  # one W&B run per train() call, in Jupyter too
            )
        except (wandb.errors.UsageError, wandb.errors.AuthenticationError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            flags = logger_flags((*log_to, "wandb"))
            raise ConfigError(
                f"--logger wandb: W&B did not start ({type(e).__name__}: {first}); "
                "run `wandb login`, set WANDB_API_KEY, or set WANDB_MODE=offline "
                "to keep the run local; this session trained nothing in "
                f"{str(directory)!r}: once W&B starts, continue it with "
                f"`{resume_command('train', directory, flags, devices)}`"
            ) from None
        id_file.write_text(self._run.id)
        self._run.define_metric("env_steps")
        self._run.define_metric("*", step_metric="env_steps")

    def write(self, record: dict[str, Any]) -> None:
        self._run.log(
            {
                k: v
                for k, v in record.items()
                if isinstance(v, int | float)
                and not isinstance(v, bool)
                and math.isfinite(v)
            }
        )

    def close(self) -> None:
        self._run.finish()
