"""A PBT run stopped mid-way and resumed ends as the run straight through."""

import jax
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.sweeps.lineage import load_pbt
from purejaxdrl.sweeps.population import pbt, resume_pbt

pytestmark = pytest.mark.timeout(600)

SPACE = {"learning_rate": ("loguniform", 1e-4, 1e-2)}


class Stop(Exception):
    """Raised by a progress callback: the run stops there, as if killed."""


def _base(root):
    config = pjd.load_preset("cartpole").config  # PPO, 512 steps per update
    return pjd.apply_overrides(
        config,
        {
            "total_steps": config.steps_per_update * 6,
            "num_logs": 6,
            "devices": 4,
            "run_dir": str(root),
        },
    )


def _stop_at(line: str) -> None:
    if "update 5 of 6" in line:  # after the checkpoint of the ready step at 4
        raise Stop


def test_resume_gives_the_run_straight_through_bit_for_bit(tmp_path):
    kwargs = {"explore": SPACE, "population": 4, "ready": 2, "write_files": True}
    straight = pbt(_base(tmp_path / "straight"), **kwargs)
    with pytest.raises(Stop):
        pbt(_base(tmp_path / "stopped"), **kwargs, notify=_stop_at)
    (path,) = (tmp_path / "stopped").iterdir()
    assert sorted(p.name for p in (path / "checkpoints").iterdir())[-1] == "4"
    with pytest.raises(pjd.ConfigError, match="no pbt.yaml there"):
        resume_pbt(tmp_path)
    messages = []
    resumed = resume_pbt(path, notify=messages.append)
    assert "pbt: resumed at update 4" in messages
    assert resumed.lineage == straight.lineage
    for mine, theirs in zip(resumed.histories, straight.histories, strict=True):
        assert [{**r, "time": 0} for r in mine] == [{**r, "time": 0} for r in theirs]
    for i in range(4):
        jax.tree.map(
            np.testing.assert_array_equal,
            resumed.final_params[i],
            straight.final_params[i],
        )
    assert load_pbt(path).lineage == straight.lineage
    assert not (path / "checkpoints").exists()
    with pytest.raises(pjd.ConfigError, match="this PBT run finished"):
        resume_pbt(path)
