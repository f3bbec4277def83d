"""`set_priorities` and the buffers' sizes, checked (review CT13, findings 2 and 10).

A signed TD error given as a priority made every later draw NaN; a priority
list failed on `.astype`, a priority of another shape in JAX's broadcasting;
a float capacity was accepted and failed inside JAX at `init`.
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
from tests.replay.refusals import refusal


def _prioritised():
    buffer = make_prioritised_buffer(16, 4)
    state = buffer.add(buffer.init({"o": jnp.zeros(2)}), {"o": jnp.ones((4, 2))})
    return buffer, state


def test_a_signed_priority_counts_as_its_magnitude():
    # p**alpha of -1 was NaN, and every later draw's probability with it.
    buffer, state = _prioritised()
    index = jnp.arange(4)
    signed = buffer.set_priorities(state, index, jnp.array([-3.0, 1, -1, 2]))
    magnitude = buffer.set_priorities(state, index, jnp.array([3.0, 1, 1, 2]))
    np.testing.assert_array_equal(signed.nodes, magnitude.nodes)
    np.testing.assert_array_equal(signed.max_priority, [3.0])
    drawn = buffer.sample(signed, jax.random.key(2))
    p = np.array([3.0, 1, 1, 2]) ** 0.6
    np.testing.assert_allclose(
        drawn.probability, p[np.asarray(drawn.index)] / p.sum(), rtol=1e-6
    )


def test_set_priorities_converts_lists_and_checks_the_shape():
    buffer, state = _prioritised()
    listed = buffer.set_priorities(state, [0, 1], [1.0, 2.0])
    arrays = buffer.set_priorities(state, jnp.array([0, 1]), jnp.array([1.0, 2.0]))
    np.testing.assert_array_equal(listed.nodes, arrays.nodes)
    refuse = refusal(buffer.set_priorities, state, jnp.arange(4), jnp.ones(3))
    assert refuse == (
        "set_priorities takes one priority per index: index has shape [4], "
        "priority [3]; give priorities of index's shape (one per sampled item)."
    )
    # As many priorities in another shape ([T, B] TD errors for [B * T] indices).
    refuse = refusal(buffer.set_priorities, state, jnp.arange(4), jnp.ones((2, 2)))
    assert "index has shape [4], priority [2, 2]; give priorities" in refuse
    add = refusal(buffer.add, state, {"o": jnp.ones((2, 2))}, jnp.ones(3))
    assert add.startswith("add takes one priority per item")  # not an index


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: make_uniform_buffer(100.0, 8),
            "capacity=100.0 must be an int (a count); pass capacity=100.",
        ),
        (
            lambda: make_prioritised_buffer(100, 2.5),
            "batch_size=2.5 must be an int (a count); pass a whole number.",
        ),
        (
            lambda: make_uniform_buffer(100, True),
            "batch_size=True must be an int (a count); pass a whole number.",
        ),
        (
            lambda: make_sequence_buffer(4, 3.0, 2),
            "sequence_length=3.0 must be an int (a count); pass sequence_length=3.",
        ),
        (lambda: make_sequence_buffer(4, 0, 2), "sequence_length=0 must be >= 1."),
    ],
)
def test_sizes_must_be_ints(make, message):
    assert refusal(make) == message


def test_numpy_int_sizes_are_ints():
    assert make_uniform_buffer(np.int64(4), np.int32(2)).capacity == 4
