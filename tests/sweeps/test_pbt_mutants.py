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

from purejaxdrl.sweeps.batch import SweepStopped
from purejaxdrl.sweeps.pbt import train as pbt_train
from purejaxdrl.sweeps.pbt.lineage import (
    PBTResult,
    ReadyStep,
    lineage_rows,
    read_lineage,
)
from purejaxdrl.sweeps.pbt.operators import ExploredField, PBTConfig
from purejaxdrl.sweeps.pbt.store import PBTCheckpoint
from purejaxdrl.sweeps.pbt.train import _accumulate, _record_ready

pytestmark = pytest.mark.timeout(120)


def test_the_window_adds_each_chunks_summed_returns_and_counts():
    # 2 members, a chunk of 3 updates: the window adds every update's sums.
    window = (np.array([1.0, 0.0], np.float32), np.array([2.0, 0.0], np.float32))
    sums = np.array([[3.0, 0.0, 5.0], [0.0, 0.0, 0.0]], np.float32)
    counts = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 0.0]], np.float32)
    loss = np.float32([[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]])
    metrics = {"episode/return_sum": sums, "episode/count": counts, "loss": loss}
    (total, count), diverged = _accumulate(window, np.array([False, True]), metrics)
    np.testing.assert_array_equal(total, [1.0 + 3.0 + 5.0, 0.0])
    np.testing.assert_array_equal(count, [2.0 + 1.0 + 2.0, 0.0])
    # Member 1 diverged before and stays so; member 0 diverges in this chunk.
    np.testing.assert_array_equal(diverged, [False, True])
    loss[0, 2] = np.nan
    _, diverged = _accumulate(window, np.array([False, True]), metrics)
    np.testing.assert_array_equal(diverged, [True, True])


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


class _Store:
    """A stand-in PBTCheckpoint: what was saved, after which update."""

    def __init__(self):
        self.saved: list[tuple[int, bool]] = []  # (updates, with a window)

    def pack(self, hps, states):
        return states

    def save(self, updates, packed, result, window=None):
        assert packed == updates  # the states after that update
        self.saved.append((updates, window is not None))

    def close(self):
        pass


def _loop(stop_after: int | None, every: int, done: int = 0, store=None):
    """`_train_chunks`' inputs for 2 members, 8 chunks of 1 update, ready=2.

    The "states" are the updates trained; a chunk's members each end one
    episode of return 1 (member 0) or 2 (member 1). `stop_after`: the update
    whose record asks to stop (as SIGINT does), if any.
    """
    result = _result(population=2)
    result.config = PBTConfig(ready=2)
    hps = types.SimpleNamespace(learning_rate=np.array([1e-3, 2e-3], np.float32))
    zeros = np.zeros(2, np.float32)
    readies = []

    def chunk(hps, states):
        metrics = {
            "episode/return_sum": np.array([[1.0], [2.0]], np.float32),
            "episode/count": np.ones((2, 1), np.float32),
        }
        return states + 1, metrics

    def ready(key, hps, states, return_sum, count, diverged):
        readies.append((states, return_sum.tolist(), count.tolist(), key))
        parents = np.array([1, 1])
        return hps, states, parents, return_sum / count, diverged[parents]

    compiled = pbt_train._Compiled({1: chunk}, ready, {1: _accumulate})

    def stop():
        if stop_after is None:
            return None
        asked = any(r["updates"] >= stop_after for r in result.histories[0])
        return "SIGINT" if asked else None

    cfg = types.SimpleNamespace(
        num_updates=8, steps_per_update=4, checkpoint=types.SimpleNamespace(every=every)
    )
    loop = pbt_train._Loop(compiled, [1] * 8, jax.random.key(0), zeros, store, stop)
    live = pbt_train._Live(hps, done, (zeros, zeros), done, np.zeros(2, bool))
    return result, cfg, live, loop, readies


@pytest.mark.parametrize(
    ("stop_after", "every", "saved"),
    [
        (None, 1, [(2, False), (4, False), (6, False)]),  # none after the last
        (None, 2, [(4, False)]),  # every 2nd ready step
        (None, 0, []),
        (3, 1, [(2, False), (4, False)]),  # stopped after 4: its save holds it
        (2, 1, [(2, False), (3, True)]),  # stopped after 3: saved with its window
        (2, 0, [(3, True)]),
    ],
)
def test_the_chunk_loop_saves_at_ready_steps_and_once_at_a_stop(
    stop_after, every, saved
):
    store = _Store()
    result, cfg, live, loop, readies = _loop(stop_after, every, store=store)
    if stop_after is None:
        pbt_train._train_chunks(result, cfg, live, loop, print, None)
    else:
        with pytest.raises(SweepStopped, match=r"^stopped by SIGINT after update"):
            pbt_train._train_chunks(result, cfg, live, loop, print, None)
    assert store.saved == saved
    # Each ready step ranks the two chunks since the last one: 2 episodes each.
    assert all(r[1:3] == ([2.0, 4.0], [2.0, 2.0]) for r in readies)
    assert [r[0] for r in readies] == [2, 4, 6][: len(readies)]
    # Its key: the search key folded with the index of the chunk it follows.
    for updates, *_, key in readies:
        expected = jax.random.fold_in(jax.random.key(0), updates - 1)
        assert jax.random.key_data(key).tolist() == (
            jax.random.key_data(expected).tolist()
        )


def test_a_restored_population_trains_the_chunks_after_it_and_keeps_its_time():
    result, cfg, live, loop, readies = _loop(None, 0, done=4)
    result.histories = [[{"updates": 4, "time": 100.0}] for _ in range(2)]
    pbt_train._train_chunks(result, cfg, live, loop, print, None)
    assert live.states == 8 and [r[0] for r in readies] == [6]
    updates = [r["updates"] for r in result.histories[0]]
    assert updates == [4, 5, 6, 7, 8]
    assert all(r["time"] >= 100.0 for r in result.histories[0])


def test_a_damaged_newest_pbt_checkpoint_falls_back_to_the_one_before(tmp_path):
    # Two are kept, so that one damaged on disk leaves the one before it.
    mesh, hps, states = _population(2)
    store = PBTCheckpoint(tmp_path, hps, states, mesh)
    for updates in (2, 4):
        store.save(updates, store.pack(hps, states), _result(2))
    store.close()
    (tmp_path / "checkpoints" / "4" / "_CHECKPOINT_METADATA").unlink()
    said = []
    store = PBTCheckpoint(tmp_path, hps, states, mesh)
    restored = store.restore(_result(2), said.append)
    store.close()
    assert restored[0] == 2
    assert len(said) == 1 and said[0].startswith("pbt: checkpoint at update 4 skip")
