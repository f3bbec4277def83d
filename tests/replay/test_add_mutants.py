"""`add`'s refusals that its first tests left open (mutation review mut13).

Each case here failed to be told apart from a wrong message or a silent store:
a same-rank wrong shape, items in other containers, trajectories of another
length, and more items in one add than the buffer holds.
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
def test_one_item_of_another_size_but_the_same_rank_is_told_the_item_shape(make):
    # [4] into a buffer of [3]: "add a batch axis" would give [1, 4], refused
    # again; the fix is the item's shape.
    buffer = make()
    state = buffer.init({"obs": jnp.zeros(3)})
    assert refusal(buffer.add, state, {"obs": jnp.zeros(4)}) == (
        "add takes items['obs'] of shape [n, 3]; got [4] (each item is [3], as "
        "init's example)."
    )


@BUFFERS
def test_items_in_other_containers_with_the_same_leaves_are_refused(make):
    # A list for a tuple has the same leaves and paths ([0], [1]): only the
    # structures can say how they differ, given's first.
    buffer = make()
    state = buffer.init((jnp.zeros(3), jnp.int32(0)))
    items = [jnp.zeros((2, 3)), jnp.zeros(2, jnp.int32)]
    assert refusal(buffer.add, state, items) == (
        "add takes items of the structure init's example had; got another "
        "(PyTreeDef([*, *]) against PyTreeDef((*, *))); pass the same keys and "
        "containers as init's example."
    )
    # The same items in the stored container are taken.
    taken = buffer.add(state, tuple(items))
    assert int(getattr(taken, "ring", taken).size[0]) == 2


@pytest.mark.parametrize("steps", [3, 5])
def test_trajectories_of_another_length_name_both_lengths(steps):
    # Shorter as well as longer: the length is said before the shapes.
    buffer = make_sequence_buffer(3, 4, 2)
    state = buffer.init({"x": jnp.zeros(3)})
    assert refusal(buffer.add, state, {"x": jnp.zeros((steps, 2, 3))}) == (
        f"trajectories of {steps} steps added to a buffer of sequence_length=4; "
        "make them equal."
    )


@BUFFERS
def test_more_items_than_the_capacity_in_one_add_are_refused(make):
    # capacity + 1 items would overwrite the first with the last, silently.
    buffer = make()
    state = buffer.init({"obs": jnp.zeros(3)})
    assert refusal(buffer.add, state, {"obs": jnp.zeros((9, 3))}) == (
        "adding 9 items to a buffer of capacity 8 per device would overwrite "
        "part of the batch itself; raise the capacity."
    )
    # capacity items fill it, each kept.
    items = np.arange(24, dtype=np.float32).reshape(8, 3)
    full = buffer.add(state, {"obs": items})
    np.testing.assert_array_equal(getattr(full, "ring", full).items["obs"], items)


@BUFFERS
def test_a_tuple_leaf_is_taken_as_a_list_is(make):
    buffer = make()
    state = buffer.init({"obs": jnp.zeros(2)})
    tupled = buffer.add(state, {"obs": ((1.0, 2.0), (3.0, 4.0))})
    arrays = buffer.add(state, {"obs": jnp.array([[1.0, 2.0], [3.0, 4.0]])})
    for got, want in zip(jax.tree.leaves(tupled), jax.tree.leaves(arrays), strict=True):
        np.testing.assert_array_equal(got, want)
    assert refusal(buffer.add, state, {"obs": ((1.0, 2.0), (3.0,))}) == (
        "items['obs'] is a ragged list (rows of lengths 2, 1); give rows of one length."
    )


@BUFFERS
def test_leaves_of_several_sizes_without_the_batch_axis_are_told_to_add_it(make):
    # {obs: [4], act: [2]} added as init's example: the usual forgotten batch
    # axis of a transition of two vector leaves (not Python's unpacking error).
    buffer = make()
    state = buffer.init({"obs": jnp.zeros(4), "act": jnp.zeros(2)})
    items = {"obs": jnp.zeros(4), "act": jnp.zeros(2)}
    assert refusal(buffer.add, state, items) == (
        "add takes items['act'] of shape [n, 2]; got [2] (add a batch axis: x[None])."
    )


@BUFFERS
def test_a_ragged_lists_lengths_are_each_named_once(make):
    buffer = make()
    state = buffer.init({"obs": jnp.zeros(2)})
    ragged = {"obs": [[1, 2], [1, 2, 3], [1, 2], [1, 2, 3]]}
    assert refusal(buffer.add, state, ragged) == (
        "items['obs'] is a ragged list (rows of lengths 2, 3); give rows of one length."
    )


@BUFFERS
@pytest.mark.parametrize(
    ("row", "reason"),
    [
        (["a", "b"], "Value 'a' with dtype <U1 is not a valid JAX array type."),
        ([None, 2], "None is not a valid value for jnp.array"),
    ],
    ids=["strings", "None"],
)
def test_a_list_of_no_numbers_is_named_with_jaxs_reason(make, row, reason):
    buffer = make()
    state = buffer.init({"obs": jnp.zeros(2)})
    message = refusal(buffer.add, state, {"obs": [[1, 2], row]})
    assert message.startswith(f"items['obs'] is a list JAX makes no array of ({reason}")
    assert message.endswith("); give a list of numbers of one shape, or an array.")
