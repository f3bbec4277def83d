"""The sum-tree against NumPy: exact totals, no drift, correct leaves found."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl.replay import sum_tree


@pytest.mark.parametrize("capacity", [1, 5, 16, 17, 1000, 4097])
def test_set_leaves_matches_a_fresh_build(capacity):
    rng = np.random.default_rng(0)
    values = rng.uniform(0, 3, capacity).astype(np.float32)
    nodes = sum_tree.set_leaves(
        sum_tree.init(capacity), jnp.arange(capacity), jnp.asarray(values)
    )
    np.testing.assert_array_equal(nodes, sum_tree.build(jnp.asarray(values)))
    assert float(sum_tree.total(nodes)) == pytest.approx(values.sum(dtype=np.float64))


@pytest.mark.parametrize("batch", [1, 7, 64, 300])
def test_small_batches_update_deep_levels_like_a_fresh_build(batch):
    # 5000 leaves: levels whose children outnumber 16 x batch are updated
    # node by node, the rest recomputed whole; both must agree with a build.
    rng = np.random.default_rng(batch)
    values = np.zeros(5000, np.float32)
    nodes = sum_tree.init(5000)
    for _ in range(20):
        index = rng.choice(5000, batch, replace=False)
        values[index] = rng.uniform(0.1, 5, batch).astype(np.float32)
        nodes = sum_tree.set_leaves(
            nodes, jnp.asarray(index), jnp.asarray(values[index])
        )
    np.testing.assert_array_equal(nodes, sum_tree.build(jnp.asarray(values)))


def test_no_drift_after_a_million_random_updates():
    capacity, batch, rounds = 4096, 256, 4000  # 1,024,000 leaf updates
    key = jax.random.key(0)

    @jax.jit
    def updates(nodes, key):
        def one(nodes, key):
            k1, k2 = jax.random.split(key)
            index = jax.random.randint(k1, (batch,), 0, capacity)
            # Priorities over six orders of magnitude, the worst case for
            # delta-propagating trees.
            values = 10.0 ** jax.random.uniform(k2, (batch,), minval=-3, maxval=3)
            return sum_tree.set_leaves(nodes, index, values), None

        return jax.lax.scan(one, nodes, jax.random.split(key, rounds))[0]

    nodes = updates(sum_tree.init(capacity), key)
    leaves = sum_tree.leaves(nodes, jnp.arange(capacity))
    # Every node is still exactly the sum of its children...
    np.testing.assert_array_equal(nodes, sum_tree.build(leaves))
    # ...and the root agrees with a float64 sum to float32 precision.
    exact = np.asarray(leaves, np.float64).sum()
    assert float(sum_tree.total(nodes)) == pytest.approx(exact, rel=1e-6)


def test_sample_returns_the_leaf_whose_interval_holds_the_mass():
    values = np.array([1.0, 2.0, 0.5, 3.0, 0.25, 0.0, 0.0], np.float32)
    nodes = sum_tree.build(jnp.asarray(values))
    total = np.float32(6.75)
    edges = np.concatenate([[0.0], np.cumsum(values)])
    # Fractions whose masses (fraction x total, in float32) fall on both sides
    # of the interval edges 1, 3, 3.5 and 6.5.
    mass = np.array([0.0, 0.99, 1.0, 2.9, 3.0, 3.49, 3.5, 6.49, 6.5, 6.7], np.float32)
    fraction = mass / total
    mass = fraction * total  # what the walk starts from
    want = np.searchsorted(edges, mass, side="right") - 1
    found, value, root = sum_tree.sample(nodes, jnp.asarray(fraction))
    np.testing.assert_array_equal(found, want)
    np.testing.assert_array_equal(value, values[want])
    assert float(root) == 6.75


def test_sample_never_lands_on_an_unwritten_leaf():
    values = np.zeros(16, np.float32)
    values[:10] = 1e-3
    nodes = sum_tree.build(jnp.asarray(values))
    # At the total and beyond it (float rounding): the last written leaf.
    found, value, _ = sum_tree.sample(nodes, jnp.array([0.0, 1.0, 1.01]))
    np.testing.assert_array_equal(found, [0, 9, 9])
    np.testing.assert_array_equal(value, np.float32(1e-3))


def test_a_one_leaf_tree_draws_its_leaf():
    nodes = sum_tree.build(jnp.array([2.5]))
    found, value, root = sum_tree.sample(nodes, jnp.array([0.0, 0.5]))
    np.testing.assert_array_equal(found, [0, 0])
    np.testing.assert_array_equal(value, [2.5, 2.5])
    assert float(root) == 2.5


def test_sample_against_numpy_on_a_partly_filled_four_level_tree():
    # 5000 leaves: 4 levels of 16, the last groups and levels partly used.
    rng = np.random.default_rng(1)
    values = np.zeros(5000, np.float32)
    values[:4321] = 10.0 ** rng.uniform(-2, 2, 4321)
    nodes = sum_tree.build(jnp.asarray(values))
    fraction = rng.uniform(0, 1, 4096).astype(np.float32)
    found, value, root = sum_tree.sample(nodes, jnp.asarray(fraction))
    edges = np.concatenate([[0.0], np.cumsum(values, dtype=np.float64)])
    mass = fraction.astype(np.float64) * float(root)
    want = np.searchsorted(edges, mass, side="right") - 1
    # Float32 partial sums may move a mass that lies within rounding of an
    # edge to the neighbouring leaf, never further.
    near_edge = np.abs(mass - edges[np.clip(want, 0, None)]) < 1e-4 * float(root)
    near_edge |= np.abs(edges[want + 1] - mass) < 1e-4 * float(root)
    np.testing.assert_array_equal(np.asarray(found)[~near_edge], want[~near_edge])
    assert np.all(np.abs(np.asarray(found) - want) <= 1)
    assert np.all(np.asarray(found) < 4321)
    np.testing.assert_array_equal(value, values[np.asarray(found)])
    assert float(root) == pytest.approx(edges[-1], rel=1e-5)
