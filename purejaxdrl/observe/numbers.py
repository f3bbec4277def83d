"""Returns as printed: the one rule every line, summary and table uses.

A return of 10 or more in magnitude shows one decimal (500.0, -1234.5); a
smaller one shows three significant digits (9.49, 0.936, 0.0512), so a task
paying rewards in [0, 1] does not read as "1.0 ± 0.0" when it earns 0.936
over episodes of different lengths. A mean and its spread take the precision
of the larger of the two, so they print alike ("0.936 ± 0.031"). Tables of
them are `MarkdownTable`s, rendered as tables in a Jupyter cell.
"""

import math
from typing import Any

# Digits kept below 10: 0.936, not 0.9; and a floor for near-zero scales.
SIGNIFICANT, MAX_DECIMALS = 3, 6


def return_decimals(scale: float) -> int:
    """Decimals for returns of magnitude `scale`: 1 from 10 on, else 3 significant."""
    # Rounded to those digits first: 9.996 prints as 10.0, not 10.00.
    scale = abs(float(f"{scale:.{SIGNIFICANT}g}"))
    if not math.isfinite(scale) or scale >= 10 or scale == 0:
        return 1
    return min(MAX_DECIMALS, max(1, SIGNIFICANT - 1 - math.floor(math.log10(scale))))


def return_text(value: float | None, scale: float | None = None) -> str:
    """A return as printed; "—" for none (None or NaN: no episode ended).

    Args:
      value: the return (a mean, a std, one episode's).
      scale: what picks the precision (default: `value`), e.g. the larger of
        a mean and its std, so both print with the same decimals.

    Returns:
      e.g. "500.0", "21.3", "9.49", "0.936".

    """
    if value is None or math.isnan(value):
        return "—"
    value = float(value)
    return f"{value:.{return_decimals(value if scale is None else scale)}f}"


def mean_std_text(mean: float, std: float) -> str:
    """A mean return and its std as "mean ± std", with one precision for both."""
    scale = max((abs(x) for x in (mean, std) if math.isfinite(x)), default=0.0)
    return f"{return_text(mean, scale)} ± {return_text(std, scale)}"


class MarkdownTable(str):
    """A Markdown table, as its text: a Jupyter cell renders it as a table.

    A plain str shows in a cell as its escaped repr, one line (nb21 #7).
    IPython's terminal prints the text.
    """

    def _repr_markdown_(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))
