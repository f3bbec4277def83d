"""n-step targets against a loop written from the definition."""

import jax
import numpy as np
import pytest

from purejaxdrl.rl.nstep import _cut, n_step_targets


def reference(r, d, trunc, n, gamma):
    """Plain loops: sum rewards until n steps, the unroll's end or the episode's."""
    length = len(r)
    ret, boot, index = np.zeros(length), np.zeros(length), np.zeros(length, int)
    for t in range(length):
        g, scale = 0.0, 1.0
        for j in range(n):
            if t + j >= length:
                break
            g += scale * r[t + j]
            scale *= gamma * d[t + j]
            index[t] = t + j
            if d[t + j] == 0 or trunc[t + j]:
                break
        ret[t], boot[t] = g, scale
    return ret, boot, index


@pytest.mark.parametrize("n", [1, 3, 5])
def test_matches_the_definition_across_terminations_and_truncations(n):
    rng = np.random.default_rng(n)
    length = 12
    r = rng.normal(size=length).astype(np.float32)
    d = np.ones(length, np.float32)
    trunc = np.zeros(length, bool)
    d[[3, 9]] = 0.0  # terminations
    # Time limits; at step 3 it fires on the step that terminates, where the
    # termination must win: no bootstrap.
    trunc[[3, 6, 10]] = True
    got = jax.jit(n_step_targets, static_argnums=3)(r, d, trunc, n, 0.9)
    want = reference(r, d, trunc, n, 0.9)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    assert want[1][3] == 0.0  # the reference's own check of the both-flags step


def test_hand_values():
    # r = 1 everywhere, gamma 0.5, n 3; termination after step 2, truncation
    # after step 4, unroll of 6.
    r, d = np.ones(6, np.float32), np.array([1, 1, 0, 1, 1, 1], np.float32)
    trunc = np.array([0, 0, 0, 0, 1, 0], bool)
    ret, boot, index = n_step_targets(r, d, trunc, 3, 0.5)
    np.testing.assert_allclose(ret, [1.75, 1.5, 1.0, 1.5, 1.0, 1.0])
    # Step 0: 3 steps but the third terminates: no bootstrap. Step 3: two steps
    # to the truncation, bootstrap with 0.25 from step 4's final observation.
    np.testing.assert_allclose(boot, [0.0, 0.0, 0.0, 0.25, 0.5, 0.5])
    np.testing.assert_array_equal(index, [2, 2, 2, 4, 4, 5])
    # A fractional environment discount weighs the later rewards as it does the
    # bootstrap: G_0 = 1 + 0.5 * 0.5 * 2 + 0.25 * 0.5 * 4, γ_boot = 0.125 * 0.5.
    r, d = np.array([1, 2, 4], np.float32), np.array([0.5, 1, 1], np.float32)
    ret, boot, _ = n_step_targets(r, d, np.zeros(3, bool), 3, 0.5)
    np.testing.assert_allclose(ret, [2.0, 4.0, 4.0])
    np.testing.assert_allclose(boot, [0.0625, 0.25, 0.5])


def test_rejects_mismatched_shapes_and_ranks():
    ones, no = jax.numpy.ones, jax.numpy.zeros
    # Rewards for 4 steps, discounts for 3: once clamped gathers, no error.
    with pytest.raises(ValueError, match=r"r_t \[4\], discount_t \[3\]"):
        n_step_targets(ones(4), ones(3), no(3, bool), 2, 0.5)
    # A [T, B] batch without vmap: once meaningless rows when T == B.
    with pytest.raises(ValueError, match=r"in_axes=\(1, 1, 1, None, None\)"):
        n_step_targets(ones((3, 3)), ones((3, 3)), no((3, 3), bool), 2, 0.5)


@pytest.mark.parametrize(
    ("n", "got", "fix"),
    [
        (0, "n=0 (int)", "n=1 for one-step targets, or more"),
        (3.0, "n=3.0 (float)", "n=3"),
        (1.0, "n=1.0 (float)", "n=1"),
        (2.5, "n=2.5 (float)", "a whole number of steps"),
        (True, "n=True (bool)", "n=1 for one-step targets, or more"),
        (np.float32(2), "n=np.float32(2.0) (float32)", "n=2"),
        (np.int64(0), "n=np.int64(0) (int64)", "n=1 for one-step targets, or more"),
        (
            jax.numpy.int32(0),
            "n=Array(0, dtype=int32) (ArrayImpl)",
            "n=1 for one-step targets, or more",
        ),
        # One number in an array of one axis: shown whole (its repr is short).
        (
            np.array([3]),
            "n=array([3]) (ndarray)",
            "one Python int, the number of steps",
        ),
        # A long repr is cut at a space, with "...", not inside a number.
        (
            list(range(1000)),
            "n=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, "
            "19, 20, ... (list)",
            "one Python int, the number of steps",
        ),
        (
            jax.numpy.float32(2.5),
            "n=Array(2.5, dtype=float32) (ArrayImpl)",
            "a whole number of steps",
        ),
    ],
)
def test_a_horizon_that_is_not_an_int_of_one_or_more_is_one_line(n, got, fix):
    # Before: 3.0 failed in `range` ("'float' object cannot be interpreted as
    # an integer"), naming neither n nor the fix.
    ones, no = jax.numpy.ones, jax.numpy.zeros
    with pytest.raises(ValueError) as error:
        n_step_targets(ones(3), ones(3), no(3, bool), n, 0.5)
    assert str(error.value) == (
        f"n_step_targets takes the horizon n as a Python int >= 1; got {got}; "
        f"pass {fix}."
    )


def test_a_traced_horizon_is_told_to_be_static():
    with pytest.raises(ValueError) as error:
        jax.jit(n_step_targets)(np.ones(3), np.ones(3), np.zeros(3, bool), 2, 0.5)
    assert str(error.value) == (
        "n_step_targets takes the horizon n as a Python int >= 1; got n=a traced "
        "array of shape () and dtype int32 (DynamicJaxprTracer); pass a Python int "
        "(mark it static under jit: static_argnums=3)."
    )


def test_an_integer_horizon_of_numpy_is_taken_as_an_int():
    r, d, trunc = np.ones(5, np.float32), np.ones(5, np.float32), np.zeros(5, bool)
    for got, want in zip(
        n_step_targets(r, d, trunc, np.int64(2), 0.9),
        n_step_targets(r, d, trunc, 2, 0.9),
        strict=True,
    ):
        np.testing.assert_array_equal(got, want)


def test_a_concrete_jax_integer_horizon_is_taken_as_an_int():
    # Before: refused ("pass a Python int (mark it static under jit...)"),
    # though nothing was traced and `range` took it.
    r, d, trunc = np.ones(5, np.float32), np.ones(5, np.float32), np.zeros(5, bool)
    for got, want in zip(
        n_step_targets(r, d, trunc, jax.numpy.int32(3), 0.9),
        n_step_targets(r, d, trunc, 3, 0.9),
        strict=True,
    ):
        np.testing.assert_array_equal(got, want)


def test_an_array_horizon_is_shown_by_shape_and_dtype_not_whole():
    # Before: the message held the array's whole repr, thousands of characters.
    ones, no = jax.numpy.ones, jax.numpy.zeros
    with pytest.raises(ValueError) as error:
        n_step_targets(ones(3), ones(3), no(3, bool), jax.numpy.arange(1000), 0.5)
    assert str(error.value) == (
        "n_step_targets takes the horizon n as a Python int >= 1; got n=an array "
        "of shape (1000,) and dtype int32 (ArrayImpl); pass one Python int, the "
        "number of steps."
    )


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_truncation_flags_as_numbers_are_taken_as_flags(dtype):
    # episode_aware_gae takes 0./1. truncation flags; this failed on them with
    # "not does not accept dtype float32", naming neither argument nor fix.
    rng = np.random.default_rng(7)
    r = rng.normal(size=8).astype(np.float32)
    d = np.array([1, 1, 0, 1, 1, 1, 1, 1], np.float32)
    trunc = np.array([0, 0, 0, 0, 1, 0, 0, 0], bool)
    got = n_step_targets(r, d, trunc.astype(dtype), 3, 0.9)
    want = reference(r, d, trunc, 3, 0.9)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_a_long_value_is_cut_at_a_space_and_80_characters_are_whole():
    # The refusal names `n` in one short line, no number shown in part (mut15 #14).
    assert _cut("a" * 80) == "a" * 80
    assert _cut("a" * 81) == "a" * 76 + " ..."
    assert _cut("a " + "x" * 75 + " " + "y" * 10) == "a ..."  # not "a xxx"
    # The cut lands on a space: the whole word before it is kept.
    assert _cut("a " + "x" * 74 + " " + "y" * 10) == "a " + "x" * 74 + " ..."
