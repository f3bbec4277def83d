"""The live progress line: fitted to the terminal, its key figures never cut."""

import io
import re
import sys
import time

import pytest
from rich.cells import cell_len
from rich.console import Console

from purejaxdrl.observe.progress import (
    ConsoleLogger,
    NotebookProgress,
    ProgressLine,
    compact,
    counting,
    duration,
    figures,
)

STYLE = re.compile(r"\x1b\[[0-9;]*m")
CURSOR = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
RECORD = {
    "env_steps": 99_840,
    "steps_per_second": 99_632.4,
    "steps_per_second_per_device": 99_632.4,
    "episode/mean_return": 265.84,
    "eta_seconds": 0.0,
}


def _frames(text: str) -> list[str]:
    """The lines a live display drew, control codes removed."""
    lines = re.split(r"[\r\n]", CURSOR.sub("\n", STYLE.sub("", text)))
    return [line.rstrip() for line in lines if line.strip()]


def _terminal(monkeypatch, columns: int) -> io.StringIO:
    """stderr as an 80-column terminal (what `Console(file=sys.stderr)` sees)."""
    out = io.StringIO()
    monkeypatch.setattr(sys, "stderr", out)
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", str(columns))
    return out


def test_the_live_line_fits_80_columns_with_its_figures_whole(monkeypatch):
    out = _terminal(monkeypatch, 80)
    logger = ConsoleLogger(99_840, "ppo CartPole-v1")
    logger.write({**RECORD, "env_steps": 6_656, "eta_seconds": 125.0})
    logger.write(RECORD)
    logger.close()
    frames = _frames(out.getvalue())
    assert frames, out.getvalue()
    for frame in frames:
        assert cell_len(frame) <= 80, frame
        assert "…" not in frame, frame
    last = frames[-1]
    assert last.startswith("ppo CartPole-v1 ")
    for figure in ("99.8k/99.8k", "99.6k steps/s", "return 265.8", "ETA 0s"):
        assert figure in last, last
    assert any("6,656/99.8k " in f and "ETA 2m05s" in f for f in frames)


def _line(width: int, description: str, record: dict, devices: int = 1) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None)
    parts = figures(record, 50_000_000, devices)
    with console.capture() as captured:
        console.print(ProgressLine(description, record["env_steps"], 5e7, parts))
    (line,) = captured.get().splitlines()
    return line.rstrip()


def test_optional_figures_go_first_then_the_description_shortens():
    record = {**RECORD, "env_steps": 12_345_678, "eval/mean_return": 480.0}
    wide = _line(160, "impala playground/CheetahRun", record, devices=8)
    assert "(99.6k/device x 8)" in wide and "eval 480.0" in wide
    assert wide.startswith("impala playground/CheetahRun ")
    narrow = _line(80, "impala playground/CheetahRun", record, devices=8)
    assert cell_len(narrow) <= 80
    assert "/device" not in narrow
    for figure in ("12.3M/50.0M", "return 265.8", "ETA 0s"):
        assert figure in narrow, narrow
    tight = _line(72, "impala playground/CheetahRun", record, devices=8)
    assert cell_len(tight) <= 72 and "eval" not in tight
    assert "…" in tight.split("━")[0] and "return 265.8" in tight


@pytest.mark.parametrize(
    ("x", "text"),
    [(0, "0"), (9_984, "9,984"), (12_345, "12.3k"), (99_840, "99.8k"),
     (499_712, "500k"), (999_999, "1.00M"), (1_500_000, "1.50M"),
     (50e6, "50.0M"), (2.05e9, "2.05G"), (float("nan"), "—")],
)  # fmt: skip
def test_compact_counts(x, text):
    assert compact(x) == text


def test_durations():
    assert [duration(s) for s in (0.4, 42, 185, 7620, float("nan"))] == [
        "0s",
        "42s",
        "3m05s",
        "2h07m",
        "—",
    ]


def test_the_compile_phase_shows_until_the_first_record(monkeypatch):
    out = _terminal(monkeypatch, 80)
    logger = ConsoleLogger(99_840, "ppo CartPole-v1")
    logger.phase("compiling")
    logger.phase("training")
    logger.write(RECORD)
    logger.close()
    frames = _frames(out.getvalue())
    compiling = [f for f in frames if "compiling… 0s" in f]
    training = [f for f in frames if "training… 0s" in f]
    assert compiling and training, frames
    assert compiling[0].startswith("ppo CartPole-v1 ")
    assert frames.index(compiling[0]) < frames.index(training[0])
    assert "return" not in compiling[0] and "return 265.8" in frames[-1]


def test_the_phases_are_lines_in_a_log(capsys):
    logger = ConsoleLogger(99_840, "ppo CartPole-v1")  # stderr is not a terminal
    logger.phase("compiling")
    logger.phase("training")
    logger.write(RECORD)
    logger.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[:2] == [
        "ppo CartPole-v1: compiling…",
        "ppo CartPole-v1: training… (compiling took 0s)",
    ]
    assert "99,840/99,840" in lines[2] and len(lines) == 3


def test_counting_on_a_terminal_is_one_line_removed_at_the_end(monkeypatch):
    out = _terminal(monkeypatch, 80)
    with counting("drawing cartpole.gif", 500, "frames") as update:
        for done in (1, 250, 500):
            update(done)
            time.sleep(0.25)  # drawn ten times a second
    frames = _frames(out.getvalue())
    assert any("drawing cartpole.gif" in f and "250/500 frames" in f for f in frames)
    assert all(cell_len(f) <= 80 for f in frames)
    assert out.getvalue().endswith("\x1b[1A\x1b[2K")  # transient: line erased


def test_counting_in_a_log_is_a_line_per_quarter(capsys):
    with counting("drawing x.gif", 10, "frames") as update:
        for done in range(1, 11):
            update(done)
    assert capsys.readouterr().err.splitlines() == [
        "drawing x.gif: 10 frames…",
        "drawing x.gif: 3/10 frames",
        "drawing x.gif: 5/10 frames",
        "drawing x.gif: 8/10 frames",
        "drawing x.gif: 10/10 frames",
    ]


def test_the_notebook_display_says_the_phase_then_the_figures(monkeypatch):
    import IPython.display

    shown = []

    class Handle:
        def update(self, bundle, raw):
            shown.append(bundle["text/plain"])

    def display(bundle, raw, display_id):
        shown.append(bundle["text/plain"])
        return Handle()

    monkeypatch.setattr(IPython.display, "display", display)
    bar = NotebookProgress(99_840, "ppo CartPole-v1")
    bar.phase("compiling")
    bar.write(RECORD)
    assert shown[:2] == ["ppo CartPole-v1: starting…", "ppo CartPole-v1: compiling…"]
    assert "99,840/99,840" in shown[2] and "return 265.8" in shown[2]
