"""A sweep run's and a PBT member's records: one writer, counts as integers."""

import math

import numpy as np

from purejaxdrl.observe.curves import read_history
from purejaxdrl.sweeps.run_files import plain, write_records


def test_records_keep_counts_integers_and_write_nan_as_null(tmp_path):
    history = [
        # As `batch.record_chunk` makes them: counts are ints, metrics floats.
        {"env_steps": 1024, "updates": 4, "time": 1.5, "episode/mean_return": 20.0},
        {
            "env_steps": np.int64(2048),
            "updates": np.int32(8),
            "time": 3.0,
            "episode/mean_return": math.nan,
            "loss/total": np.float32("nan"),
            "grad_norm": math.inf,
            "learning_rate": np.float32(0.5),
        },
    ]
    file = tmp_path / "member-0000.jsonl"
    write_records(file, history)
    assert file.read_text() == (
        '{"env_steps": 1024, "updates": 4, "time": 1.5, "episode/mean_return": 20.0}\n'
        '{"env_steps": 2048, "updates": 8, "time": 3.0, "episode/mean_return": null, '
        '"loss/total": null, "grad_norm": null, "learning_rate": 0.5}\n'
    )
    back = read_history(file)
    assert [type(r["updates"]) for r in back] == [int, int]
    assert math.isnan(back[1]["episode/mean_return"])


def test_plain_turns_numpy_scalars_into_python_values():
    assert plain(np.float32("nan")) is None  # not a float: checked after .item()
    assert type(plain(np.int64(3))) is int
    assert plain((1, np.float64(math.inf))) == [1, None]
