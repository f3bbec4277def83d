"""Whole-state checkpoints: exact round trips, re-sharding, integrity, resume rules."""

import dataclasses
import threading
import weakref

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError
from purejaxdrl.parallel import make_mesh
from purejaxdrl.rng import make_key
from purejaxdrl.training import integrity
from purejaxdrl.training.checkpoint import Checkpointer
from purejaxdrl.training.faults import first_non_finite
from purejaxdrl.training.integrity import MANIFEST, NO_MANIFEST, verify
from purejaxdrl.training.packing import make_packer
from purejaxdrl.training.resume import config_changes, resume_config

pytestmark = pytest.mark.timeout(300)


def _config(algo: str = "impala") -> pjd.TrainConfig:
    # Everything a state can hold: lagged parameters (IMPALA), observation
    # statistics, typed keys, bool flags, int counters.
    config = pjd.load_preset("cartpole", algo).config
    return dataclasses.replace(
        config,
        num_envs=8,
        unroll_length=8,
        env=dataclasses.replace(config.env, normalize_observations=True),
        impala=dataclasses.replace(config.impala, policy_lag=2),
    )


def _experiment(config: pjd.TrainConfig, devices: int):
    exp = pjd.training.make_experiment(config, make_mesh(devices))
    abstract = jax.eval_shape(exp.runner.init, make_key(config.seed, config.rng_impl))
    return exp, abstract, exp.runner.shardings(abstract)


def _host(state) -> list[np.ndarray]:
    def raw(x):
        if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
            x = jax.random.key_data(x)
        return np.asarray(jax.device_get(x))

    return [raw(x) for x in jax.tree.leaves(state)]


def _assert_bitwise(a, b) -> None:
    for x, y in zip(_host(a), _host(b), strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)


def test_pack_unpack_is_exact_and_keeps_types():
    config = _config()
    exp, abstract, sh = _experiment(config, 1)
    state = exp.runner.init(make_key(0, config.rng_impl))
    state, _ = exp.runner.chunk(3)(state)
    pack, unpack, _ = make_packer(abstract, sh, exp.runner.mesh)
    packed = pack(state)
    # A few arrays, not one per leaf: per-env groups [B, K], shared groups [K].
    assert len(packed) <= 8 < len(jax.tree.leaves(state))
    assert all(v.shape[0] == config.num_envs for k, v in packed.items() if "env" in k)
    back = unpack(packed)
    assert jax.tree.structure(back) == jax.tree.structure(state)
    assert jax.eval_shape(lambda s: s, back) == jax.eval_shape(lambda s: s, state)
    _assert_bitwise(back, state)


def test_save_on_8_devices_restore_on_4_and_continue(tmp_path):
    config = _config()
    exp8, abstract8, sh8 = _experiment(config, 8)
    state = exp8.runner.init(make_key(0, config.rng_impl))
    state, _ = exp8.runner.chunk(2)(state)
    saved = _host(state)
    ck = Checkpointer(tmp_path, abstract8, sh8, exp8.runner.mesh)
    ck.save(2, ck.pack(state), {"updates": 2, "devices": 8})
    continued8, _ = exp8.runner.chunk(2)(state)  # donates `state`
    ck.close()
    assert (tmp_path / "2" / MANIFEST).is_file()

    exp4, abstract4, sh4 = _experiment(config, 4)
    ck4 = Checkpointer(tmp_path, abstract4, sh4, exp4.runner.mesh, read_only=True)
    restored = ck4.restore_latest()
    ck4.close()
    assert restored.step == 2 and restored.meta == {"updates": 2, "devices": 8}
    for x, y in zip(_host(restored.state), saved, strict=True):
        np.testing.assert_array_equal(x, y)
    # Actors re-split over 4 devices, learner replicated on them.
    env_ids = restored.state.actor.env_ids
    assert len(env_ids.sharding.device_set) == 4
    assert len(env_ids.addressable_shards) == 4
    assert env_ids.addressable_shards[1].data.tolist() == [2, 3]
    continued4, _ = exp4.runner.chunk(2)(restored.state)
    # The same run, up to floating-point reduction order (as 1 vs 8 devices).
    for x, y in zip(
        jax.tree.leaves(continued4.agent.params),
        jax.tree.leaves(continued8.agent.params),
        strict=True,
    ):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), atol=1e-5)


def test_keeps_the_newest_and_detects_corruption(tmp_path, monkeypatch):
    config = _config("ppo")
    exp, abstract, sh = _experiment(config, 1)
    state = exp.runner.init(make_key(0, config.rng_impl))
    ck = Checkpointer(tmp_path, abstract, sh, exp.runner.mesh, keep=2)
    for step in (1, 2, 3):
        state, _ = exp.runner.chunk(1)(state)
        ck.save(step, ck.pack(state), {"updates": step})
    ck.wait()
    assert ck.steps() == [2, 3]
    assert verify(tmp_path / "3") is None
    # A resume reads the metadata, then the state: the files are hashed once.
    hashed = []
    digest = integrity._digest
    monkeypatch.setattr(integrity, "_digest", lambda p: hashed.append(p) or digest(p))
    assert ck.newest_meta() == {"updates": 3}
    files = len(hashed)
    # Another checkpointer of the same folder (eval and export open two).
    other = Checkpointer(tmp_path, abstract, sh, exp.runner.mesh, read_only=True)
    assert files > 1 and other.restore_latest().step == 3
    other.close()
    assert len(hashed) == files
    # Flip bytes in the newest checkpoint's largest file.
    victim = max((tmp_path / "3").rglob("*"), key=lambda p: p.stat().st_size)
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))  # a write: hashed again, found corrupted
    assert "corrupted" in verify(tmp_path / "3")
    restored = ck.restore_latest()
    assert restored.step == 2
    assert len(restored.skipped) == 1 and "update 3 skipped" in restored.skipped[0]
    assert (tmp_path / "skipped" / "3").is_dir()  # set aside, not deleted
    assert ck.steps() == [2]
    ck.close()


def test_a_step_committed_before_its_manifest_restores_and_none_usable_refuses(
    tmp_path,
):
    # keep=1: orbax prunes step 1 as it commits step 2, before the manifest of
    # step 2 is written; a run killed between the two has only an unhashed 2.
    config = _config("ppo")
    exp, abstract, sh = _experiment(config, 1)
    state = exp.runner.init(make_key(0, config.rng_impl))
    ck = Checkpointer(tmp_path, abstract, sh, exp.runner.mesh, keep=1)
    for step in (1, 2):
        ck.save(step, ck.pack(state), {"updates": step})
    ck.wait()
    (tmp_path / "2" / MANIFEST).unlink()
    assert verify(tmp_path / "2") == NO_MANIFEST and ck.steps() == [2]
    assert ck.newest_meta() == {"updates": 2}
    restored = ck.restore_latest()
    assert restored.step == 2 and restored.skipped == []
    assert verify(tmp_path / "2") is None  # hashed once restored
    # None restorable: refused, nothing moved (a resume never silently
    # starts over); a read-only reader (eval, export) just says why.
    victim = max((tmp_path / "2").rglob("*"), key=lambda p: p.stat().st_size)
    victim.write_bytes(victim.read_bytes()[:-7])
    with pytest.raises(ConfigError, match=r"none of the checkpoints .*update 2 "
                       r"skipped: file .* corrupted.*move .* elsewhere"):  # fmt: skip
        ck.restore_latest()
    assert ck.steps() == [2] and not (tmp_path / "skipped").exists()
    ck.close()
    reader = Checkpointer(tmp_path, abstract, sh, exp.runner.mesh, read_only=True)
    restored = reader.restore_latest()
    reader.close()
    assert restored.step is None and "update 2 skipped" in restored.skipped[0]
    assert restored.misfits == 0  # damaged, not of another layout


def test_a_checkpoint_of_another_layout_is_refused_and_kept(tmp_path):
    config = _config("ppo")
    exp, abstract, sh = _experiment(config, 1)
    state = exp.runner.init(make_key(0, config.rng_impl))
    ck = Checkpointer(tmp_path, abstract, sh, exp.runner.mesh)
    ck.save(1, ck.pack(state), {"updates": 1})
    ck.close()
    # The same run with wider layers: its parameters no longer fit.
    wider = dataclasses.replace(
        config, network=dataclasses.replace(config.network, hidden_sizes=(96, 96))
    )
    other, abstract_w, sh_w = _experiment(wider, 1)
    reader = Checkpointer(tmp_path, abstract_w, sh_w, other.runner.mesh, read_only=True)
    restored = reader.restore_latest()
    reader.close()
    assert restored.step is None and len(restored.skipped) == 1
    assert restored.misfits == 1  # what eval's advice reads, not the line's words
    line = restored.skipped[0]
    assert "update 1 skipped: its state does not fit this run's" in line
    assert "saved, float32[" in line and "\n" not in line
    writer = Checkpointer(tmp_path, abstract_w, sh_w, other.runner.mesh)
    with pytest.raises(ConfigError, match="nothing was moved or deleted"):
        writer.restore_latest()
    # So is one the run stopped before hashing: its layout is read first too.
    manifest = (tmp_path / "1" / MANIFEST).read_bytes()
    (tmp_path / "1" / MANIFEST).unlink()
    with pytest.raises(ConfigError, match="does not fit this run's.*nothing was"):
        writer.restore_latest()
    (tmp_path / "1" / MANIFEST).write_bytes(manifest)
    writer.close()
    assert (tmp_path / "1" / MANIFEST).is_file()  # not set aside
    assert not (tmp_path / "skipped").exists()
    again = Checkpointer(tmp_path, abstract, sh, exp.runner.mesh, read_only=True)
    assert again.restore_latest().step == 1  # the run's own build still reads it
    again.close()


def _tiny_checkpointer(tmp_path, **kwargs):
    """A Checkpointer of a state {"w": float32[4]} and the state of step i."""
    mesh = jax.make_mesh((1,), ("data",))
    sharding = NamedSharding(mesh, P())
    abstract = {"w": jax.ShapeDtypeStruct((4,), np.float32)}
    ck = Checkpointer(tmp_path, abstract, {"w": sharding}, mesh, **kwargs)

    def state(i: int) -> dict:
        return {"w": jax.device_put(np.full(4, i, np.float32), sharding)}

    return ck, state


def _slow_writer(monkeypatch) -> tuple[list[int], threading.Event, threading.Event]:
    """Steps written, "first save started", and the event that lets it finish.

    The first save holds the writer until the test releases it: the saves
    asked for meanwhile find it busy, whatever the machine's load (its own
    release after 60 s only ends a test that failed before releasing it).
    """
    written, started, release = [], threading.Event(), threading.Event()
    save_now = Checkpointer._save_now

    def slow(self, step, packed, meta, metric):
        if not started.is_set():
            started.set()
            release.wait(timeout=60)
        save_now(self, step, packed, meta, metric)
        written.append(step)

    monkeypatch.setattr(Checkpointer, "_save_now", slow)
    return written, started, release


def test_a_save_that_finds_one_waiting_replaces_it_without_blocking(
    tmp_path, monkeypatch
):
    written, started, release = _slow_writer(monkeypatch)
    ck, state = _tiny_checkpointer(tmp_path)
    packed = {i: ck.pack(state(i)) for i in range(1, 6)}
    ck.save(1, packed.pop(1), {"updates": 1}, skippable=True)
    assert started.wait(timeout=60)  # the writer is busy with 1
    arrays = {i: weakref.ref(*packed[i].values()) for i in range(2, 6)}
    for i in range(2, 6):  # 2 waits, 3 replaces it, 4 replaces 3, 5 replaces 4
        ck.save(i, packed.pop(i), {"updates": i}, skippable=True)
    # Before, `save` 3 waited for the writer to finish 1 (60 s here); a few
    # seconds allow for a loaded machine's stalls.
    assert ck.waited < 5
    # The replaced saves' arrays are freed (the waiting one is held).
    assert [i for i, ref in arrays.items() if ref() is not None] == [5]
    release.set()
    ck.close()
    assert written == [1, 5] and ck.steps() == [1, 5]
    assert ck._writer.replaced == 3
    reader, _ = _tiny_checkpointer(tmp_path, read_only=True)
    restored = reader.restore_latest()
    reader.close()
    assert restored.step == 5 and restored.meta == {"updates": 5}
    np.testing.assert_array_equal(restored.state["w"], np.full(4, 5, np.float32))


def test_keep_best_writes_the_best_save_a_newer_one_would_replace(
    tmp_path, monkeypatch
):
    written, started, release = _slow_writer(monkeypatch)
    ck, state = _tiny_checkpointer(tmp_path, keep=1, keep_best=True)
    metrics = {1: 1.0, 2: 10.0, 3: 5.0, 4: 20.0, 5: 6.0, 6: float("nan"), 7: 7.0}
    ck.save(1, ck.pack(state(1)), {"updates": 1}, metrics[1], skippable=True)
    assert started.wait(timeout=60)
    for i in range(2, 8):
        ck.save(i, ck.pack(state(i)), {"updates": i}, metrics[i], skippable=True)
    # Waiting after each: [2*], [2*, 3], [4*] (a better one: 2 is no longer
    # the best), [4*, 5], [4*, 6], [4*, 7]; * the best so far, kept. One
    # that blocked would wait for the release (60 s).
    assert ck.waited < 5
    release.set()
    ck.close()
    assert written == [1, 4, 7]
    assert ck.steps() == [4, 7]  # the newest (keep=1) and the best


def test_keep_best_survives_a_reopen(tmp_path):
    # A resume reopens the folder: the best's return must come back from disk,
    # or the first save of the resumed run deletes it (only LatestN is left).
    ck, state = _tiny_checkpointer(tmp_path, keep=1, keep_best=True)
    for step, metric in [(1, 10.0), (2, 1.0)]:
        ck.save(step, ck.pack(state(step)), {"updates": step}, metric)
        ck.wait()
    ck.close()
    ck, state = _tiny_checkpointer(tmp_path, keep=1, keep_best=True)  # a resume
    assert ck.restore_latest().step == 2
    ck.save(3, ck.pack(state(3)), {"updates": 3}, 2.0)
    ck.close()
    assert ck.steps() == [1, 3]


def test_keep_best_backfills_the_returns_of_checkpoints_saved_without(tmp_path):
    # Saved before returns were written with each checkpoint (as keep_best
    # false still saves): the restored run's history holds them, the same
    # values the loop ranked its saves by.
    history = [
        {"updates": 1, "episode/mean_return": 10.0},
        {"updates": 2, "episode/mean_return": float("nan")},  # no episode ended
    ]
    ck, state = _tiny_checkpointer(tmp_path, keep=2)
    for step in (1, 2):
        meta = {"updates": step, "history": history[:step]}
        ck.save(
            step, ck.pack(state(step)), meta, history[step - 1]["episode/mean_return"]
        )
    ck.close()
    ck, state = _tiny_checkpointer(tmp_path, keep=1, keep_best=True)  # a resume
    assert ck.restore_latest().step == 2
    ck.save(3, ck.pack(state(3)), {"updates": 3}, 2.0)
    ck.close()
    assert ck.steps() == [1, 3]  # 1's return came from 2's history


def test_saves_a_next_one_replaces_are_freed_before_it_is_packed(tmp_path, monkeypatch):
    # The loop drops them before it packs its next due save (`ChunkLoop.
    # dispatch`): their device copies of the state are gone before that copy is
    # made, so keep_best holds no more copies than blocking saves once did.
    written, started, release = _slow_writer(monkeypatch)
    ck, state = _tiny_checkpointer(tmp_path, keep=1, keep_best=True)
    assert ck.drop_replaceable(None) is None  # nothing written, nothing waits
    ck.save(1, ck.pack(state(1)), {"updates": 1}, 1.0, skippable=True)
    assert started.wait(timeout=60)  # the writer is busy with 1
    packed = {i: ck.pack(state(i)) for i in (2, 3)}
    arrays = {i: weakref.ref(*packed[i].values()) for i in (2, 3)}
    ck.save(2, packed.pop(2), {"updates": 2}, 10.0, skippable=True)  # the best
    ck.save(3, packed.pop(3), {"updates": 3}, 5.0, skippable=True)
    assert [i for i, ref in arrays.items() if ref() is not None] == [2, 3]
    # 3 goes (any next save replaces it); 2, the best, waits; the newest
    # save still to be written is then 2, should the next never come.
    assert ck.drop_replaceable(3) == 2
    assert [i for i, ref in arrays.items() if ref() is not None] == [2]
    assert ck.drop_replaceable(2) == 2  # the pinned best is kept
    ck.save(4, ck.pack(state(4)), {"updates": 4}, 6.0, skippable=True)
    release.set()
    ck.close()
    assert written == [1, 2, 4]
    assert ck._writer.replaced == 1


def test_first_non_finite_names_the_earliest_update():
    metrics = {
        "episode/return_sum": np.array([np.nan, 1.0, 2.0]),  # never checked
        "loss/total": np.array([1.0, 2.0, np.inf]),
        "entropy": np.array([0.5, np.nan, np.nan]),
    }
    assert first_non_finite(metrics) == (
        "entropy",
        1,
        pytest.approx(np.nan, nan_ok=True),
    )
    assert first_non_finite({"loss/total": np.array([1.0])}) is None


def test_resume_rules(tmp_path):
    import yaml

    config = pjd.load_preset("cartpole").config
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(pjd.config.to_dict(config)))
    same, changes = resume_config(tmp_path, {"devices": 2, "checkpoint": {"keep": 5}})
    assert sorted(changes) == ["checkpoint.keep: 3 -> 5", "devices: 0 -> 2"]
    assert same.ppo == config.ppo
    with pytest.raises(pjd.ConfigError, match=r"ppo.learning_rate: 0.00025 -> 0.1"):
        resume_config(tmp_path, {"ppo": {"learning_rate": 0.1}})
    changed, _ = resume_config(
        tmp_path, {"ppo": {"learning_rate": 0.1}}, allow_changes=True
    )
    assert changed.ppo.learning_rate == 0.1
    with pytest.raises(pjd.ConfigError, match="cannot continue as impala"):
        resume_config(tmp_path, {"algo": "impala"}, allow_changes=True)
    assert config_changes(config, config) == []
