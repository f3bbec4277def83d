"""PBT's window of returns and its checkpoints' records, on small hand-made states.

Details the end-to-end resume tests leave open (found by mutation testing).
"""

import math
import types

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from purejaxdrl.sweeps.lineage import PBTResult, ReadyStep, lineage_rows, read_lineage
from purejaxdrl.sweeps.pbt_operators import ExploredField, PBTConfig
from purejaxdrl.sweeps.pbt_store import PBTCheckpoint
from purejaxdrl.sweeps.pbt_train import _accumulate, _record_ready

pytestmark = pytest.mark.timeout(120)


def test_the_window_adds_each_chunks_summed_returns_and_counts():
    # 2 members, a chunk of 3 updates: the window adds every update's sums.
    window = (np.array([1.0, 0.0], np.float32), np.array([2.0, 0.0], np.float32))
    sums = np.array([[3.0, 0.0, 5.0], [0.0, 0.0, 0.0]], np.float32)
    counts = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 0.0]], np.float32)
    total, count = _accumulate(window, sums, counts)
    np.testing.assert_array_equal(total, [1.0 + 3.0 + 5.0, 0.0])
    np.testing.assert_array_equal(count, [2.0 + 1.0 + 2.0, 0.0])


def _result(population: int = 3) -> PBTResult:
    field = ExploredField(name="learning_rate", kind="loguniform", low=1e-4, high=1e-2)
    return PBTResult(
        base=types.SimpleNamespace(steps_per_update=512),
        fields=(field,),
        config=PBTConfig(),
        population=population,
        histories=[[] for _ in range(population)],
        diverged=[None] * population,
        lineage=[],
        final_params=[None] * population,
    )


def _population(size: int):
    mesh = jax.make_mesh((1,), ("sweep",), devices=jax.devices()[:1])
    members = NamedSharding(mesh, P("sweep"))
    hps = {"learning_rate": jax.device_put(np.full(size, 1e-3, np.float32), members)}
    states = {"w": jax.device_put(np.arange(size * 2, dtype=np.float32), members)}
    return mesh, hps, states


def test_a_pbt_checkpoint_restores_records_divergences_lineage_and_window(tmp_path):
    mesh, hps, states = _population(3)
    saved = _result()
    saved.histories = [
        [{"updates": 2, "episode/mean_return": float(i)}] for i in range(3)
    ]
    saved.diverged = [None, 2, None]
    saved.lineage = [
        ReadyStep(0, (0, 1, 2), (math.nan,) * 3, {"learning_rate": (1e-3,) * 3}),
        ReadyStep(2, (0, 0, 2), (5.0, math.nan, 1.5), {"learning_rate": (1e-3,) * 3}),
    ]
    # A stop mid-window: the return sums and counts since the ready step at 2.
    window = (np.array([7.5, 0.0, 1.0], np.float32), np.array([3, 0, 1], np.float32))
    store = PBTCheckpoint(tmp_path, hps, states, mesh)
    store.save(3, store.pack(hps, states), saved, window=window)
    store.close()

    result = _result()
    store = PBTCheckpoint(tmp_path, hps, states, mesh)
    updates, hps_back, states_back, (sums, counts) = store.restore(result, print)
    store.close()
    assert updates == 3
    assert result.histories == saved.histories
    assert result.diverged == [None, 2, None]
    assert result.lineage[1] == saved.lineage[1]
    assert math.isnan(result.lineage[0].scores[0]) and len(result.lineage) == 2
    np.testing.assert_array_equal(sums, window[0])
    np.testing.assert_array_equal(counts, window[1])
    assert sums.dtype == counts.dtype == np.float32
    np.testing.assert_array_equal(states_back["w"], states["w"])
    np.testing.assert_array_equal(hps_back["learning_rate"], hps["learning_rate"])


def test_a_pbt_checkpoint_saved_at_a_ready_step_restores_an_empty_window(tmp_path):
    mesh, hps, states = _population(4)
    store = PBTCheckpoint(tmp_path, hps, states, mesh)
    store.save(2, store.pack(hps, states), _result())
    store.close()
    store = PBTCheckpoint(tmp_path, hps, states, mesh)
    _, _, _, (sums, counts) = store.restore(_result(), print)
    store.close()
    np.testing.assert_array_equal(sums, np.zeros(4, np.float32))
    np.testing.assert_array_equal(counts, np.zeros(4, np.float32))


def test_a_ready_step_of_a_padded_population_records_its_members_only():
    # 3 members padded to 4 (a multiple of the devices): the padding's parent,
    # score and value are not the lineage's. A NaN score (no episode ended)
    # and a float32 value read back from lineage.json as recorded: 1e-3, not
    # float32(1e-3)'s 0.0010000000474974513.
    result = _result(population=3)
    result.diverged = [None, 4, None]
    step = (
        6,
        np.array([1, 1, 2, 0]),
        np.array([np.nan, 2.5, 1.0, 7.0], np.float32),
        {"learning_rate": np.array([1e-3, 2e-3, 5e-4, 0.1], np.float32)},
    )
    _record_ready(result, step, print)
    (ready,) = result.lineage
    assert ready.updates == 6 and ready.parents == (1, 1, 2)
    assert ready.values == {"learning_rate": (1e-3, 2e-3, 5e-4)}
    assert math.isnan(ready.scores[0]) and ready.scores[1:] == (2.5, 1.0)
    assert read_lineage(lineage_rows(result), ["learning_rate"]) == [ready]
    assert result.diverged == [4, 4, None]  # member 0 copied member 1
