"""A matplotlib Figure that a Jupyter cell shows as a PNG, pyplot or not.

A Figure made without pyplot shows as `<Figure size ...>` text in a kernel
whose inline backend pyplot's import never set up (nb21 #8). A module of its
own, imported on first use (matplotlib is an optional extra), and at module
level so that a figure pickles as a plain Figure does.
"""

import io

from matplotlib.figure import Figure


class InlineFigure(Figure):
    """A Figure with `_repr_png_`: Jupyter draws it inline."""

    def _repr_png_(self) -> bytes:
        png = io.BytesIO()
        self.savefig(png, format="png")
        return png.getvalue()
