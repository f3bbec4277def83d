"""`add`'s refusals name the mistake made, once (review CR13, findings 1, 5-8).

The batched-init guess led on the usual {obs, next_obs} layout added without
its batch axis; prioritised `add` spoke of `set_priorities`' index; an int32
added to a uint8 slot wrapped (300 stored as 44); a ragged list was another
structure with a leaf path per number; and the item rule ran up to three
times per add.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl.replay.item_shapes as item_shapes
import purejaxdrl.replay.prioritised as prioritised
import purejaxdrl.replay.ring as ring
import purejaxdrl.replay.sequence as sequence
from purejaxdrl.replay import (
    make_prioritised_buffer,
    make_sequence_buffer,
    make_uniform_buffer,
)
from tests.replay.refusals import BUFFERS, refusal


@BUFFERS
def test_one_unbatched_item_leads_with_the_batch_axis(make):
    buffer = make()
    state = buffer.init({"obs": jnp.zeros(4), "next_obs": jnp.zeros(4)})
    one = {"obs": jnp.ones(4), "next_obs": jnp.ones(4)}
    assert refusal(buffer.add, state, one) == (
        "add takes items['next_obs'] of shape [n, 4]; got [4] (add a batch "
        "axis: x[None]; or, if init was given a batch of 4, give init one "
        "item: x[0] of each leaf)."
    )


def test_one_unbatched_trajectory_leads_with_its_batch_axis():
    buffer = make_sequence_buffer(4, 3, 2)
    state = buffer.init({"o": jnp.zeros((5, 2)), "a": jnp.zeros(5, jnp.int32)})
    items = {"o": jnp.zeros((3, 5, 2)), "a": jnp.zeros((3, 5), jnp.int32)}
    assert refusal(buffer.add, state, items).startswith(
        "add takes trajectories['a'] of shape [3, B, 5]; got [3, 5] (add a "
        "batch axis: x[:, None]; or, if init was given a batch of 5"
    )


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("priorities", [jnp.ones(3), jnp.ones(1), jnp.ones((2, 1))])
def test_prioritised_add_names_its_own_priorities(jit, priorities):
    buffer = make_prioritised_buffer(8, 2)
    state = buffer.init({"o": jnp.zeros(3)})
    add = jax.jit(buffer.add) if jit else buffer.add
    shape = list(priorities.shape)
    assert refusal(add, state, {"o": jnp.ones((2, 3))}, priorities) == (
        f"add takes one priority per item: 2 items, priorities {shape}; give "
        "priorities [2], or none for the largest seen so far."
    )
    added = add(state, {"o": jnp.ones((2, 3))}, [1, 2])  # a list, ints
    np.testing.assert_allclose(added.max_priority, [2.0])


@BUFFERS
@pytest.mark.parametrize(
    ("given", "stored", "low", "high"),
    [
        (jnp.int32, jnp.uint8, 0, 255),
        (jnp.int32, jnp.int16, -32768, 32767),
        (jnp.int8, jnp.uint8, 0, 255),
        (jnp.uint32, jnp.int32, -(2**31), 2**31 - 1),
    ],
)
def test_an_int_that_would_wrap_is_refused(make, given, stored, low, high):
    buffer = make()
    state = buffer.init({"o": jnp.zeros(3, stored)})
    frames = jnp.full((2, 3), 100, given)
    given, stored = np.dtype(given).name, np.dtype(stored).name
    assert refusal(buffer.add, state, {"o": frames}) == (
        f"add takes items['o'] of dtype {stored}, as init's example; got "
        f"{given}, whose values outside [{low}, {high}] would wrap when stored "
        f"as {stored} (not clip); give init an example of dtype {given} to "
        "keep them, or convert the items first, clipped if need be: "
        f"jnp.clip(x, {low}, {high}).astype({stored})."
    )


@BUFFERS
def test_ints_every_value_of_which_fits_are_stored(make):
    buffer = make()
    state = buffer.init({"o": jnp.zeros(2, jnp.int32), "u": jnp.zeros(2, jnp.uint8)})
    u8 = jnp.array([[250, 3]] * 2, jnp.uint8)
    widened = {"o": jnp.array([[255, 7]] * 2, jnp.uint8), "u": u8}  # -> int32
    stored = getattr(buffer.add(state, widened), "ring", None)
    stored = stored or buffer.add(state, widened)
    np.testing.assert_array_equal(stored.items["o"][:2], [[255, 7]] * 2)
    assert stored.items["o"].dtype == jnp.int32
    # numpy's default int64 is int32 to JAX (64-bit types off), as it stores it.
    numpy_ints = {"o": np.array([[1, 2]] * 2), "u": u8}
    assert numpy_ints["o"].dtype == np.int64
    stored = getattr(buffer.add(state, numpy_ints), "ring", None)
    stored = stored or buffer.add(state, numpy_ints)
    np.testing.assert_array_equal(stored.items["o"][:2], [[1, 2]] * 2)


@BUFFERS
def test_a_ragged_list_is_named_with_its_row_lengths(make):
    buffer = make()
    state = buffer.init({"o": jnp.zeros(3), "a": jnp.int32(0)})
    ragged = {"o": [[1.0, 2.0, 3.0], [1.0, 2.0]], "a": jnp.zeros(2, jnp.int32)}
    assert refusal(buffer.add, state, ragged) == (
        "items['o'] is a ragged list (rows of lengths 3, 2); give rows of one length."
    )
    # Thousands of rows of many lengths: the line stays short.
    rows = [[1.0] * (i % 50) for i in range(5000)]
    long = refusal(buffer.add, state, {"o": rows, "a": jnp.zeros(5000, jnp.int32)})
    assert long == (
        "items['o'] is a ragged list (rows of lengths 0, 1, 2, 3, ...); give rows "
        "of one length."
    )


def test_ragged_trajectories_and_starts_are_named_as_such():
    buffer = make_sequence_buffer(4, 2, 2, with_starts=True)
    state = buffer.init({"a": jnp.zeros(2)}, jnp.zeros(2))
    deep = [[[1.0, 2.0]], [[1.0]]]  # [T=2, B=1, 2] with a short last row
    assert refusal(buffer.add, state, {"a": deep}, jnp.zeros((1, 2))) == (
        "trajectories['a'] is a ragged list (rows of lengths 2, 1); give rows "
        "of one length."
    )
    trajectories = {"a": jnp.zeros((2, 2, 2))}
    assert refusal(buffer.add, state, trajectories, [[1.0, 2.0], [3.0]]) == (
        "starts is a ragged list (rows of lengths 2, 1); give rows of one length."
    )


def test_sequence_starts_hold_one_per_trajectory():
    buffer = make_sequence_buffer(4, 2, 2, with_starts=True)
    state = buffer.init({"a": jnp.int32(0)}, jnp.zeros(2))
    trajectories = {"a": jnp.zeros((2, 3), jnp.int32)}
    assert refusal(buffer.add, state, trajectories, jnp.zeros((2, 2))) == (
        "add takes one start per trajectory: trajectories hold B=3, starts 2; "
        "give starts [B, ...]."
    )


def _count_checks(monkeypatch) -> list[str]:
    """Records each `check_items` call of the buffers' modules, by argument name."""
    calls = []
    check = item_shapes.check_items

    def counted(*args, **kwargs):
        calls.append(kwargs.get("what", "items"))
        return check(*args, **kwargs)

    for module in (ring, prioritised, sequence):
        monkeypatch.setattr(module, "check_items", counted)
    return calls


@pytest.mark.parametrize("kind", ["uniform", "prioritised"])
def test_the_item_rule_runs_once_per_add(monkeypatch, kind):
    calls = _count_checks(monkeypatch)
    make = make_uniform_buffer if kind == "uniform" else make_prioritised_buffer
    buffer = make(8, 2)
    buffer.add(buffer.init({"o": jnp.zeros(3)}), {"o": jnp.ones((2, 3))})
    assert calls == ["items"]


@pytest.mark.parametrize("with_starts", [False, True])
def test_the_item_rule_runs_once_per_argument_of_a_sequence_add(
    monkeypatch, with_starts
):
    calls = _count_checks(monkeypatch)
    buffer = make_sequence_buffer(4, 2, 2, with_starts=with_starts)
    starts = [jnp.zeros((2, 2))] if with_starts else []
    state = buffer.init({"o": jnp.zeros(3)}, *[s[0] for s in starts])
    buffer.add(state, {"o": jnp.ones((2, 2, 3))}, *starts)
    assert calls == ["trajectories", *["starts"] * with_starts]
