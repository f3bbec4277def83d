"""Checkpoint details the round-trip tests leave open: found by mutation testing.

Small states only (a few arrays), so each test takes well under a second or two.
"""

import json

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from purejaxdrl.config import ConfigError
from purejaxdrl.parallel import SWEEP_AXIS, make_sweep_mesh
from purejaxdrl.training import integrity
from purejaxdrl.training.checkpoint import Checkpointer, LayoutMisfit, saved_devices
from purejaxdrl.training.checkpoint_config import CheckpointConfig
from purejaxdrl.training.integrity import MANIFEST, verify, verify_once
from purejaxdrl.training.packing import make_packer

pytestmark = pytest.mark.timeout(120)


def test_checkpoint_config_accepts_every_0_and_keep_1_and_refuses_below():
    CheckpointConfig(every=0, keep=1).check()  # 0: only at the end and on a signal
    with pytest.raises(ConfigError, match=r"checkpoint.every=-1 must be >= 0") as e:
        CheckpointConfig(every=-1).check()
    # Checked for train, sweep and pbt alike: it said "chunks" and "0 saves
    # only at the end" to PBT (ready steps) and sweeps (a stop's save) too (sw19 #7).
    assert "a PBT run's after every N-th ready step" in str(e.value)
    assert "only when SIGINT/SIGTERM stops it and, in train, at the end" in str(e.value)
    with pytest.raises(ConfigError, match=r"checkpoint.keep=0 must be >= 1"):
        CheckpointConfig(keep=0).check()


def _mesh(devices: int = 1):
    return jax.make_mesh((devices,), ("data",), devices=jax.devices()[:devices])


@pytest.mark.parametrize("impl", ["rbg", "threefry2x32"])
def test_keys_of_any_implementation_round_trip_with_their_implementation(impl):
    # rbg keys hold 4 words, threefry keys 2: the unpacked key must be of the
    # saved implementation, with the same bits.
    mesh = _mesh()
    shared = NamedSharding(mesh, P())
    keys = jax.random.split(jax.random.key(7, impl=impl), 3)
    state = {"key": keys, "done": np.array([True, False, True])}
    abstract = jax.eval_shape(lambda s: s, state)
    pack, unpack, _ = make_packer(abstract, {"key": shared, "done": shared}, mesh)
    back = unpack(pack(state))
    assert back["key"].dtype == keys.dtype  # same implementation
    np.testing.assert_array_equal(
        jax.random.key_data(back["key"]), jax.random.key_data(keys)
    )
    assert back["done"].dtype == np.bool_
    np.testing.assert_array_equal(back["done"], state["done"])


def test_environment_leaves_stay_split_over_data_packed_and_unpacked():
    # [B, ...] leaves split over `data` pack into a [B, K] group per leading
    # size B, split the same way (each device saves and restores its own
    # environments), and come back with their own shardings.
    mesh = _mesh(2)
    split, shared = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    state = {
        "obs": jax.device_put(np.arange(24, dtype=np.float32).reshape(4, 3, 2), split),
        "t": jax.device_put(np.arange(4, dtype=np.float32), split),
        # A replay buffer's [capacity, ...] leaf: a group of its own size.
        "buffer": jax.device_put(np.arange(12, dtype=np.float32).reshape(6, 2), split),
        "w": jax.device_put(np.ones(5, np.float32), shared),
    }
    abstract = jax.eval_shape(lambda s: s, state)
    shardings = {"obs": split, "t": split, "buffer": split, "w": shared}
    pack, unpack, abstract_packed = make_packer(abstract, shardings, mesh)
    groups = {g: (a.shape, a.sharding.spec) for g, a in abstract_packed.items()}
    assert groups == {
        "split4_float32": ((4, 3 * 2 + 1), P("data")),
        "split6_float32": ((6, 2), P("data")),
        "shared_float32": ((5,), P()),
    }
    packed = pack(state)
    assert packed["split4_float32"].sharding.spec == P("data")
    back = unpack(packed)
    for name, x in state.items():
        assert back[name].sharding.is_equivalent_to(x.sharding, x.ndim), name
        np.testing.assert_array_equal(back[name], x)


def test_leaves_of_size_0_are_in_no_group_and_a_sweep_of_them_saves(tmp_path):
    # A sweep split over `sweep` has every leaf `[R, ...]` split; a MuJoCo
    # state's absent tendons `[R, B, 0]` come out of XLA replicated. Alone in
    # `shared_float32` they made a group of size 0, which orbax refuses to save
    # (sw19 #1: a SAC sweep on pendulum_swingup on 4 devices).
    mesh = make_sweep_mesh(4, 1)
    runs, shared = NamedSharding(mesh, P(SWEEP_AXIS)), NamedSharding(mesh, P())
    state = {
        "w": jax.device_put(np.arange(12, dtype=np.float32).reshape(4, 3), runs),
        "ten": jax.device_put(np.zeros((4, 2, 0), np.float32), shared),
        "active": jax.device_put(np.zeros((4, 2, 0), np.bool_), shared),
        "key": jax.device_put(jax.random.split(jax.random.key(1), (4, 0)), shared),
    }
    abstract = jax.eval_shape(lambda s: s, state)
    shardings = jax.tree.map(lambda x: x.sharding, state)
    pack, unpack, abstract_packed = make_packer(abstract, shardings, mesh)
    assert {g: a.shape for g, a in abstract_packed.items()} == {
        "sweep4_float32": (4, 3)
    }
    back = unpack(pack(state))
    assert jax.eval_shape(lambda s: s, back) == abstract
    np.testing.assert_array_equal(back["w"], state["w"])
    ck = Checkpointer(tmp_path, abstract, shardings, mesh)
    ck.save(1, ck.pack(state), {"updates": 1})
    ck.wait()  # raised CheckpointError ("Cannot save arrays with zero size")
    restored = ck.restore_latest()
    ck.close()
    assert restored.step == 1
    assert jax.eval_shape(lambda s: s, restored.state) == abstract
    np.testing.assert_array_equal(restored.state["w"], state["w"])


def _saved(tmp_path, steps=(1,)):
    """A Checkpointer of a small state, with `steps` saved, and the state."""
    mesh = _mesh()
    sharding = NamedSharding(mesh, P())
    state = {"w": np.arange(6, dtype=np.float32), "n": np.int32(3)}
    abstract = jax.eval_shape(lambda s: s, state)
    ck = Checkpointer(tmp_path, abstract, {"w": sharding, "n": sharding}, mesh, keep=5)
    for step in steps:
        ck.save(step, ck.pack(state), {"updates": step})
    ck.wait()
    return ck, state


def _truncate(step_dir) -> None:
    """Cuts the last byte off a checkpoint's largest file."""
    files = [p for p in step_dir.rglob("*") if p.is_file() and p.name != MANIFEST]
    victim = max(files, key=lambda p: p.stat().st_size)
    victim.write_bytes(victim.read_bytes()[:-1])


def test_every_file_of_a_checkpoint_is_hashed_and_a_missing_one_is_named(tmp_path):
    ck, _ = _saved(tmp_path)
    step_dir = tmp_path / "1"
    files = [p for p in sorted(step_dir.rglob("*")) if p.is_file()]
    names = {str(p.relative_to(step_dir)) for p in files} - {MANIFEST}
    ck.close()
    # The manifest lists every file orbax wrote (metadata, JSON, arrays).
    assert set(json.loads((step_dir / MANIFEST).read_text())) == names
    for p in files:
        if p.name == MANIFEST:
            continue
        good = p.read_bytes()
        p.write_bytes(good + b" ")  # one byte more: another digest
        assert verify(step_dir) == (
            f"file {p.relative_to(step_dir)} is corrupted (checksum mismatch)"
        )
        p.unlink()
        assert verify(step_dir) == f"file {p.relative_to(step_dir)} is missing"
        p.write_bytes(good)
        assert verify(step_dir) is None


def test_a_checkpoint_found_damaged_is_damaged_the_next_time_too(tmp_path):
    ck, _ = _saved(tmp_path)
    ck.close()
    step_dir = tmp_path / "1"
    assert verify_once(step_dir) is None
    _truncate(step_dir)
    first = verify_once(step_dir)
    assert first is not None and "corrupted" in first
    assert verify_once(step_dir) == first  # not remembered as whole
    integrity._WHOLE.pop(step_dir, None)


def test_a_step_damaged_again_is_set_aside_beside_the_earlier_copies(tmp_path):
    # A step saved and damaged three times: each copy is kept, 3, 3-2, 3-3.
    ck, state = _saved(tmp_path, steps=(1,))
    for _ in range(3):
        ck.save(3, ck.pack(state), {"updates": 3})
        ck.wait()
        _truncate(tmp_path / "3")
        restored = ck.restore_latest()
        assert restored.step == 1 and ck.steps() == [1]
    ck.close()
    kept = sorted(p.name for p in (tmp_path / "skipped").iterdir())
    assert kept == ["3", "3-2", "3-3"]
    assert "moved to" in restored.skipped[0] and restored.skipped[0].endswith("3-3")


@pytest.mark.parametrize(
    ("returns", "kept"),
    [
        ([float("nan"), 1.0, float("nan")], [2, 3]),
        ([1.0, float("nan"), float("nan")], [1, 3]),
    ],
)
def test_keep_best_never_keeps_a_save_without_a_finite_return(returns, kept, tmp_path):
    # NaN: no episode ended in the chunk; such a save is unranked, never the best.
    mesh = _mesh()
    sharding = NamedSharding(mesh, P())
    abstract = {"w": jax.ShapeDtypeStruct((2,), np.float32)}
    ck = Checkpointer(tmp_path, abstract, {"w": sharding}, mesh, keep=1, keep_best=True)
    for step, value in enumerate(returns, start=1):
        state = {"w": jax.device_put(np.full(2, step, np.float32), sharding)}
        ck.save(step, ck.pack(state), {"updates": step}, value)
        ck.wait()
    ck.close()
    assert ck.steps() == kept


def test_a_checkpoint_lacking_an_array_group_of_this_run_is_a_misfit(tmp_path):
    # A state of this build with a leaf of a dtype the saved one had none of:
    # that group is missing on disk, an intact checkpoint of another layout
    # (refused, kept), not a damaged one (set aside).
    ck, _ = _saved(tmp_path)
    ck.close()
    mesh = _mesh()
    sharding = NamedSharding(mesh, P())
    state = {"w": np.zeros(6, np.float32), "n": np.int32(3), "b": np.zeros(2, bool)}
    abstract = jax.eval_shape(lambda s: s, state)
    shardings = dict.fromkeys(state, sharding)
    writer = Checkpointer(tmp_path, abstract, shardings, mesh)
    assert writer.layout_difference(1) == "shared_uint8: none saved, uint8[2] here"
    with pytest.raises(LayoutMisfit, match="nothing was moved or deleted"):
        writer.restore_latest()
    writer.close()
    assert (tmp_path / "1").is_dir() and not (tmp_path / "skipped").exists()


def test_a_checkpoint_with_an_array_group_this_run_lacks_is_a_misfit(tmp_path):
    # The mirror of the test above: saved with a bool leaf (a shared_uint8
    # group on disk), read by a state without one. `layout_difference` looked
    # only at this run's groups, so the restore failed inside orbax and the
    # intact checkpoint was set aside as damaged.
    mesh = _mesh()
    sharding = NamedSharding(mesh, P())
    saved = {"w": np.arange(6, dtype=np.float32), "n": np.int32(3),
             "b": np.zeros(2, bool)}  # fmt: skip
    ck = Checkpointer(tmp_path, jax.eval_shape(lambda s: s, saved),
                      dict.fromkeys(saved, sharding), mesh)  # fmt: skip
    ck.save(1, ck.pack(saved), {"updates": 1})
    ck.wait()
    ck.close()
    here = {"w": np.zeros(6, np.float32), "n": np.int32(3)}
    reader = Checkpointer(tmp_path, jax.eval_shape(lambda s: s, here),
                          dict.fromkeys(here, sharding), mesh)  # fmt: skip
    try:
        assert reader.layout_difference(1) == "shared_uint8: uint8[2] saved, none here"
        with pytest.raises(LayoutMisfit, match="nothing was moved or deleted"):
            reader.restore_latest()
    finally:
        reader.close()
    assert (tmp_path / "1").is_dir() and not (tmp_path / "skipped").exists()


def test_saved_devices_reads_the_numerically_newest_step(tmp_path):
    # Steps 9 and 10, no manifests (an unhashed step counts as whole). Sorted
    # as text, "9" comes after "10", and a resume would size its devices from
    # update 9's meta (`newest_meta` feeds the `best` choice the same way).
    for step, devices in ((9, 2), (10, 4)):
        meta = tmp_path / "checkpoints" / str(step) / "meta"
        meta.mkdir(parents=True)
        (meta / "metadata").write_text(json.dumps({"devices": devices}))
    assert saved_devices(tmp_path) == 4


def test_a_spec_with_trailing_whole_axes_packs_with_the_others():
    # P("data", None) is P("data"): one group, not one per way of writing it.
    mesh = _mesh(2)
    split, split_too = (
        NamedSharding(mesh, P("data")),
        NamedSharding(mesh, P("data", None)),
    )
    state = {
        "a": jax.device_put(np.ones((4, 3), np.float32), split_too),
        "b": jax.device_put(np.zeros(4, np.float32), split),
    }
    abstract = jax.eval_shape(lambda s: s, state)
    pack, unpack, abstract_packed = make_packer(
        abstract, {"a": split_too, "b": split}, mesh
    )
    assert {g: a.shape for g, a in abstract_packed.items()} == {
        "split4_float32": (4, 4)
    }
    back = unpack(pack(state))
    np.testing.assert_array_equal(back["a"], state["a"])
