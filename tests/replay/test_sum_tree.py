"""The sum-tree against NumPy: exact totals, no drift, correct leaves found."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl.replay import sum_tree


@pytest.mark.parametrize("capacity", [1, 5, 8, 1000])
def test_set_leaves_matches_a_fresh_build(capacity):
    rng = np.random.default_rng(0)
    values = rng.uniform(0, 3, capacity).astype(np.float32)
    nodes = sum_tree.set_leaves(
        sum_tree.init(capacity), jnp.arange(capacity), jnp.asarray(values)
    )
    np.testing.assert_array_equal(nodes, sum_tree.build(jnp.asarray(values)))
    assert float(sum_tree.total(nodes)) == pytest.approx(values.sum(dtype=np.float64))


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


def test_find_returns_the_leaf_whose_interval_holds_the_mass():
    values = np.array([1.0, 2.0, 0.5, 3.0, 0.25, 0.0, 0.0], np.float32)
    nodes = sum_tree.build(jnp.asarray(values))
    edges = np.concatenate([[0.0], np.cumsum(values)])
    mass = np.array([0.0, 0.99, 1.0, 2.9, 3.0, 3.49, 3.5, 6.49, 6.5, 6.7], np.float32)
    want = np.searchsorted(edges, mass, side="right") - 1
    found = sum_tree.find(nodes, jnp.asarray(mass), 5)
    np.testing.assert_array_equal(found, want)


def test_find_never_lands_on_an_unwritten_leaf():
    values = np.zeros(16, np.float32)
    values[:10] = 1e-3
    nodes = sum_tree.build(jnp.asarray(values))
    # At and beyond the total (float rounding): the last written leaf.
    total = float(sum_tree.total(nodes))
    found = sum_tree.find(nodes, jnp.array([0.0, total, total * 1.01]), 10)
    np.testing.assert_array_equal(found, [0, 9, 9])
