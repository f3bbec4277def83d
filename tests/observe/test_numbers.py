"""How a return is printed: one precision rule, used by every line that shows one.

Returns of 10 or more keep the one decimal they always had (500.0); smaller
ones show three significant digits, so that a task paying rewards in [0, 1]
does not print 0.936 as "1.0 ± 0.0" (a reviewer's environment: episodes of
3-8 steps at -0.01 a step and +1 at the goal).
"""

import math
import types

import numpy as np
import pytest

from purejaxdrl.cli.eval import summary_line
from purejaxdrl.cli.train import _mean_return
from purejaxdrl.observe.numbers import mean_std_text, return_text
from purejaxdrl.observe.progress import figures, progress_text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (500.0, "500.0"),  # as before: one decimal from 10 on
        (21.34, "21.3"),
        (-1234.56, "-1234.6"),
        (10.0, "10.0"),
        (9.487, "9.49"),  # three significant digits below 10
        (-3.0, "-3.00"),
        (0.9357, "0.936"),
        (0.05123, "0.0512"),
        (9.996, "10.0"),  # rounds to 10: one decimal, not "10.00"
        (0.0, "0.0"),
        (1e-9, "0.000000"),  # at most six decimals
        (np.float32(0.25), "0.250"),
        (math.nan, "—"),  # no episode ended
        (None, "—"),
    ],
)
def test_a_return_keeps_three_significant_digits_below_10(value, text):
    assert return_text(value) == text


def test_a_mean_and_its_std_share_the_larger_ones_precision():
    assert mean_std_text(0.936, 0.034) == "0.936 ± 0.034"
    assert mean_std_text(500.0, 0.0) == "500.0 ± 0.0"  # as before
    assert mean_std_text(0.002, 0.9) == "0.002 ± 0.900"  # the spread's scale
    assert mean_std_text(21.5, math.nan) == "21.5 ± —"  # one seed: no std
    assert return_text(0.5, scale=50.0) == "0.5"


def test_small_returns_show_in_eval_summary_and_progress_lines():
    config = types.SimpleNamespace(algo="ppo", env=types.SimpleNamespace(id="C"))
    # Returns 1 - 0.01 * (length - 1) for lengths 3, 5, 8, 8 (+1 at the goal,
    # -0.01 on every other step): 0.98, 0.96, 0.93, 0.93; mean 0.95,
    # population std sqrt((.03^2 + .01^2 + .02^2 + .02^2) / 4) = 0.0212.
    returns = np.array([0.98, 0.96, 0.93, 0.93])
    line = summary_line(config, 58, returns, np.array([3, 5, 8, 8]))
    assert "mean return 0.950 ± 0.021 (std) over 4 episode(s)" in line
    assert _mean_return(0.9357, 4096) == "0.936"
    record = {
        "env_steps": 100,
        "episode/mean_return": 0.9357,
        "eval/mean_return": 0.95,
    }
    assert "return    0.936  eval 0.950" in progress_text(record, 1000, 1)
    shown = figures(record, 1000, 1)
    assert ("return 0.936", False) in shown and ("eval 0.950", True) in shown
