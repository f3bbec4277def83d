"""The live progress line: fitted to the terminal, its key figures never cut."""

import io
import re
import sys
import time
import types

import pytest
from rich.cells import cell_len
from rich.console import Console

from purejaxdrl.observe import progress
from purejaxdrl.observe.progress import (
    MIN_BAR,
    ConsoleLogger,
    NotebookProgress,
    ProgressLine,
    counting,
    in_notebook,
)
from purejaxdrl.observe.progress_figures import (
    compact,
    duration,
    figures,
    progress_text,
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


class _Tty(io.StringIO):
    """A file that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _terminal(monkeypatch, columns: int) -> io.StringIO:
    """stderr as an 80-column terminal (what `Console(file=sys.stderr)` sees)."""
    out = _Tty()
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
    record["steps_per_second"] = 8 * RECORD["steps_per_second_per_device"]
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


def test_the_phases_are_lines_in_a_log(capsys, monkeypatch):
    # Made, compiling 1 s later, training 3 s after that: the test's clock, so
    # a stall of a loaded machine changes no line.
    clock = iter([0.0, 1.0, 4.0])
    fake = types.SimpleNamespace(monotonic=lambda: next(clock))
    monkeypatch.setattr(progress, "time", fake)
    logger = ConsoleLogger(99_840, "ppo CartPole-v1")  # stderr is not a terminal
    logger.phase("compiling")
    logger.phase("training")
    logger.write(RECORD)
    logger.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[:2] == [
        "ppo CartPole-v1: compiling…",
        "ppo CartPole-v1: training… (compiling took 3s)",
    ]
    assert "99,840/99,840" in lines[2] and len(lines) == 3


def test_force_color_off_a_terminal_still_gives_a_line_per_record(monkeypatch):
    # ipykernel's `!` commands and many CIs set FORCE_COLOR, which rich reads
    # as a terminal: a file got the live line as ~10 new lines a second
    # (nb21 #3). The file decides; the colours may stay.
    out = io.StringIO()
    monkeypatch.setattr(sys, "stderr", out)
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    logger = ConsoleLogger(99_840, "ppo CartPole-v1")
    logger.phase("compiling")
    time.sleep(0.3)  # a live display would redraw meanwhile
    logger.write(RECORD)
    logger.close()
    with counting("drawing x.gif", 4, "frames") as update:
        for done in range(1, 5):
            update(done)
            time.sleep(0.1)
    lines = STYLE.sub("", out.getvalue()).splitlines()
    assert len(lines) == 7 and "\r" not in out.getvalue(), lines
    assert lines[0] == "ppo CartPole-v1: compiling…"
    assert lines[2:] == [
        "drawing x.gif: 4 frames…",
        *(f"drawing x.gif: {n}/4 frames" for n in range(1, 5)),
    ]


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


def test_counting_in_a_notebook_is_one_display_updated_in_place(monkeypatch):
    # Not a line per quarter, each a new output stacked in the cell.
    import IPython.display

    from purejaxdrl.observe import progress

    displays, updates = [], []

    class Handle:
        def update(self, bundle, raw):
            updates.append(bundle["text/plain"])

    def display(bundle, raw, display_id):
        displays.append(bundle["text/plain"])
        return Handle()

    monkeypatch.setattr(IPython.display, "display", display)
    monkeypatch.setattr(progress, "in_notebook", lambda: True)
    with counting("drawing x.gif", 10, "frames") as update:
        for done in range(1, 11):
            update(done)
    assert displays == ["drawing x.gif: 10 frames…"]
    assert updates[-1] == "drawing x.gif: 10/10 frames"
    assert len(updates) <= 10


def test_a_notebook_count_is_throttled_ends_at_its_total_and_escapes_its_name(
    monkeypatch,
):
    # 21 frames: one update per 2 (20 at most, each a message to the notebook),
    # and the last frame shown although 21 is not a multiple of 2; the file
    # name goes into HTML escaped.
    import IPython.display

    from purejaxdrl.observe import progress

    updates = []

    class Handle:
        def update(self, bundle, raw):
            updates.append((bundle["text/plain"], bundle["text/html"]))

    monkeypatch.setattr(
        IPython.display, "display", lambda bundle, raw, display_id: Handle()
    )
    monkeypatch.setattr(progress, "in_notebook", lambda: True)
    with counting("drawing <x>&.gif", 21, "frames") as update:
        for done in range(1, 22):
            update(done)
    shown = [*range(2, 21, 2), 21]
    assert [text for text, _ in updates] == [
        f"drawing <x>&.gif: {n}/21 frames" for n in shown
    ]
    assert all(
        page.startswith("<b>drawing &lt;x&gt;&amp;.gif</b> ") for _, page in updates
    )


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


# What the fast suite let change (mutants7_M7A): each figure read from its own
# field, boundaries of the compact forms, which figure drops first.


def test_boundaries_of_the_compact_counts_and_durations():
    assert compact(10_000) == "10.0k"  # not "10,000", nor "10.00k"
    assert compact(9_999) == "9,999"
    # Three digits also where rounding reaches the next power of ten.
    assert [compact(x) for x in (9_999.6, 9_996_000, 99_960, 999_960)] == [
        "10.0k",
        "10.0M",
        "100k",
        "1.00M",
    ]
    assert [duration(s) for s in (59.6, 60, 3599, 3600)] == [
        "1m00s",  # rounded, not floored
        "1m00s",
        "59m59s",
        "1h00m",
    ]


def test_the_log_line_reads_each_figure_from_its_own_field():
    record = {
        "env_steps": 6_656,
        "steps_per_second": 800_000.4,
        "steps_per_second_per_device": 100_000.2,
        "episode/mean_return": 21.26,
        "eval/mean_return": 480.0,
        "eta_seconds": 125.4,
    }
    assert progress_text(record, 99_840, 8) == (
        "steps        6,656/99,840     800,000 steps/s (100,000/device x 8)  "
        "return     21.3  eval 480.0  ETA 125 s"
    )
    # No evaluation in this chunk, no episode ended: no eval figure, a dash.
    del record["eval/mean_return"]
    text = progress_text({**record, "episode/mean_return": float("nan")}, 99_840, 8)
    assert text.endswith("return        —  ETA 125 s"), text
    live = dict(figures(record, 99_840, 8))
    assert "(100k/device x 8)" in live and "800k steps/s" in live
    assert "eval" not in " ".join(live)
    nan = figures({"env_steps": 0, "episode/mean_return": float("nan")}, 10, 1)
    assert ("return —", False) in nan
    # One device: no per-device figure.
    one = {**record, "steps_per_second_per_device": record["steps_per_second"]}
    assert all("/device" not in text for text, _ in figures(one, 99_840, 1))


def test_after_a_resume_on_another_device_count_the_per_device_figure_says_so():
    # Saved on 2 devices, resumed on 4: 10,240 steps in 0.1514 s, of which
    # 0.0700 s on 2 devices and 0.0814 s on 4 (0.4656 device-seconds). Per
    # device-second: 21,993, not the 67,635 steps/s divided by 4 (16,909).
    record = {"env_steps": 10_240, "steps_per_second": 10_240 / 0.1514}
    record["steps_per_second_per_device"] = 10_240 / (0.07 * 2 + 0.0814 * 4)
    assert progress_text(record, 10_240, 4).startswith(
        "steps       10,240/10,240      67,635 steps/s (21,993/device-s over all "
        "sessions)  return"
    )
    assert "(22.0k/device-s over all sessions)" in dict(figures(record, 10_240, 4))
    # Resumed onto one device: the figure is shown, as it is no plain share.
    assert "(22.0k/device-s over all sessions)" in dict(figures(record, 10_240, 1))


def test_the_last_droppable_figure_drops_first():
    parts = [("a", False), ("BBBB", True), ("c", False), ("DDDD", True)]
    line = ProgressLine("d", 0, 1, parts)
    # All 16 cells of figures fit beside 1 of description, the 2 gaps and the
    # 8-cell minimum bar from 27 cells on; at 26 "DDDD" (the last droppable)
    # goes and the bar takes the rest: 26 - 1 - 2 - 10 = 13.
    assert line.fit(27) == ("d", 8, "a  BBBB  c  DDDD")
    assert line.fit(26) == ("d", 13, "a  BBBB  c")
    assert line.fit(12)[2] == "a  c"


def test_the_live_bar_follows_the_steps_done():
    console = Console(file=io.StringIO(), force_terminal=True, width=80)
    logger = ConsoleLogger(99_840, "ppo CartPole-v1", console=console)
    logger.write({**RECORD, "env_steps": 24_960})
    (task,) = logger._progress.tasks
    assert task.completed == 24_960 and task.percentage == 25.0
    logger.close()


def test_the_notebook_bar_is_the_steps_done_of_the_total(monkeypatch):
    import IPython.display

    shown = []

    class Handle:
        def update(self, bundle, raw):
            shown.append(bundle["text/html"])

    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: Handle())
    bar = NotebookProgress(99_840, "ppo <CartPole>")
    bar.write({**RECORD, "env_steps": 6_656})
    assert '<progress value="6656" max="99840"' in shown[-1]
    assert shown[-1].startswith("<b>ppo &lt;CartPole&gt;</b> ")


def test_only_a_jupyter_kernel_is_a_notebook(monkeypatch):
    import types

    shell = types.SimpleNamespace(config={})
    fake = types.SimpleNamespace(get_ipython=lambda: shell)
    monkeypatch.setitem(sys.modules, "IPython", fake)
    assert not in_notebook()  # a terminal IPython
    shell.config = {"IPKernelApp": {"connection_file": "x.json"}}
    assert in_notebook()
    fake.get_ipython = lambda: None  # imported, but no shell running
    assert not in_notebook()
    monkeypatch.delitem(sys.modules, "IPython")
    assert not in_notebook()


def test_a_description_too_short_to_read_is_left_out():
    # Cut to under 4 cells it gives way to the bar (no "p…" stub).
    shown = "1,000/10,000  500 steps/s  return 9.49  ETA 3s"
    line = ProgressLine("ppo CartPole-v1", 1000, 10000, ((shown, False),))
    for described in (1, 2, 3):
        width = cell_len(shown) + 2 + MIN_BAR + described
        assert line.fit(width)[0] == "", described
    assert line.fit(cell_len(shown) + 2 + MIN_BAR + 4)[0] == "ppo…"


def test_an_evaluation_return_of_zero_is_shown():
    # 0.0 is a result, not a missing one (`is not None`, not truthiness).
    record = {"env_steps": 100, "eval/mean_return": 0.0}
    assert "eval 0.0" in progress_text(record, 1000, 1)
