"""Drawing files leaves the caller's matplotlib backend and pyplot figures alone.

A notebook's figures show through its backend (Jupyter's inline one); a
helper that switched the process to Agg left every later figure of the
notebook blank, and `matplotlib.use` closes the caller's open figures too.
"""

import math
import pickle

import jax
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

from purejaxdrl.env.gymnax_env import GymnaxEnv
from purejaxdrl.observe import gif
from purejaxdrl.observe.plots import RETURN, drawn_curves, load_curves, plot_curves
from purejaxdrl.sweeps.pbt.lineage import ReadyStep
from purejaxdrl.sweeps.pbt.operators import ExploredField
from purejaxdrl.sweeps.pbt.plot import plot_pbt
from tests.observe.test_plots import _run_dir
from tests.sweeps.test_population import two_members

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def notebook():
    """The svg backend (standing in for a notebook's) with one figure open.

    Yields the open figures' numbers; the backend the tests started with is
    restored afterwards.
    """
    before = matplotlib.get_backend()
    matplotlib.use("svg")
    plt.figure()
    try:
        yield plt.get_fignums()
    finally:
        plt.close("all")
        matplotlib.use(before)


def _untouched(figures: list[int]) -> None:
    assert matplotlib.get_backend() == "svg"
    assert plt.get_fignums() == figures


def test_plot_curves_keeps_the_callers_backend_and_figures(notebook, tmp_path):
    run = _run_dir(tmp_path, "a", 0, 1e-3, [10, 20, 30])
    assert drawn_curves(plot_curves(load_curves([run]), tmp_path / "c.png")) == 1
    _untouched(notebook)
    assert (tmp_path / "c.png").read_bytes().startswith(PNG)


def test_plot_pbt_keeps_the_callers_backend_and_figures(notebook, tmp_path):
    # Two members, one explored field, one ready step: the least it draws.
    lineage = [
        ReadyStep(0, (0, 1), (math.nan, math.nan), {"learning_rate": (1e-3, 2e-3)}),
        ReadyStep(2, (1, 1), (5.0, 9.0), {"learning_rate": (3e-3, 2e-3)}),
    ]
    histories = [
        [{"updates": u, "env_steps": 10 * u, RETURN: base + u} for u in (1, 2, 3)]
        for base in (100, 200)
    ]
    fields = (ExploredField("learning_rate", "loguniform", 1e-4, 1e-2),)
    result = two_members(lineage, histories, fields)
    out = plot_pbt(result, tmp_path / "p.png")
    _untouched(notebook)
    assert out.read_bytes().startswith(PNG)


def _catch_frames() -> list[np.ndarray]:
    """gymnax's figure of three Catch states, as drawn for a GIF."""
    env = GymnaxEnv("Catch-bsuite")
    params = env.default_params
    _, state = env.env.reset(jax.random.key(0), params)
    states = [state]
    for action in (0, 2):
        key = jax.random.key(len(states))
        states.append(env.env.step(key, states[-1], action, params)[1])
    frames, _ = gif.gymnax_frames(env, states, np.array([0.0, 0.0, 1.0]))
    return [np.asarray(frame) for frame in frames]


def test_gymnax_figure_frames_keep_the_callers_backend_and_figures(notebook):
    frames = _catch_frames()
    _untouched(notebook)
    assert [f.shape for f in frames] == [(333, 400, 3)] * 3
    # The frames do not depend on the caller's backend: Agg's are the same.
    matplotlib.use("agg")
    for drawn, reference in zip(frames, _catch_frames(), strict=True):
        np.testing.assert_array_equal(drawn, reference)


def test_plot_curves_returns_a_figure_shown_inline_and_writes_no_file(
    notebook, tmp_path, monkeypatch
):
    # A notebook shows the figure itself, to restyle or save (nb21 #8): no file
    # to write and read back, and no pyplot to set up the inline backend.
    run = _run_dir(tmp_path, "a", 0, 1e-3, [10, 20, 30])
    monkeypatch.chdir(tmp_path)
    before = sorted(tmp_path.iterdir())
    fig = plot_curves(load_curves([run]), target=25)
    assert sorted(tmp_path.iterdir()) == before
    assert drawn_curves(fig) == 1 and len(fig.axes) == 2
    from IPython.core.formatters import PNGFormatter

    assert PNGFormatter()(fig).startswith(PNG)
    _untouched(notebook)
    # A figure kept or sent elsewhere pickles as a plain Figure does (rd21 #10).
    again = pickle.loads(pickle.dumps(fig))
    assert drawn_curves(again) == 1 and PNGFormatter()(again).startswith(PNG)
