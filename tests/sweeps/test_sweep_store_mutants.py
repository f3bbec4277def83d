"""A sweep's checkpoints and records of batches, on small hand-made states.

Details the end-to-end sweep resume tests leave open (found by mutation
testing): a batch other than the first, a layout that changed, a finished
batch's divergences.
"""

import dataclasses
import json
import types

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from purejaxdrl.config import ConfigError
from purejaxdrl.sweeps import checkpoints as store_module
from purejaxdrl.sweeps.checkpoints import SweepStore
from purejaxdrl.sweeps.layout import Layout

pytestmark = pytest.mark.timeout(120)


def _result(runs: int) -> types.SimpleNamespace:
    return types.SimpleNamespace(
        histories=[[] for _ in range(runs)],
        diverged=[None] * runs,
        final_params=[None] * runs,
        final_stats=[None] * runs,
    )


def _states():
    mesh = jax.make_mesh((1,), ("sweep",), devices=jax.devices()[:1])
    runs = NamedSharding(mesh, P("sweep"))
    return mesh, {"w": jax.device_put(np.arange(4, dtype=np.float32), runs)}


def test_the_second_batch_restores_its_own_runs_records(tmp_path, monkeypatch):
    # Runs 2 and 3 form batch 1: the checkpoint's records are the batch's,
    # in batch order, and go back to those runs only.
    mesh, states = _states()
    store = SweepStore(tmp_path)
    saved = _result(4)
    saved.histories[2] = [{"updates": 1, "loss": 2.0}]
    saved.histories[3] = [{"updates": 1, "loss": 3.0}]
    saved.diverged[3] = 1
    checkpoint = store.open(0, 1, states, mesh)
    checkpoint.save(1, checkpoint.pack(states), saved, [2, 3])
    checkpoint.close()

    result = _result(4)
    result.histories[0] = [{"updates": 9}]  # another batch's, left alone
    checkpoint = store.open(0, 1, states, mesh)
    updates, back = checkpoint.restore(result, [2, 3], print)
    assert updates == 1
    np.testing.assert_array_equal(back["w"], states["w"])
    assert result.histories == [[{"updates": 9}], [], *saved.histories[2:]]
    assert result.diverged == [None, None, None, 1]
    # Finished: its run files and `.done` are written, its checkpoints gone.
    written = []
    monkeypatch.setattr(
        store_module, "write_run_files", lambda d, run, *a: written.append(run)
    )
    store.finish(0, 1, result, [2, 3], checkpoint)
    assert written == [2, 3]
    assert not (tmp_path / "checkpoints" / "p0-b1").exists()
    assert store.finished(0, 1) and not store.finished(0, 0)


def test_a_finished_batch_reads_back_its_runs_divergences(tmp_path, monkeypatch):
    store = SweepStore(tmp_path)
    (tmp_path / "checkpoints").mkdir()
    done = {"runs": [2, 3], "diverged": [None, 7]}
    (tmp_path / "checkpoints" / "p0-b1.done").write_text(json.dumps(done))
    monkeypatch.setattr(
        store_module, "read_run_files", lambda d, run: ([{"run": run}], run, None)
    )
    result = _result(4)
    store.load_finished(0, 1, result, [2, 3])
    assert result.diverged == [None, None, None, 7]
    assert result.histories[2:] == [[{"run": 2}], [{"run": 3}]]
    assert result.final_params[2:] == [2, 3]


def _saved(path, group: int, batch: int = 0) -> None:
    """Marks a batch as holding a saved checkpoint (a step's folder)."""
    (path / "checkpoints" / f"p{group}-b{batch}" / "2").mkdir(parents=True)


def test_a_resumed_sweep_keeps_its_batches_and_its_mesh(tmp_path):
    store = SweepStore(tmp_path)
    assert store.recorded_shape(0) is None  # not laid out yet
    first = Layout(
        sweep=2, data=2, batch_size=4, num_batches=3, run_bytes=10, device_bytes=99
    )
    assert store.layout(0, first) == first
    _saved(tmp_path, 0)
    # Another estimate on the same mesh: the recorded batches stand.
    again = dataclasses.replace(first, batch_size=2, num_batches=6)
    assert store.layout(0, again) == first
    # On this process's 8 devices: the recorded mesh on the first 4, said.
    assert store.recorded_shape(0) == (
        (2, 2),
        "resuming on 4 of 8 cpu devices: the sweep's checkpoints hold its 2 x 2 "
        "(sweep x data) layout.",
    )
    store.layout(1, dataclasses.replace(first, sweep=2, data=4))
    _saved(tmp_path, 1, 2)
    assert store.recorded_shape(1) == ((2, 4), None)  # all of them
    store.layout(2, dataclasses.replace(first, sweep=4, data=4))
    _saved(tmp_path, 2)
    with pytest.raises(ConfigError) as e:
        store.recorded_shape(2)
    assert str(e.value).startswith(
        f"{tmp_path}: this sweep was laid out on 4 x 4 (sweep x data) devices and "
        "this process sees 8; its checkpoints hold that layout, so resume it "
        "where at least 16 local devices are visible (on CPU: JAX_NUM_CPU_DEVICES"
        "=16 before the command; on GPUs: CUDA_VISIBLE_DEVICES naming 16, e.g. "
        "CUDA_VISIBLE_DEVICES=0,1,2,"
    )


def test_a_resume_refuses_a_budget_its_recorded_batches_do_not_fit(tmp_path):
    # sw21 #1: program 2's batches hold 2 runs per device of 3 KiB each; a
    # budget of one run per device is refused, naming them and the least
    # budget that fits; 6 KiB, or none, resumes.
    store = SweepStore(tmp_path)
    one = Layout(
        sweep=1, data=1, batch_size=1, num_batches=4, run_bytes=5, device_bytes=5
    )
    store.layout(0, one)
    two = dataclasses.replace(one, sweep=2, batch_size=4, run_bytes=3 * 2**10)
    store.layout(1, two)
    _saved(tmp_path, 1)
    store.check_budget(3, None)
    store.check_budget(3, 6 * 2**10)
    with pytest.raises(ConfigError) as e:
        store.check_budget(3, 6 * 2**10 - 1)
    assert str(e.value).startswith(
        f"{tmp_path}: program 2 of 3's checkpoints hold batches of 4 runs, 2 per "
        "device (~3 KiB each), more than a budget of 6 KiB per device holds; "
        "resume without --device-memory (device_memory=None in Python) where "
        "they fit, or with --device-memory 6KiB (device_memory=6144 in Python) "
        "or more"
    )


def test_only_what_a_program_saved_binds_its_recorded_batches(tmp_path):
    # rd21 #1: a layout is recorded before anything compiles. A sweep killed
    # in its first batch before any save, or a program that finished, is not
    # bound to it: a smaller budget is taken, and the group laid out again.
    store = SweepStore(tmp_path)
    big = Layout(
        sweep=2, data=1, batch_size=8, num_batches=2, run_bytes=2**10, device_bytes=0
    )
    small = dataclasses.replace(big, batch_size=4, num_batches=4)
    store.layout(0, big)
    assert not store.bound(0, 2)
    store.check_budget(1, 2**10)  # nothing saved: no refusal
    assert store.recorded_shape(0) is None  # a fresh mesh too
    assert store.layout(0, small) == small  # laid out again, and recorded
    # Some of its batches finished: bound; all of them: kept, but no budget
    # is checked against a program that needs no memory any more.
    root = tmp_path / "checkpoints"
    for b in range(3):
        (root / f"p0-b{b}.done").write_text("{}")
        assert store.bound(0, 4)
        with pytest.raises(ConfigError, match="cannot split its recorded batches"):
            store.check_budget(1, 2**10)
    (root / "p0-b3.done").write_text("{}")
    assert not store.bound(0, 4)
    store.check_budget(1, 2**10)
    assert store.layout(0, big) == small
    assert store.recorded_shape(0)[0] == (2, 1)
    # An opened batch folder with no step saved in it binds nothing.
    store.layout(1, big)
    (root / "p1-b0" / "2.orbax-checkpoint-tmp-1").mkdir(parents=True)
    store.check_budget(2, 1)
    _saved(tmp_path, 1, 1)
    assert store.bound(1, 2)
    with pytest.raises(ConfigError, match="program 2 of 2's checkpoints"):
        store.check_budget(2, 1)
