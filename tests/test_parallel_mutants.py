"""Meshes, device counts and shardings, checked directly on the fake devices.

Gaps that mutation testing found: which devices a mesh takes, the sweep mesh's
shape and bounds, `varying` over several axes, the per-device count, who warns
and who is the main process.
"""

import types
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

from purejaxdrl.config import ConfigError
from purejaxdrl.parallel import (
    DATA_AXIS,
    SWEEP_AXIS,
    data_sharded,
    devices_to_use,
    is_main_process,
    make_mesh,
    make_sweep_mesh,
    per_device,
    replicated,
    varying,
)
from purejaxdrl.setup_warnings import SetupWarning, forget_warnings


def _ids(mesh) -> list:
    return np.vectorize(lambda d: d.id)(mesh.devices).tolist()


def test_a_mesh_takes_the_first_devices_by_id(monkeypatch):
    assert _ids(make_mesh(3)) == [0, 1, 2]
    assert make_mesh(3).axis_names == (DATA_AXIS,)
    # Every process sorts the global list: its order does not matter.
    shuffled = [jax.devices()[i] for i in (5, 2, 7, 0, 3, 6, 1, 4)]
    monkeypatch.setattr(jax, "devices", lambda: shuffled)
    assert _ids(make_mesh(3)) == [0, 1, 2]


def test_devices_to_use_refuses_zero_and_takes_all():
    with pytest.raises(ConfigError, match=r"devices=0 must be between 1 and the 4"):
        devices_to_use(0, [4], "cpu")
    assert devices_to_use(4, [4], "cpu") == 4
    assert devices_to_use(3, [4, 3], "cpu") == 3


def test_only_process_0_warns_of_uneven_hosts(monkeypatch):
    monkeypatch.setattr(jax, "process_index", lambda: 1)
    forget_warnings()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert devices_to_use(None, [2, 1], "cpu") == 1
    assert not [w for w in caught if issubclass(w.category, SetupWarning)]
    assert not is_main_process()
    monkeypatch.setattr(jax, "process_index", lambda: 0)
    assert is_main_process()
    forget_warnings()


def test_sweep_meshes_are_rows_of_data_devices():
    mesh = make_sweep_mesh(2, 3)
    assert mesh.axis_names == (SWEEP_AXIS, DATA_AXIS)
    assert dict(mesh.shape) == {SWEEP_AXIS: 2, DATA_AXIS: 3}
    assert _ids(mesh) == [[0, 1, 2], [3, 4, 5]]
    assert _ids(make_sweep_mesh(2, 4)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    for shape in ((0, 2), (2, 0), (3, 3)):
        with pytest.raises(
            ValueError,
            match=r"does not fit the 8 local devices; pass "
            r"sizes of at least 1 whose product is at most 8\.$",
        ):
            make_sweep_mesh(*shape)


def test_varying_marks_every_named_axis():
    mesh = make_sweep_mesh(2, 2)
    seen = {}

    def per_device(x):
        c = jnp.float32(2.0)  # a constant: invariant
        both = varying({"c": c}, (SWEEP_AXIS, DATA_AXIS))["c"]
        seen["both"] = set(jax.typeof(both).mat.varying)
        seen["data"] = set(jax.typeof(varying(c, DATA_AXIS)).mat.varying)
        return x + both

    out = jax.jit(
        jax.shard_map(
            per_device,
            mesh=mesh,
            in_specs=P(SWEEP_AXIS, DATA_AXIS),
            out_specs=P(SWEEP_AXIS, DATA_AXIS),
        )
    )(jnp.zeros((2, 2)))
    assert seen == {"both": {SWEEP_AXIS, DATA_AXIS}, "data": {DATA_AXIS}}
    np.testing.assert_array_equal(out, np.full((2, 2), 2.0))


def test_per_device_counts_and_placements(monkeypatch):
    mesh = make_mesh(8)
    assert per_device(16, mesh) == 2
    x = jax.device_put(jnp.arange(16.0), data_sharded(mesh))
    assert [s.data.shape for s in x.addressable_shards] == [(2,)] * 8
    y = jax.device_put(jnp.arange(16.0), replicated(mesh))
    assert [s.data.shape for s in y.addressable_shards] == [(16,)] * 8
    # 2 processes of 2 devices each: 8 environments are 2 per device.
    monkeypatch.setattr(jax, "process_count", lambda: 2)
    assert per_device(8, types.SimpleNamespace(shape={DATA_AXIS: 4})) == 2
