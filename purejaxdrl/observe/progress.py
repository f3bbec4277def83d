"""Progress displays: the live training line on stderr, and in a Jupyter cell.

On a terminal the line is redrawn in place and fitted to the terminal's width:
the description, the bar and the optional figures (evaluation, speed per
device) give way first, so the figures that matter (steps done of the total,
return, steps/s, ETA) are whole down to about 50 columns (narrower, the
terminal cuts them too). Elsewhere (CI logs, pipes) a plain line is
printed per record, whatever its length. Before the first record a phase
("compiling", "training") says what the run is doing, with its seconds.
`counting` shows the same kind of line for other long host work (frames drawn).
"""

import contextlib
import html
import math
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.progress import Progress, ProgressColumn, Task
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from purejaxdrl.observe.notebook_count import notebook_count
from purejaxdrl.observe.progress_figures import duration, figures, progress_text

# The bar's width on the live line: at least, and at most.
MIN_BAR, MAX_BAR = 8, 40
# The description keeps this many cells (or all of it) before figures drop.
MIN_DESCRIPTION = 12


class ProgressLine:
    """One live progress line, fitted to the width it is drawn in.

    `description ━━━━━━━━ figures`: the figures keep their full text; when the
    line is too narrow the droppable figures go first (the last first), then
    the description is shortened (with an ellipsis) and the bar narrows.

    Args:
      description: what trains (e.g. "ppo CartPole-v1").
      completed: steps done.
      total: steps in all.
      parts: the figures, as (text, may be dropped) pairs, in display order.
      pulse: animate the bar instead of filling it (no progress to show yet).

    """

    def __init__(
        self,
        description: str,
        completed: float,
        total: float,
        parts: Sequence[tuple[str, bool]],
        pulse: bool = False,
    ):
        self.description = description
        self.completed = completed
        self.total = total
        self.parts = tuple(parts)
        self.pulse = pulse

    def fit(self, width: int) -> tuple[str, int, str]:
        """(description, bar width, figures) that fill at most `width` cells."""
        parts = list(self.parts)
        description = self.description
        while True:
            shown = "  ".join(text for text, _ in parts)
            room = width - cell_len(shown) - 2  # the gaps around the bar
            needed = MIN_BAR + min(cell_len(description), MIN_DESCRIPTION)
            droppable = [i for i, (_, drop) in enumerate(parts) if drop]
            if room >= needed or not droppable:
                break
            del parts[droppable[-1]]
        described = min(cell_len(description), max(room - MIN_BAR, 0))
        if described < cell_len(description):
            shortened = Text(description)
            shortened.truncate(described, overflow="ellipsis")
            # A stub such as "i…" says nothing: the bar takes its place.
            description = shortened.plain if described >= 4 else ""
        bar = max(0, min(MAX_BAR, room - cell_len(description)))
        return description, bar, shown

    def __rich_console__(
        self, console: Console, options: ConsoleOptions
    ) -> RenderResult:
        description, bar, shown = self.fit(options.max_width)
        grid = Table.grid(padding=(0, 1))
        cells = []
        if description:
            grid.add_column(no_wrap=True)
            cells.append(Text(description, style="bold"))
        if bar:
            grid.add_column(width=bar, no_wrap=True)
            cells.append(
                ProgressBar(self.total, self.completed, width=bar, pulse=self.pulse)
            )
        grid.add_column(no_wrap=True)
        cells.append(Text(shown))
        grid.add_row(*cells)
        yield grid


def phase_text(phase: str, seconds: float) -> str:
    """A phase and its seconds so far: `compiling… 7s`."""
    return f"{phase}… {duration(seconds)}"


class _LineColumn(ProgressColumn):
    """The whole live line as one column, so that it is fitted as a whole."""

    def render(self, task: Task) -> ProgressLine:
        phase, total = task.fields["phase"], task.total or 0
        if phase is not None:  # redrawn ten times a second: the seconds tick
            seconds = time.monotonic() - task.fields["since"]
            parts = ((phase_text(phase, seconds), False),)
            return ProgressLine(task.description, 0, total, parts, pulse=True)
        return ProgressLine(
            task.description, task.completed, total, task.fields["parts"]
        )


class ConsoleLogger:
    """A live progress bar on stderr: env steps, steps/s, mean return, ETA.

    On a terminal it redraws one line, fitted to the terminal's width;
    elsewhere (CI logs, pipes) it prints one line per record. Until the first
    record it shows its phase (`phase`).

    Args:
      total_steps: the run's env steps in all.
      description: what trains, in front of the bar.
      num_devices: devices training.
      console: where to draw (default: stderr).

    """

    def __init__(
        self,
        total_steps: int,
        description: str,
        num_devices: int = 1,
        console: Console | None = None,
    ):
        self.console = console or Console(file=sys.stderr)
        self.description = description
        self.total_steps = total_steps
        self.num_devices = num_devices
        self._live = redraws(self.console, given=console is not None)
        self._phase: str | None = None
        self._since = time.monotonic()
        self._progress = Progress(
            _LineColumn(), console=self.console, disable=not self._live
        )
        self._task = self._progress.add_task(
            description,
            total=total_steps,
            parts=figures(None, total_steps, num_devices),
            phase=None,
            since=self._since,
        )
        if self._live:
            self._progress.start()

    def phase(self, name: str) -> None:
        """Shows `name…` and its seconds (a pulsing bar) until the next record.

        E.g. "compiling" while XLA compiles, then "training" until the first
        chunk's figures arrive. Elsewhere than on a terminal: one line each.
        """
        now = time.monotonic()
        if not self._live:
            text = f"{self.description}: {name}…"
            if self._phase is not None:
                text += f" ({self._phase} took {duration(now - self._since)})"
            self.console.print(text, highlight=False, soft_wrap=True)
        self._phase, self._since = name, now
        self._progress.update(self._task, phase=name, since=now, refresh=self._live)

    def write(self, record: dict[str, Any]) -> None:
        self._phase = None
        self._progress.update(
            self._task,
            completed=record["env_steps"],
            parts=figures(record, self.total_steps, self.num_devices),
            phase=None,
            refresh=self._live,  # drawn now, not at the next tick
        )
        if not self._live:
            text = progress_text(record, self.total_steps, self.num_devices)
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
        self._handle = display(self._bundle("starting"), raw=True, display_id=True)

    def _bundle(self, record: dict[str, Any] | str) -> dict[str, str]:
        if isinstance(record, str):  # a phase
            done, text = 0, f"{record}…"
        else:
            done = record["env_steps"]
            text = progress_text(record, self.total_steps, self.num_devices)
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

    def phase(self, name: str) -> None:
        """Shows `name…` until the next record (see `ConsoleLogger.phase`)."""
        self._handle.update(self._bundle(name), raw=True)

    def write(self, record: dict[str, Any]) -> None:
        self._handle.update(self._bundle(record), raw=True)

    def close(self) -> None:
        pass


class _CountColumn(ProgressColumn):
    """A count's live line: `description ━━━━ 120/500 frames  ETA 3s`."""

    def __init__(self, unit: str):
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> ProgressLine:
        total = int(task.total or 0)
        parts = (
            (f"{int(task.completed):,}/{total:,} {self.unit}", False),
            (f"ETA {duration(task.time_remaining)}", True),
        )
        # Pulses until the first unit is done (nothing to estimate from yet).
        pulse = task.completed == 0
        return ProgressLine(task.description, task.completed, total, parts, pulse)


@contextlib.contextmanager
def counting(
    description: str, total: int, unit: str, console: Console | None = None
) -> Iterator[Callable[[int], None]]:
    """Shows a count towards `total` while the block runs; yields `update(done)`.

    On a terminal (stderr by default) a line redrawn in place and removed at
    the end, `drawing out.gif ━━━━ 120/500 frames  ETA 3s`; in a Jupyter
    kernel one display updated in place (`notebook_count`); elsewhere a line
    at the start and one at each quarter done.

    Args:
      description: what is counted, e.g. "drawing out.gif".
      total: how many units in all.
      unit: their name, plural ("frames").
      console: where to draw (default: stderr).

    """
    if console is None and in_notebook():
        with notebook_count(description, total, unit) as update:
            yield update
        return
    given, console = console is not None, console or Console(file=sys.stderr)
    if not redraws(console, given):
        marks = {math.ceil(total * q / 4) for q in (1, 2, 3, 4)}

        def say(done: int) -> None:
            if done in marks:
                marks.discard(done)
                line = f"{description}: {done:,}/{total:,} {unit}"
                console.print(line, highlight=False, soft_wrap=True)

        console.print(
            f"{description}: {total:,} {unit}…", highlight=False, soft_wrap=True
        )
        yield say
        return
    progress = Progress(_CountColumn(unit), console=console, transient=True)
    task = progress.add_task(description, total=total)
    with progress:
        yield lambda done: progress.update(task, completed=done)


def redraws(console: Console, given: bool) -> bool:
    """Whether progress is a line redrawn in place: on a terminal only.

    Rich takes `FORCE_COLOR` (ipykernel's `!` commands, many CIs) as a
    terminal: a pipe or log file then got the line redrawn as new lines, ten a
    second (nb21 #3). The file decides; colour may still follow `FORCE_COLOR`.
    A console passed in (`given`, e.g. `force_terminal=True`) decides alone.
    """
    isatty = getattr(console.file, "isatty", None)
    return console.is_terminal and (given or (isatty is not None and isatty()))


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
