"""A suite's table: rows of figures, printed as they come, written as JSON and Markdown.

`Row` is one line (what ran, its figures over repeats, a note); `Report`
gathers them with the machine's record, saves as it goes and finishes with
the Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .machine import describe_machine, machine_line
from .timing import Figures, spread


@dataclass
class Row:
    """One line of a table: what ran, its figures over repeats, and a note."""

    row: str
    name: str
    runs: list[Figures]
    note: str = ""

    def medians(self) -> Figures:
        keys = self.runs[0] if self.runs else {}
        return {k: statistics.median(r[k] for r in self.runs) for k in keys}


class Report:
    """Rows gathered by a suite; printed as they come, written as JSON and Markdown."""

    def __init__(self, title: str, machine: Mapping[str, Any] | None = None):
        self.title = title
        self.machine = dict(machine or describe_machine())
        self.rows: list[Row] = []
        self.skipped: list[tuple[str, str]] = []
        self._status: list[str] = []  # per skipped entry: "not run", "failed"...
        self._save_to: tuple[str | None, str | None] = (None, None)
        self._start = time.perf_counter()
        print(f"{title}\n{machine_line(self.machine)}", flush=True)

    def save_as_it_goes(self, json_path: str | None, markdown_path: str | None) -> None:
        """From now on, every line added or skipped rewrites the files.

        A suite killed mid-row (an allocation's end) then keeps every line
        printed before the kill, not only the rows it finished.
        """
        self._save_to = (json_path, markdown_path)

    def add(self, row: str, name: str, runs: list[Figures], note: str = "") -> Row:
        """Adds a line and prints it (and saves it: `save_as_it_goes`)."""
        line = Row(row, name, runs, note)
        self.rows.append(line)
        print(f"  {name:<40} {_cells(line)}{'  ' + note if note else ''}", flush=True)
        self._autosave()
        return line

    def skip(self, row: str, why: str, status: str = "not run") -> None:
        """Records a row (or part of one) that did not run, and why.

        Printed, kept and saved. `status` says what happened: "not run",
        "failed", "interrupted", or for a row whose peer alone failed,
        "our side ran; the peer failed" (`failed_rows` lists those too).
        """
        self.skipped.append((row, why))
        self._status.append(status)
        print(f"  [{row}] {status}: {why}", flush=True)
        self._autosave()

    def failed_rows(self) -> list[tuple[str, str]]:
        """(row, "" or "in part" where only a peer's side failed), each once."""
        failed = {
            row: "" if status == "failed" else "in part"
            for (row, _), status in zip(self.skipped, self._status, strict=True)
            if "failed" in status
        }
        return list(failed.items())

    def _autosave(self) -> None:
        if any(self._save_to):
            self.write(*self._save_to)

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "machine": self.machine,
            "rows": [
                {
                    "row": r.row,
                    "name": r.name,
                    "note": r.note,
                    "runs": r.runs,
                    "median": r.medians(),
                }
                for r in self.rows
            ],
            "skipped": [
                {"row": row, "status": status, "why": why}
                for (row, why), status in zip(self.skipped, self._status, strict=True)
            ],
        }

    def to_markdown(self) -> str:
        lines = [f"### {self.title}", "", machine_line(self.machine), ""]
        lines += ["| row | run | figures (median [min-max] over repeats) | note |"]
        lines += ["|---|---|---|---|"]
        for r in self.rows:
            lines.append(f"| {r.row} | {r.name} | {_cells(r)} | {r.note} |")
        for (row, why), status in zip(self.skipped, self._status, strict=True):
            lines.append(f"| {row} | {status} | | {why} |")
        return "\n".join(lines) + "\n"

    def finish(self, args: argparse.Namespace) -> Report:
        """Writes the report where `args.json` / `args.markdown` say, and prints it.

        The machine's record gains `total_s`: the seconds since the report began.
        """
        self.machine["total_s"] = round(time.perf_counter() - self._start, 1)
        self.write(args.json, args.markdown)
        print("\n" + self.to_markdown(), flush=True)
        return self

    def write(self, json_path: str | None, markdown_path: str | None) -> None:
        """Writes the report where asked (either path may be None).

        The load average is sampled again: a figure measured under load the
        suite did not cause shows as a load before it.
        """
        self.machine["load_average_after"] = round(os.getloadavg()[0], 2)
        if json_path:
            _replace(json_path, json.dumps(self.to_json(), indent=1))
        if markdown_path:
            _replace(markdown_path, self.to_markdown())


def _replace(path: str, text: str) -> None:
    # Written beside, then renamed over: a kill mid-write (the suite saves
    # while it runs) leaves the previous file whole, never half of one.
    partial = f"{path}.partial"
    with open(partial, "w") as f:
        f.write(text)
    os.replace(partial, path)


def _cells(row: Row) -> str:
    if not row.runs:
        return ""
    parts = []
    for key in row.runs[0]:
        values = [r[key] for r in row.runs]
        s = spread(values)
        cell = f"{key} {_fmt(s['median'])}"
        if len(values) > 1:
            cell += f" [{_fmt(s['min'])}-{_fmt(s['max'])}]"
        parts.append(cell)
    return ", ".join(parts)


def _fmt(x: float) -> str:
    if isinstance(x, int):  # a count: no decimals
        return f"{x:,}"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}"
