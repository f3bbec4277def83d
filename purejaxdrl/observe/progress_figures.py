"""The figures of a progress line: counts, durations, speeds, as text.

`progress_text` writes a record as one plain line (logs, notebooks);
`figures` gives the live line's compact figures, which `progress.ProgressLine`
fits to the terminal.
"""

import math
from typing import Any

from purejaxdrl.observe.numbers import return_text


def _fmt(x: float | None, spec: str) -> str:
    return (
        "—"
        if x is None or (isinstance(x, float) and math.isnan(x))
        else format(x, spec)
    )


def compact(x: float | None) -> str:
    """A count in at most ~5 characters: 9,984, 12.3k, 500k, 1.50M, 2.05G."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if round(abs(x)) < 10_000:
        return f"{x:,.0f}"
    for unit, scale in (("k", 1e3), ("M", 1e6), ("G", 1e9)):
        value = x / scale
        digits = 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0
        text = f"{value:.{digits}f}"
        if digits and len(text.lstrip("-").replace(".", "")) > 3:
            # Rounded up to the next power of ten (99.96 -> 100.0): 3 digits.
            text = f"{value:.{digits - 1}f}"
        if abs(float(text)) < 1000:
            return text + unit
    return f"{x / 1e12:.0f}T"


def duration(seconds: float | None) -> str:
    """Seconds as 42s, 3m05s or 2h07m; — when unknown."""
    if seconds is None or not math.isfinite(seconds):
        return "—"
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _shares(record: dict[str, Any], num_devices: int) -> bool:
    """Whether the per-device speed is the speed's share of `num_devices`.

    Not after a resume onto another device count: the record's figure is
    then per device-second over every session (each weighed by its devices),
    so "x N" would not multiply out to the steps/s beside it.
    """
    sps = record.get("steps_per_second")
    per_device = record.get("steps_per_second_per_device")
    if sps is None or per_device is None or not math.isfinite(sps * per_device):
        return True
    return math.isclose(sps / num_devices, per_device, rel_tol=1e-3)


def _per_device(record: dict[str, Any], num_devices: int, figure: str) -> str:
    """`(figure/device x 4)`, or `(figure/device-s over all sessions)`."""
    if _shares(record, num_devices):
        return f"({figure}/device x {num_devices})"
    return f"({figure}/device-s over all sessions)"


def progress_text(record: dict[str, Any], total_steps: int, num_devices: int) -> str:
    """A record as one plain line, every figure in full (logs, notebooks)."""
    sps = _fmt(record.get("steps_per_second"), ",.0f")
    per_device = _fmt(record.get("steps_per_second_per_device"), ",.0f")
    ret = return_text(record.get("episode/mean_return"))
    evaluated = record.get("eval/mean_return")
    text = (
        f"steps {record['env_steps']:>12,}/{total_steps:,}  "
        f"{sps:>10} steps/s {_per_device(record, num_devices, per_device)}  "
        f"return {ret:>8}"
    )
    if evaluated is not None:
        text += f"  eval {return_text(evaluated)}"
    eta = record.get("eta_seconds")  # none once a stop ends the run
    return text if eta is None else text + f"  ETA {_fmt(eta, '.0f')} s"


def figures(
    record: dict[str, Any] | None, total_steps: int, num_devices: int
) -> tuple[tuple[str, bool], ...]:
    """The live line's figures, compact: (text, may be dropped) pairs.

    Before the first record, every figure but the total is "—"; so is the
    ETA of a record without one (a run that a stop ends).
    """
    record = record or {}
    done = compact(record.get("env_steps", 0))
    # "steps" once, in steps/s: the count beside the bar is clear without it.
    parts = [(f"{done}/{compact(total_steps)}", False)]
    parts.append((f"{compact(record.get('steps_per_second'))} steps/s", False))
    if num_devices > 1 or not _shares(record, num_devices):
        per_device = compact(record.get("steps_per_second_per_device"))
        parts.append((_per_device(record, num_devices, per_device), True))
    parts.append((f"return {return_text(record.get('episode/mean_return'))}", False))
    if record.get("eval/mean_return") is not None:
        parts.append((f"eval {return_text(record['eval/mean_return'])}", True))
    parts.append((f"ETA {duration(record.get('eta_seconds'))}", False))
    return tuple(parts)
