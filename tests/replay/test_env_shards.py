"""One replay shard per environment: each draws from its own items, with its
own key, at the probabilities of its own priorities."""

import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.replay import make_prioritised_buffer, make_uniform_buffer
from purejaxdrl.replay.env_shards import make_env_shards

CAPACITY, BATCH = 8, 2


def _filled(num_envs: int, adds: int, first_env: int = 0, alpha: float = 1.0):
    """E prioritised shards after `adds` adds; environment e's k-th item is
    100 e + k, so an item names its environment and its slot."""
    shards = make_env_shards(
        make_prioritised_buffer(CAPACITY, BATCH, alpha=alpha), num_envs
    )
    state = shards.init(jnp.zeros((), jnp.int32))
    envs, add = first_env + np.arange(num_envs), jax.jit(shards.add)
    for k in range(adds):
        state = add(state, jnp.asarray(100 * envs + k, jnp.int32))
    return shards, state


def _draws(shards, state, env_ids, num_keys: int = 1):
    """Samples for `num_keys` keys: index [K, E, b], probability, item."""
    keys = jax.random.split(jax.random.key(0), num_keys)
    sample = jax.jit(jax.vmap(shards.sample, in_axes=(None, 0, None)))
    return jax.device_get(sample(state, keys, jnp.asarray(env_ids, jnp.int32)))


def test_each_environment_draws_with_its_own_key():
    # Equal priorities (every new item gets the running maximum, 1): with one
    # key for all shards every environment would draw the same slots, so the
    # batch would hold the sequences of one update from every environment.
    # With a key of its own, two shards' draws agree as often as independent
    # stratified draws do: 1 in (CAPACITY / BATCH)^BATCH = 1 in 16.
    shards, state = _filled(8, CAPACITY)
    index = _draws(shards, state, np.arange(8), num_keys=200).index
    for a, b in ((0, 1), (2, 5), (3, 7)):
        same = np.all(index[:, a] == index[:, b], axis=-1).mean()
        assert same < 0.15, (a, b, same)


def test_a_shards_draw_depends_on_its_global_environment_id_only():
    # Environments 2 and 3 on a device of two draw what they draw on one
    # device of eight: the union of the draws is the same on any device count.
    shards8, state8 = _filled(8, 5)
    shards2, state2 = _filled(2, 5, first_env=2)
    np.testing.assert_array_equal(
        jax.device_get(state2.ring.items), jax.device_get(state8.ring.items)[2:4]
    )
    all8 = _draws(shards8, state8, np.arange(8), num_keys=4)
    two = _draws(shards2, state2, [2, 3], num_keys=4)
    np.testing.assert_array_equal(two.index, all8.index[:, 2:4])
    np.testing.assert_array_equal(two.item, all8.item[:, 2 * BATCH : 4 * BATCH])
    # The same contents under other environment ids draw other slots.
    other = _draws(shards2, state2, [4, 5], num_keys=4)
    assert not np.array_equal(other.index, two.index)


def test_draws_follow_each_shards_own_priorities():
    # Schaul et al. (2016): P(i) = p_i^α / Σ_k p_k^α over the shard's own
    # items. Two shards with different priorities over a half-full ring.
    alpha, stored = 0.7, 6
    shards, state = _filled(2, stored, alpha=alpha)
    priority = np.array(
        [[0.5, 2.0, 1.0, 4.0, 0.25, 3.0], [3.0, 0.1, 1.0, 1.0, 6.0, 2.0]]
    )
    slots = np.broadcast_to(np.arange(stored), priority.shape)
    state = jax.jit(shards.set_priorities)(
        state, jnp.asarray(slots, jnp.int32), jnp.asarray(priority, jnp.float32)
    )
    expected = priority**alpha / (priority**alpha).sum(axis=1, keepdims=True)
    num_keys = 20_000
    drawn = _draws(shards, state, [0, 1], num_keys=num_keys)
    for env in range(2):
        index = drawn.index[:, env].ravel()
        assert index.max() < stored  # never an unwritten slot
        frequency = np.bincount(index, minlength=stored) / index.size
        # Binomial standard error at most sqrt(0.25 / 40_000) = 0.0025.
        np.testing.assert_allclose(frequency, expected[env], atol=0.01)
        # The probability each draw reports is its item's, within its shard.
        np.testing.assert_allclose(
            drawn.probability[:, env], expected[env][drawn.index[:, env]], rtol=1e-5
        )
    # Items are environment-major ([E * b]) and are the ones in the drawn slots.
    want = 100 * np.arange(2)[None, :, None] + drawn.index
    np.testing.assert_array_equal(drawn.item, want.reshape(num_keys, 2 * BATCH))


def test_set_priorities_writes_only_into_each_named_shard():
    shards, state = _filled(3, 4)
    before = jax.device_get(state.nodes)
    # Shard 1 gets new priorities in slots 0 and 2; the others rewrite theirs
    # unchanged (1, the priority every new item was given).
    index = jnp.asarray([[0, 1], [0, 2], [3, 3]], jnp.int32)
    priority = jnp.asarray([[1.0, 1.0], [5.0, 0.5], [1.0, 1.0]])
    after = jax.device_get(jax.jit(shards.set_priorities)(state, index, priority))
    np.testing.assert_array_equal(after.nodes[0], before[0])
    np.testing.assert_array_equal(after.nodes[2], before[2])
    drawn = _draws(shards, after, [0, 1, 2], num_keys=4000)
    frequency = np.bincount(drawn.index[:, 1].ravel(), minlength=CAPACITY)
    total = 5.0 + 0.5 + 1.0 + 1.0  # α = 1
    np.testing.assert_allclose(
        frequency[:4] / frequency.sum(), np.array([5.0, 1.0, 0.5, 1.0]) / total,
        atol=0.02,
    )  # fmt: skip
    np.testing.assert_array_equal(after.max_priority[:, 0], [1.0, 5.0, 1.0])


def test_size_counts_the_items_of_each_shard():
    for adds, expected in ((1, 1), (5, 5), (CAPACITY + 3, CAPACITY)):
        shards, state = _filled(4, adds)
        assert int(shards.size(state)) == expected
    # Uniform shards too (their state is the ring itself).
    shards = make_env_shards(make_uniform_buffer(CAPACITY, BATCH), 3)
    state = shards.init(jnp.zeros((), jnp.int32))
    for k in range(3):
        state = shards.add(state, jnp.full((3,), k, jnp.int32))
    assert int(shards.size(state)) == 3
    drawn = jax.device_get(shards.sample(state, jax.random.key(1), jnp.arange(3)))
    assert drawn.index.shape == (3, BATCH) and drawn.index.max() < 3
    np.testing.assert_array_equal(drawn.item, drawn.index.ravel())
