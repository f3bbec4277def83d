"""Host-side metric sinks: a live progress bar, JSONL, TensorBoard, W&B.

Each receives one record per chunk (principle 7: metrics leave the device once
per chunk). Returns are only logged from completed episodes: a chunk in which
no episode ended carries NaN, which every sink leaves out rather than log as 0.
"""

import html
import json
import math
import os
import pathlib
import sys
from typing import Any, Protocol

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

LOGGERS = ("tensorboard", "wandb")  # sinks chosen by name (`--logger`)


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


class WandbLogger:
    """Each record's finite numbers to a Weights & Biases run, x = env_steps.

    Needs the `wandb` extra (`pip install "purejaxdrl[wandb]"`). The W&B
    files go to `directory/wandb/`; `WANDB_MODE=offline` keeps them local, for
    `wandb sync` later; `WANDB_PROJECT` names the project (default
    purejaxdrl). Every metric is plotted against `env_steps` (W&B's own step
    counter would restart on a resume).
    """

    def __init__(self, directory: pathlib.Path, name: str, config: dict[str, Any]):
        try:
            import wandb
        except ImportError:  # pragma: no cover - depends on the install
            raise ImportError(
                "--logger wandb needs the wandb package: pip install "
                '"purejaxdrl[wandb]"'
            ) from None
        directory.mkdir(parents=True, exist_ok=True)
        self._run = wandb.init(
            project=os.environ.get("WANDB_PROJECT", "purejaxdrl"),
            name=name,
            dir=str(directory),
            config=config,
            reinit="create_new",  # one W&B run per train() call, even in Jupyter
        )
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


def _progress_text(record: dict[str, Any], total_steps: int, num_devices: int) -> str:
    sps = _fmt(record.get("steps_per_second"), ",.0f")
    per_device = _fmt(record.get("steps_per_second_per_device"), ",.0f")
    ret = _fmt(record.get("episode/mean_return"), ".1f")
    evaluated = record.get("eval/mean_return")
    text = (
        f"steps {record['env_steps']:>12,}/{total_steps:,}  "
        f"{sps:>10} steps/s ({per_device}/device x {num_devices})  "
        f"return {ret:>8}"
    )
    if evaluated is not None:
        text += f"  eval {_fmt(evaluated, '.1f')}"
    return text + f"  ETA {_fmt(record.get('eta_seconds'), '.0f')} s"


class ConsoleLogger:
    """A live progress bar on stderr: env steps, steps/s, mean return, ETA.

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
        self._progress.update(
            self._task,
            completed=record["env_steps"],
            sps=_fmt(record.get("steps_per_second"), ",.0f"),
            ret=_fmt(record.get("episode/mean_return"), ".1f"),
            per_device=_fmt(record.get("steps_per_second_per_device"), ",.0f"),
        )
        if not self._live:
            text = _progress_text(record, self.total_steps, self.num_devices)
            self.console.print(text, highlight=False, soft_wrap=True)

    def close(self) -> None:
        if self._live:
            self._progress.stop()


class NotebookProgress:
    """A progress bar in a Jupyter cell's output, updated in place.

    One display (HTML with a plain-text twin) replaced at each record, so a
    long run leaves one line in the notebook, not one per chunk; needs only
    IPython, no widgets.
    """

    def __init__(self, total_steps: int, description: str, num_devices: int = 1):
        from IPython.display import display

        self.total_steps = total_steps
        self.description = description
        self.num_devices = num_devices
        self._handle = display(self._bundle(None), raw=True, display_id=True)

    def _bundle(self, record: dict[str, Any] | None) -> dict[str, str]:
        if record is None:
            done, text = 0, "compiled; waiting for the first chunk"
        else:
            done = record["env_steps"]
            text = _progress_text(record, self.total_steps, self.num_devices)
        text = " ".join(text.split())
        return {
            "text/plain": f"{self.description}: {text}",
            "text/html": (
                f"<b>{html.escape(self.description)}</b> "
                f'<progress value="{done}" max="{self.total_steps}" '
                'style="width: 30%; vertical-align: middle"></progress> '
                f"<code>{html.escape(text)}</code>"
            ),
        }

    def write(self, record: dict[str, Any]) -> None:
        self._handle.update(self._bundle(record), raw=True)

    def close(self) -> None:
        pass


def in_notebook() -> bool:
    """True inside a Jupyter kernel (notebook, lab, VS Code, Colab)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:  # never imported: not a kernel
        return False
    shell = ipython.get_ipython()
    return shell is not None and "IPKernelApp" in shell.config


def progress_logger(
    total_steps: int, description: str, num_devices: int = 1
) -> ConsoleLogger | NotebookProgress:
    """The progress bar for where the code runs: a Jupyter cell or stderr."""
    kind = NotebookProgress if in_notebook() else ConsoleLogger
    return kind(total_steps, description, num_devices)
