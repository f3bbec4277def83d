"""A count in a Jupyter cell's output: one display, updated in place.

`progress.counting`'s form in a kernel, as `NotebookProgress` is `train`'s: a
line printed per quarter would be a new output each, stacked in the cell.
"""

import contextlib
import html
import math
from collections.abc import Callable, Iterator

# Updates of the display at most: each is a message to the notebook.
_STEPS = 20


def _bundle(description: str, done: int, total: int, unit: str) -> dict[str, str]:
    """The display's plain text and its HTML twin (a bar), at `done` of `total`."""
    text = f"{done:,}/{total:,} {unit}" if done else f"{total:,} {unit}…"
    return {
        "text/plain": f"{description}: {text}",
        "text/html": (
            f"<b>{html.escape(description)}</b> "
            f'<progress value="{done}" max="{total}" '
            'style="width: 30%; vertical-align: middle"></progress> '
            f"<code>{html.escape(text)}</code>"
        ),
    }


@contextlib.contextmanager
def notebook_count(
    description: str, total: int, unit: str
) -> Iterator[Callable[[int], None]]:
    """Shows a count towards `total` in the cell; yields `update(done)`.

    Args:
      description: what is counted, e.g. "drawing out.gif".
      total: how many units in all.
      unit: their name, plural ("frames").

    """
    from IPython.display import display

    handle = display(_bundle(description, 0, total, unit), raw=True, display_id=True)
    every = max(1, math.ceil(total / _STEPS))

    def update(done: int) -> None:
        if done % every == 0 or done == total:
            handle.update(_bundle(description, done, total, unit), raw=True)

    yield update
