"""R2D2's value rescaling h and h^-1 near 0, in float32 against float64."""

import numpy as np
import pytest

from purejaxdrl.rl.value_rescaling import rescale, unscale


def h64(x, eps):
    """Pohlen et al. (2018): h(x) = sign(x) (sqrt(|x| + 1) - 1) + eps x, float64."""
    x = np.asarray(x, np.float64)
    return np.sign(x) * (np.sqrt(np.abs(x) + 1.0) - 1.0) + eps * x


def h64_inverse(y, eps):
    """The root of h(x) = y in float64, by Newton from the closed form's guess.

    Newton on h itself, not a rewrite of the library's closed form: h is
    increasing with h'(x) = 1 / (2 sqrt(|x| + 1)) + eps.
    """
    y = np.asarray(y, np.float64)
    x = np.sign(y) * ((np.abs(y) + 1.0) ** 2 - 1.0)  # h^-1 with eps = 0
    for _ in range(60):
        x = x - (h64(x, eps) - y) / (0.5 / np.sqrt(np.abs(x) + 1.0) + eps)
    return x


@pytest.mark.parametrize("eps", [1e-3, 1e-2])
def test_rescale_and_unscale_keep_their_relative_precision_near_zero(eps):
    # sqrt(|x| + 1) - 1 and u^2 - 1 cancel in float32 near 0 (19% relative
    # error of h^-1(h(x)) at x = 1e-6 before): h and h^-1 must stay within a
    # few float32 ulps of float64 down to tiny values, and far from 0 too.
    mags = np.concatenate([np.logspace(-7, -3, 9), [0.5, 3.0, 1e3, 1e6]])
    x = np.concatenate([mags, -mags]).astype(np.float32)
    y = np.asarray(rescale(x, eps))
    np.testing.assert_allclose(y, h64(x, eps), rtol=1e-6)
    want = h64_inverse(y.astype(np.float64), eps)
    np.testing.assert_allclose(np.asarray(unscale(y, eps)), want, rtol=2e-6)
    # And the round trip at x ~ 1e-6, which the absolute error hid.
    back = np.asarray(unscale(rescale(x, eps), eps))
    np.testing.assert_allclose(back, x, rtol=2e-6)
    assert float(rescale(np.float32(0), eps)) == float(unscale(np.float32(0), eps))
    assert float(unscale(np.float32(0), eps)) == 0.0


def test_the_default_eps_of_h_and_its_inverse_agree():
    # Every other test passes eps explicitly, as R2D2 does; a user calling
    # both with their defaults must get x back.
    x = np.float32([-100.0, -1.0, 0.5, 3.0, 1e3])
    np.testing.assert_allclose(unscale(rescale(x)), x, rtol=1e-5)
