"""`add` refuses items that are not `init`'s example with a batch axis, in one line.

`add` writes with `buf.at[slots].set(x)`, which broadcasts: one observation
added without its batch axis was stored as 3 copies of itself, at the maximum
priority in a prioritised buffer, with no error. Other mistakes failed deep
inside JAX (a broadcasting error, a pytree metadata error, an IndexError).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl.replay import (
    make_sequence_buffer,
)
from tests.replay.refusals import BUFFERS, refusal


@BUFFERS
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_an_item_without_its_batch_axis_is_refused_not_broadcast(make, jit):
    buffer = make()
    state = buffer.init({"obs": jnp.zeros(3)})
    add = jax.jit(buffer.add) if jit else buffer.add
    assert refusal(add, state, {"obs": jnp.array([1.0, 2.0, 3.0])}) == (
        "add takes items['obs'] of shape [n, 3]; got [3] (add a batch axis: x[None])."
    )
    # The fix the message names stores one item, once.
    state = add(state, {"obs": jnp.array([1.0, 2.0, 3.0])[None]})
    ring = getattr(state, "ring", state)
    assert int(ring.size[0]) == 1 and int(ring.position[0]) == 1
    np.testing.assert_array_equal(ring.items["obs"][:2], [[1, 2, 3], [0, 0, 0]])


@BUFFERS
def test_an_unbatched_scalar_leaf_is_refused(make):
    # Was an IndexError: the batch size was read from the first leaf's shape[0].
    buffer = make()
    state = buffer.init({"a": jnp.int32(0), "b": jnp.zeros(2)})
    message = refusal(buffer.add, state, {"a": jnp.int32(1), "b": jnp.ones((1, 2))})
    assert message == (
        "add takes items['a'] of shape [n]; got [] (add a batch axis: x[None])."
    )


@BUFFERS
def test_items_of_another_shape_name_the_leaf_and_both_shapes(make):
    # Was "Incompatible types for broadcasting", 12 frames deep.
    buffer = make()
    state = buffer.init({"obs": jnp.zeros(3)})
    assert refusal(buffer.add, state, {"obs": jnp.zeros((2, 4))}) == (
        "add takes items['obs'] of shape [n, 3]; got [2, 4] (each item is [3], "
        "as init's example)."
    )


@BUFFERS
def test_items_of_another_structure_name_the_keys(make):
    # Was a raw "pytree structure error: different pytree metadata".
    buffer = make()
    state = buffer.init({"obs": jnp.zeros(3)})
    assert refusal(buffer.add, state, {"ob": jnp.zeros((2, 3))}) == (
        "add takes items of the structure init's example had; got another "
        "(missing items['obs']; not stored items['ob']); pass the same keys and "
        "containers as init's example."
    )


@BUFFERS
def test_leaves_of_different_batch_sizes_are_refused(make):
    buffer = make()
    state = buffer.init({"a": jnp.int32(0), "b": jnp.zeros(2)})
    items = {"a": jnp.zeros(3, jnp.int32), "b": jnp.zeros((1, 2))}
    assert refusal(buffer.add, state, items) == (
        "add takes the same number of items in every leaf; items['a'] holds 3 "
        "and items['b'] 1 (along axis 0); give every leaf the same batch size."
    )


def test_sequence_buffers_check_trajectories_time_major_and_their_starts():
    buffer = make_sequence_buffer(3, sequence_length=4, batch_size=2)
    state = buffer.init({"x": jnp.zeros(3)})
    # One trajectory [T, 3] without its batch axis was stored as 3 sequences
    # (or refused, by swapaxes, when its step was a scalar).
    assert refusal(buffer.add, state, {"x": jnp.zeros((4, 3))}) == (
        "add takes trajectories['x'] of shape [4, B, 3]; got [4, 3] (add a batch "
        "axis: x[:, None])."
    )
    assert refusal(buffer.add, state, {"x": jnp.zeros((4, 2, 2))}).startswith(
        "add takes trajectories['x'] of shape [4, B, 3]; got [4, 2, 2]"
    )
    with_starts = make_sequence_buffer(3, 4, 2, with_starts=True)
    state = with_starts.init({"x": jnp.zeros(3)}, jnp.zeros(2))
    trajectories = {"x": jnp.zeros((4, 2, 3))}
    assert refusal(with_starts.add, state, trajectories, jnp.zeros(2)) == (
        "add takes starts of shape [B, 2]; got [2] (add a batch axis: x[None])."
    )
    state = with_starts.add(state, trajectories, jnp.ones((2, 2)))
    assert int(state.size[0]) == 2
