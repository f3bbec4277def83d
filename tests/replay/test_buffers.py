"""Uniform, prioritised and sequence buffers: order, frequencies, weights, shards."""

import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

from purejaxdrl.agents.replay_sizes import replay_shard_sizes, stored_items
from purejaxdrl.parallel import DATA_AXIS, make_mesh
from purejaxdrl.replay import (
    importance_weights,
    make_prioritised_buffer,
    make_sequence_buffer,
    make_uniform_buffer,
    sum_tree,
)


def _items(start, n):
    ids = jnp.arange(start, start + n, dtype=jnp.int32)
    return {"id": ids, "obs": jnp.stack([ids, -ids], axis=1).astype(jnp.float32)}


@pytest.mark.parametrize("jit", [False, True])
def test_stored_items_counts_adds_up_to_capacity_without_overflow(jit):
    count = jax.jit(stored_items, static_argnums=(1, 2)) if jit else stored_items
    per_update, capacity = 4096, 1_000_000
    # By hand: (step + 1) * 4096 items until the 1e6 capacity; 244 adds hold
    # 999,424, the 245th fills it. At step 2^31 // 4096 = 524,288 the product
    # (step + 1) * 4096 is 2^31 + 4096, past int32: it must still be 1e6.
    cases = {0: 4096, 243: 999_424, 244: 1_000_000, 10_000: 1_000_000,
             2**31 // per_update: 1_000_000, 2**31 - 2: 1_000_000}  # fmt: skip
    for step, items in cases.items():
        stored = count(jnp.int32(step), per_update, capacity)
        assert stored.dtype == jnp.int32 and int(stored) == items, (step, stored)
    # A capacity that is not a multiple of the items per update.
    assert int(count(jnp.int32(2**30), 3, 10)) == 10
    assert int(count(jnp.int32(2), 3, 10)) == 9


def test_replay_sizes_that_do_not_split_name_the_values_that_do():
    sizes = types.SimpleNamespace(buffer_size=256, batch_size=30, min_replay=64)
    assert replay_shard_sizes("dqn", sizes, 2) == (128, 15, 32)
    with pytest.raises(ValueError) as error:
        replay_shard_sizes("dqn", sizes, 4)
    assert str(error.value) == (
        "dqn.batch_size=30 must be a positive multiple of the 4 devices it is "
        "split over; use --dqn.batch-size 28 or 32 (dqn.batch_size=28 in Python), "
        "or --devices 2 (devices=2 in Python)."
    )
    with pytest.raises(
        ValueError,
        match=r"min_replay=3 .*\(dqn.min_replay=4 in Python\), or --devices 1 "
        r"\(devices=1 in Python\)\.$",
    ):
        replay_shard_sizes("dqn", types.SimpleNamespace(**{**vars(sizes),
                           "batch_size": 32, "min_replay": 3}), 4)  # fmt: skip


def test_fifo_overwrites_the_oldest_first():
    buffer = make_uniform_buffer(capacity=5, batch_size=4)
    state = buffer.init({"id": jnp.int32(0), "obs": jnp.zeros(2)})
    state = buffer.add(state, _items(0, 2))
    assert int(state.size[0]) == 2 and int(state.position[0]) == 2
    state = buffer.add(state, _items(2, 2))
    assert int(state.size[0]) == 4
    np.testing.assert_array_equal(state.items["id"], [0, 1, 2, 3, 0])
    state = buffer.add(state, _items(4, 3))  # wraps: 5, 6 overwrite 0, 1
    np.testing.assert_array_equal(state.items["id"], [5, 6, 2, 3, 4])
    np.testing.assert_array_equal(state.items["obs"][:, 1], -state.items["id"])
    assert int(state.size[0]) == 5 and int(state.position[0]) == 2


def test_uniform_sample_draws_only_stored_items_equally():
    buffer = make_uniform_buffer(capacity=10, batch_size=50_000)
    state = buffer.add(buffer.init({"id": jnp.int32(0)}), {"id": jnp.arange(4) + 7})
    drawn = buffer.sample(state, jax.random.key(0))
    counts = np.bincount(np.asarray(drawn.item["id"]), minlength=11)[7:]
    np.testing.assert_allclose(counts / 50_000, 0.25, atol=0.01)
    np.testing.assert_array_equal(drawn.item["id"], np.asarray(drawn.index) + 7)
    np.testing.assert_allclose(drawn.probability, 0.25)


def test_one_stored_item_is_drawn_with_probability_one():
    buffer = make_uniform_buffer(capacity=8, batch_size=3)
    state = buffer.add(buffer.init({"id": jnp.int32(0)}), {"id": jnp.array([7])})
    drawn = buffer.sample(state, jax.random.key(0))
    np.testing.assert_array_equal(drawn.item["id"], [7, 7, 7])
    np.testing.assert_allclose(drawn.probability, [1.0, 1.0, 1.0])


def test_prioritised_frequencies_match_priority_to_the_alpha():
    alpha, capacity, draws = 0.6, 50, 100_000
    buffer = make_prioritised_buffer(capacity, batch_size=1000, alpha=alpha)
    priorities = np.random.default_rng(1).uniform(0.05, 5.0, capacity)
    state = buffer.add(
        buffer.init({"id": jnp.int32(0)}),
        {"id": jnp.arange(capacity)},
        jnp.asarray(priorities, jnp.float32),
    )
    sample = jax.jit(jax.vmap(buffer.sample, in_axes=(None, 0)))
    drawn = sample(state, jax.random.split(jax.random.key(0), draws // 1000))
    counts = np.bincount(np.asarray(drawn.item["id"]).ravel(), minlength=capacity)
    want = priorities**alpha / np.sum(priorities**alpha)
    # Stratified draws vary less than multinomial ones: binomial error bounds.
    sigma = np.sqrt(draws * want * (1 - want))
    assert np.all(np.abs(counts - draws * want) < 4 * sigma + 1)
    chi2 = np.sum((counts - draws * want) ** 2 / (draws * want))
    assert chi2 < 2 * capacity  # the chi-square's mean is capacity - 1
    np.testing.assert_allclose(
        drawn.probability, want[np.asarray(drawn.index)], rtol=1e-5
    )


def test_new_items_get_the_largest_priority_and_updates_change_draws():
    buffer = make_prioritised_buffer(4, batch_size=8, alpha=1.0)
    state = buffer.init({"id": jnp.int32(0)})
    state = buffer.add(state, {"id": jnp.arange(2)}, jnp.array([1.0, 3.0]))
    state = buffer.add(state, {"id": jnp.arange(2, 4)})  # max so far: 3
    leaves = sum_tree.leaves(state.nodes, jnp.arange(4))
    np.testing.assert_allclose(leaves, [1.0, 3.0, 3.0, 3.0])
    state = buffer.set_priorities(state, jnp.array([1, 2, 3]), jnp.zeros(3) + 1e-9)
    drawn = buffer.sample(state, jax.random.key(3))
    np.testing.assert_array_equal(drawn.item["id"], np.zeros(8))


def test_new_items_get_the_largest_priority_before_the_exponent():
    # Schaul et al. (2016): a new item gets the largest priority p seen so
    # far, and is drawn in proportion to p^α like any other. With α = 0.5
    # and priorities 4 and 1, a third item added without one has p = 4, so
    # the leaves are p^α = (2, 1, 2) and the draws P = (0.4, 0.2, 0.4); the
    # maximum kept is 4, not 4^α (which would give the new item 4^(α²)).
    alpha = 0.5
    buffer = make_prioritised_buffer(4, batch_size=5, alpha=alpha)
    state = buffer.init({"id": jnp.int32(0)})
    state = buffer.add(state, {"id": jnp.arange(2)}, jnp.array([4.0, 1.0]))
    state = buffer.add(state, {"id": jnp.array([2])})
    np.testing.assert_allclose(state.max_priority, [4.0])
    leaves = sum_tree.leaves(state.nodes, jnp.arange(4))
    np.testing.assert_allclose(leaves, [4.0**alpha, 1.0, 4.0**alpha, 0.0])
    drawn = buffer.sample(state, jax.random.key(0))
    want = np.array([2.0, 1.0, 2.0]) / 5.0
    np.testing.assert_allclose(drawn.probability, want[np.asarray(drawn.index)])


def test_importance_weights_against_hand_computed_values():
    # N = 4, P = (0.1, 0.2, 0.3, 0.4), beta = 0.5:
    # w = (4 P)^-0.5 = (0.4, 0.8, 1.2, 1.6)^-0.5, divided by the largest, w_0.
    probability = jnp.array([0.1, 0.2, 0.3, 0.4])
    w = importance_weights(probability, jnp.int32(4), 0.5)
    hand = [1.0, (0.4 / 0.8) ** 0.5, (0.4 / 1.2) ** 0.5, (0.4 / 1.6) ** 0.5]
    np.testing.assert_allclose(w, hand, rtol=1e-6)
    np.testing.assert_allclose(importance_weights(probability, jnp.int32(4), 0.0), 1)
    # beta = 1 with a uniform distribution: all ones.
    np.testing.assert_allclose(importance_weights(jnp.full(3, 0.25), 4, 1.0), 1.0)


def test_importance_weights_share_one_maximum_across_devices():
    # Each device samples from its own shard; all must divide by the largest
    # weight of the whole batch, so that equal (N P(i)) weigh alike on every
    # device. Two devices (vmap stands in for them), N = 4, β = 1:
    # w = 1 / (4 P) = (2.5, 1.25) and (5, 0.625); the largest is 5.
    probability = jnp.array([[0.1, 0.2], [0.05, 0.4]])
    w = jax.vmap(
        lambda p: importance_weights(p, jnp.int32(4), 1.0, axis_name="d"),
        axis_name="d",
    )(probability)
    np.testing.assert_allclose(w, [[0.5, 0.25], [1.0, 0.125]], rtol=1e-6)


def test_sequence_buffer_keeps_trajectories_time_major():
    buffer = make_sequence_buffer(capacity=3, sequence_length=4, batch_size=6)
    t, b = 4, 2
    # step t of env b holds 10 b + t.
    traj = {"x": (10 * jnp.arange(b)[None, :] + jnp.arange(t)[:, None]).astype(float)}
    state = buffer.init({"x": jnp.float32(0)})
    state = buffer.add(state, traj)
    drawn = buffer.sample(state, jax.random.key(0))
    assert drawn.item["x"].shape == (4, 6)
    np.testing.assert_array_equal(
        drawn.item["x"], 10 * drawn.index[None, :] + jnp.arange(t)[:, None]
    )
    with pytest.raises(ValueError, match="sequence_length=4"):
        buffer.add(state, {"x": jnp.zeros((5, 2))})


def test_sequence_buffer_keeps_each_start_with_its_sequence():
    buffer = make_sequence_buffer(
        capacity=5, sequence_length=3, batch_size=8, with_starts=True
    )
    state = buffer.init(jnp.float32(0), jnp.zeros(2))
    for u in range(3):  # 3 adds of 2 environments' sequences
        steps = 100.0 * u + 10 * jnp.arange(2)[None, :] + jnp.arange(3)[:, None]
        starts = jnp.stack([100.0 * u + 10 * jnp.arange(2)] * 2, axis=1)
        state = buffer.add(state, steps, starts)
    steps, starts = buffer.sample(state, jax.random.key(0)).item
    assert steps.shape == (3, 8) and starts.shape == (8, 2)
    # Each drawn start is its own sequence's (its first step), not a neighbour's.
    np.testing.assert_array_equal(starts[:, 0], steps[0])
    np.testing.assert_array_equal(starts[:, 1], steps[0])


@pytest.mark.parametrize(
    "make",
    [
        lambda: make_uniform_buffer(6, batch_size=2),
        lambda: make_prioritised_buffer(6, batch_size=2),
    ],
    ids=["uniform", "prioritised"],
)
def test_buffers_sharded_on_8_devices_keep_per_shard_contents(make):
    buffer, mesh = make(), make_mesh(8)

    def per_device(example):
        state = buffer.init(example)
        for round_ in range(2):  # 2 x 4 items in 6 slots: 2 overwritten
            shard = jax.lax.axis_index(DATA_AXIS)
            ids = 1000 * shard + 10 * round_ + jnp.arange(4)
            state = buffer.add(state, {"id": ids})
        drawn = buffer.sample(state, jax.random.fold_in(jax.random.key(0), shard))
        return state, drawn.item["id"]

    run = jax.jit(jax.shard_map(per_device, mesh=mesh, in_specs=P(),
                                out_specs=(P(DATA_AXIS), P(DATA_AXIS))))  # fmt: skip
    state, drawn = run({"id": jnp.int32(0)})
    ring = state if hasattr(state, "items") else state.ring
    ids = np.asarray(ring.items["id"]).reshape(8, 6)
    for shard in range(8):
        np.testing.assert_array_equal(
            ids[shard], 1000 * shard + np.array([12, 13, 2, 3, 10, 11])
        )
    assert ring.size.shape == (8,) and np.all(np.asarray(ring.size) == 6)
    # Every device samples from its own shard.
    assert np.all(np.asarray(drawn).reshape(8, 2) // 1000 == np.arange(8)[:, None])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"capacity": 0, "batch_size": 1}, "capacity=0"),
        ({"capacity": 4, "batch_size": 0}, "batch_size=0"),
    ],
)
def test_sizes_are_checked(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_uniform_buffer(**kwargs)
