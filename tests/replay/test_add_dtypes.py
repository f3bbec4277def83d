"""`add` refuses what it would store wrong (review CT13, findings 1, 9 and 10).

It cast every leaf to the stored dtype (a float action 0.7 stored as 0 in an
int slot), read list leaves as trees of scalars, and told a user whose `init`
was given a batch to add another axis.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl.replay import (
    make_prioritised_buffer,
    make_sequence_buffer,
    make_uniform_buffer,
)
from purejaxdrl.replay.env_shards import make_env_shards
from tests.replay.refusals import BUFFERS, refusal

EXAMPLE = {"obs": jnp.zeros(4), "a": jnp.int32(0), "done": jnp.bool_(False)}


def _items(n, **leaves):
    items = {
        "obs": jnp.ones((n, 4)),
        "a": jnp.ones(n, jnp.int32),
        "done": jnp.zeros(n, bool),
    }
    return {**items, **leaves}


@BUFFERS
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_a_float_for_an_int_slot_is_refused_not_truncated(make, jit):
    buffer = make()
    state = buffer.init(EXAMPLE)
    add = jax.jit(buffer.add) if jit else buffer.add
    assert refusal(add, state, _items(2, a=jnp.array([0.7, 1.9]))) == (
        "add takes items['a'] of dtype int32, as init's example; got float32, "
        "which storing as int32 would lose information; give init an example "
        "of dtype float32 to keep it, or convert the items first: "
        "x.astype(int32)."
    )


@BUFFERS
@pytest.mark.parametrize(
    ("leaf", "given", "stored"),
    [
        ("done", jnp.ones(2, jnp.int32), "bool"),
        ("done", jnp.ones(2, jnp.float32), "bool"),
        ("a", jnp.ones(2, jnp.float16), "int32"),
        ("obs", jnp.ones((2, 4), jnp.complex64), "float32"),
    ],
)
def test_every_narrowing_of_kind_is_refused(make, leaf, given, stored):
    buffer = make()
    message = refusal(buffer.add, buffer.init(EXAMPLE), _items(2, **{leaf: given}))
    assert message.startswith(f"add takes items['{leaf}'] of dtype {stored}")


@BUFFERS
def test_widenings_and_casts_within_a_kind_are_stored(make):
    buffer = make()
    state = buffer.init({**EXAMPLE, "u8": jnp.uint8(0)})
    items = _items(
        2,
        obs=jnp.arange(8, dtype=jnp.int32).reshape(2, 4),  # int -> float
        a=jnp.array([True, False]),  # bool -> int
        u8=jnp.array([3, 250], jnp.uint8),
    )
    state = buffer.add(state, items)
    stored = getattr(state, "ring", state).items
    np.testing.assert_array_equal(stored["obs"][:2], np.arange(8).reshape(2, 4))
    assert stored["obs"].dtype == jnp.float32
    np.testing.assert_array_equal(stored["a"][:2], [1, 0])
    np.testing.assert_array_equal(stored["u8"][:2], [3, 250])
    half = _items(1, obs=jnp.full((1, 4), 0.5, jnp.float16), u8=jnp.ones(1, jnp.uint8))
    half = buffer.add(state, half)
    assert float(getattr(half, "ring", half).items["obs"][2, 0]) == 0.5


def test_sequence_buffers_and_their_starts_check_dtypes():
    buffer = make_sequence_buffer(3, 2, 1, with_starts=True)
    state = buffer.init({"a": jnp.int32(0)}, jnp.zeros(2, bool))
    trajectories = {"a": jnp.zeros((2, 1), jnp.int32)}
    assert refusal(
        buffer.add, state, {"a": jnp.zeros((2, 1))}, jnp.zeros((1, 2), bool)
    ).startswith("add takes trajectories['a'] of dtype int32, as init's example")
    assert refusal(
        buffer.add, state, trajectories, jnp.zeros((1, 2), jnp.int32)
    ).startswith("add takes starts of dtype bool, as init's example; got int32")


def test_env_shards_check_dtypes_in_each_shard():
    shards = make_env_shards(make_prioritised_buffer(4, 1), 2)
    state = shards.init({"a": jnp.int32(0)})
    message = refusal(shards.add, state, {"a": jnp.array([0.5, 1.5])})
    assert message.startswith("add takes items['a'] of dtype int32")


@pytest.mark.parametrize("make", [make_uniform_buffer, make_prioritised_buffer])
def test_env_shards_take_list_leaves_as_arrays(make):
    # x[:, None] indexed a list leaf's scalars: a TypeError, not a write. The
    # prioritised buffer's items are in its ring (mut15 #7).
    shards = make_env_shards(make(4, 1), 2)
    state = shards.add(shards.init({"a": jnp.int32(0)}), {"a": [3, 5]})
    items = getattr(state, "ring", state).items
    np.testing.assert_array_equal(items["a"][:, 0], [3, 5])
    assert int(shards.size(state)) == 1


@BUFFERS
def test_list_leaves_are_arrays(make):
    # Were walked as trees of scalars and refused as another structure.
    buffer = make()
    state = buffer.init(EXAMPLE)
    items = {"obs": [[1.0, 2, 3, 4]], "a": [1], "done": [True]}
    state = buffer.add(state, items)
    ring = getattr(state, "ring", state)
    np.testing.assert_array_equal(ring.items["obs"][0], [1, 2, 3, 4])
    assert int(ring.items["a"][0]) == 1 and bool(ring.items["done"][0])
    assert int(ring.size[0]) == 1
    # A list of floats for the int slot is refused like an array of them.
    assert refusal(buffer.add, state, {**items, "a": [1.5]}).startswith(
        "add takes items['a'] of dtype int32"
    )


def test_list_containers_init_was_given_stay_containers():
    buffer = make_uniform_buffer(4, 2)
    state = buffer.init({"obs": [jnp.zeros(2), jnp.zeros(3)]})
    state = buffer.add(state, {"obs": [jnp.ones((1, 2)), [[1.0, 2.0, 3.0]]]})
    np.testing.assert_array_equal(state.items["obs"][1][0], [1, 2, 3])


@BUFFERS
def test_a_batched_init_is_named_not_fixed_by_another_axis(make):
    # Items [8] cannot be one stored item [5]: init was given the batch.
    buffer = make()
    state = buffer.init({"obs": jnp.zeros((5, 4)), "a": jnp.zeros(5, jnp.int32)})
    message = refusal(
        buffer.add, state, {"obs": jnp.ones((8, 4)), "a": jnp.ones(8, jnp.int32)}
    )
    assert message == (
        "add takes items['a'] with one axis more; got [8]: init was likely "
        "given a batch of 5 (every leaf it stores has an extra axis of 5); give "
        "init one item (x[0] of each leaf)."
    )


def test_a_batched_init_of_a_sequence_buffer_is_named():
    buffer = make_sequence_buffer(4, 3, 2)
    state = buffer.init({"o": jnp.zeros((5, 2)), "a": jnp.zeros(5, jnp.int32)})
    items = {"o": jnp.zeros((3, 6, 2)), "a": jnp.zeros((3, 6), jnp.int32)}
    assert "init was likely given a batch of 5" in refusal(buffer.add, state, items)


def test_items_with_a_scalar_leaf_keep_the_batch_axis_advice():
    # A stored scalar item rules out a batched init.
    buffer = make_uniform_buffer(8, 4)
    state = buffer.init(EXAMPLE)
    unbatched = {"obs": jnp.ones(4), "a": jnp.int32(1), "done": jnp.bool_(True)}
    assert refusal(buffer.add, state, unbatched) == (
        "add takes items['a'] of shape [n]; got [] (add a batch axis: x[None])."
    )
