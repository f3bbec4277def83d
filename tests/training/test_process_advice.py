"""What a multi-process run advises when it refuses or stops: commands that work.

Checked without processes: `jax.process_count` is faked where the advice
depends on it.
"""

import jax
import pytest

from purejaxdrl.training import run


@pytest.mark.parametrize(
    ("saved", "processes", "local", "fix"),
    [
        # Every process already has the 1 device the buffer needs: a machine
        # "with 1" device changed nothing; one process does.
        (1, 2, 1, "resume it as one process: drop --coordinator, --num-processes"),
        (6, 4, 2, "a number of processes that divides 6 (1, 2, 3 or 6); as one"),
        (4, 2, 4, "pass --devices 2"),
        (16, 1, 8, "this machine has 8 cpu device(s): resume it on a machine with 16"),
    ],
)
def test_a_refused_replay_resume_says_what_fits(
    monkeypatch, saved, processes, local, fix
):
    monkeypatch.setattr(jax, "process_count", lambda: processes)
    monkeypatch.setattr(jax, "local_device_count", lambda: local)
    assert fix in run._replay_fix(saved)
