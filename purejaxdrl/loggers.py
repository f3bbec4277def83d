"""Host-side metric sinks: a live console progress line, JSONL, TensorBoard."""

import json
import math
import pathlib
import sys
from typing import Any, Protocol

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn


class Logger(Protocol):
    """Receives one record per chunk of updates. Not jittable: does I/O."""

    def write(self, record: dict[str, Any]) -> None:
        """Records the metrics of one chunk (`env_steps` is always present)."""

    def close(self) -> None:
        """Flushes and releases resources."""


def _fmt(x: float | None, spec: str) -> str:
    return (
        "—"
        if x is None or (isinstance(x, float) and math.isnan(x))
        else format(x, spec)
    )


class JsonlLogger:
    """Appends each record as one JSON line to `path` (NaN written as null)."""

    def __init__(self, path: pathlib.Path):
        self.path = path
        self._file = path.open("a", buffering=1)

    def write(self, record: dict[str, Any]) -> None:
        clean = {
            k: None if isinstance(v, float) and not math.isfinite(v) else v
            for k, v in record.items()
        }
        self._file.write(json.dumps(clean) + "\n")

    def close(self) -> None:
        self._file.close()


class TensorBoardLogger:
    """Each record's numbers as TensorBoard scalars, at x = env_steps.

    Writes event files (with tensorboardX) into `logdir`; `tensorboard --logdir
    runs/` then compares runs. NaN values are skipped, so a chunk in which no
    episode ended leaves a gap in the return curve, never a fake 0.
    """

    def __init__(self, logdir: pathlib.Path):
        from tensorboardX import SummaryWriter

        self._writer = SummaryWriter(str(logdir))

    def write(self, record: dict[str, Any]) -> None:
        step = int(record["env_steps"])
        for name, value in record.items():
            if name == "env_steps" or isinstance(value, bool):
                continue
            if isinstance(value, int | float) and math.isfinite(value):
                self._writer.add_scalar(name, value, step)

    def close(self) -> None:
        self._writer.close()


class ConsoleLogger:
    """A live progress line: env steps, steps/s, mean return, ETA.

    On a terminal it redraws one line; elsewhere (CI logs, pipes) it prints one
    line per record.
    """

    def __init__(self, total_steps: int, description: str, num_devices: int = 1):
        self.console = Console(file=sys.stderr)
        self.total_steps = total_steps
        self.num_devices = num_devices
        self._live = self.console.is_terminal
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed:,.0f}/{task.total:,.0f} steps"),
            TextColumn("{task.fields[sps]} steps/s"),
            TextColumn("({task.fields[per_device]}/device x {task.fields[devices]})"),
            TextColumn("return {task.fields[ret]}"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            disable=not self._live,
        )
        self._task = self._progress.add_task(
            description,
            total=total_steps,
            sps="—",
            ret="—",
            per_device="—",
            devices=num_devices,
        )
        if self._live:
            self._progress.start()

    def write(self, record: dict[str, Any]) -> None:
        sps = _fmt(record.get("steps_per_second"), ",.0f")
        per_device = _fmt(record.get("steps_per_second_per_device"), ",.0f")
        ret = _fmt(record.get("episode/mean_return"), ".1f")
        self._progress.update(
            self._task,
            completed=record["env_steps"],
            sps=sps,
            ret=ret,
            per_device=per_device,
        )
        if not self._live:
            eta = _fmt(record.get("eta_seconds"), ".0f")
            self.console.print(
                f"steps {record['env_steps']:>12,}/{self.total_steps:,}  "
                f"{sps:>10} steps/s ({per_device}/device x {self.num_devices})  "
                f"return {ret:>8}  ETA {eta} s",
                highlight=False,
            )

    def close(self) -> None:
        if self._live:
            self._progress.stop()
