"""`add`'s refusals that its first tests left open (mutation review mut13).

Each case here failed to be told apart from a wrong message or a silent store:
a same-rank wrong shape, items in other containers, trajectories of another
length, and more items in one add than the buffer holds.
"""

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
