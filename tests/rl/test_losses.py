import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import rl


def test_clipped_surrogate_hand_computed():
    ratio = jnp.array([0.5, 1.5, 1.1, 0.9])
    adv = jnp.array([1.0, 1.0, -1.0, -1.0])
    # eps = 0.2: min(rA, clip(r)A) = [0.5, 1.2, -1.1, -0.9]; mean = -0.075
    loss = rl.clipped_surrogate_loss(ratio, adv, 0.2)
    assert float(loss) == pytest.approx(0.075)


def test_value_loss_plain_and_clipped():
    v = jnp.array([2.0, 0.0])
    target = jnp.array([1.0, 1.0])
    assert float(rl.value_loss(v, target)) == pytest.approx(0.5 * (1 + 1) / 2)
    v_old = jnp.array([1.0, 1.0])
    # clipped v = [1.2, 0.8]: max((1)^2, 0.2^2) = 1; max(1, 0.04) = 1
    assert float(rl.value_loss(v, target, v_old, 0.2)) == pytest.approx(0.5)
    v_old = jnp.array([3.0, -1.0])
    # clipped v = [2.8, -0.8]: max(1, 3.24) = 3.24; max(1, 3.24) = 3.24
    assert float(rl.value_loss(v, target, v_old, 0.2)) == pytest.approx(0.5 * 3.24)


def test_normalize_advantages():
    adv = jnp.array([1.0, 2.0, 3.0, 6.0])
    out = np.asarray(rl.normalize_advantages(adv))
    np.testing.assert_allclose(out, (adv - 3.0) / (np.std(adv) + 1e-8), rtol=1e-5)


def test_normalize_advantages_per_row_of_axis():
    # Rows of [M, N] are separate minibatches: each standardised on its own.
    adv = np.array([[1.0, 2.0, 3.0, 6.0], [100.0, 100.5, 99.5, 100.0]], np.float32)
    out = np.asarray(rl.normalize_advantages(jnp.asarray(adv), axis=1))
    for row, got in zip(adv, out, strict=True):
        want = (row - row.mean()) / (row.std() + 1e-8)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
