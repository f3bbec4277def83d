"""A chunk's records: one per real run, and the update where a run diverged."""

import math

import numpy as np

import purejaxdrl as pjd
from purejaxdrl.sweeps.batch import record_chunk
from purejaxdrl.sweeps.result import SweepResult
from purejaxdrl.sweeps.spec import make_plan

BASE = pjd.load_preset("cartpole").config  # 4 envs x 128 steps = 512 per update


def test_record_chunk_by_hand():
    plan = make_plan(BASE, seeds=5)
    result = SweepResult(plan, [[] for _ in range(5)], [None] * 5, [None] * 5)
    # Batch rows: runs 4 and 1, then a padding copy whose values are dropped.
    host = {
        "loss": np.array([[1.0, 3.0], [2.0, np.nan], [np.inf, np.inf]]),
        "episode/count": np.array([[1, 1], [0, 0], [0, 0]]),
        "episode/return_sum": np.array([[10.0, 20.0], [0, 0], [0, 0]]),
        "episode/length_sum": np.array([[5.0, 7.0], [0, 0], [0, 0]]),
    }
    # A chunk of 2 updates ending at update 6: updates 5 and 6.
    record_chunk(result, [4, 1], host, 2, 6, 1.5, BASE)
    assert result.histories[4] == [
        {
            "env_steps": 6 * 512,
            "updates": 6,
            "time": 1.5,
            "loss": 2.0,
            "episode/count": 2.0,
            "episode/mean_return": 15.0,
            "episode/mean_length": 6.0,
        }
    ]
    (record,) = result.histories[1]
    assert math.isnan(record["loss"]) and math.isnan(record["episode/mean_return"])
    # Run 1's loss went NaN at the chunk's second update: update 6.
    assert result.diverged == [None, 6, None, None, None]
    assert result.histories[0] == result.histories[2] == []
    # A later chunk does not move the first divergence.
    record_chunk(result, [4, 1], host, 2, 8, 3.0, BASE)
    assert result.diverged[1] == 6 and len(result.histories[1]) == 2
