"""The CNN torso's convolution, against the definition and against `lax.conv`."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.networks import conv_same


def _numpy_conv_same(x: np.ndarray, kernel: np.ndarray, bias: np.ndarray):
    """Cross-correlation, stride 1, zero padding k//2, by its definition."""
    n, h, w, _ = x.shape
    k, features = kernel.shape[0], kernel.shape[-1]
    pad = k // 2
    padded = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    out = np.zeros((n, h, w, features))
    for y in range(h):
        for x_ in range(w):
            window = padded[:, y : y + k, x_ : x_ + k, :]  # [n, k, k, c]
            out[:, y, x_] = np.einsum("nijc,ijcf->nf", window, kernel) + bias
    return out


@pytest.mark.parametrize("k", [1, 3, 5])
def test_conv_same_matches_the_definition(k):
    rng = np.random.default_rng(k)
    x = rng.normal(size=(2, 6, 5, 3)).astype(np.float32)
    kernel = rng.normal(size=(k, k, 3, 4)).astype(np.float32)
    bias = rng.normal(size=4).astype(np.float32)
    np.testing.assert_allclose(
        conv_same(x, kernel, bias), _numpy_conv_same(x, kernel, bias), atol=1e-5
    )


def test_conv_same_gradients_match_lax_conv():
    kx, kk = jax.random.split(jax.random.key(0))
    x = jax.random.normal(kx, (4, 10, 10, 4))
    kernel = 0.1 * jax.random.normal(kk, (3, 3, 4, 8))
    bias = jnp.arange(8.0)

    def lax_conv(x, kernel, bias):
        dims = ("NHWC", "HWIO", "NHWC")
        out = jax.lax.conv_general_dilated(
            x, kernel, (1, 1), "SAME", (1, 1), (1, 1), dims
        )
        return out + bias

    def loss(conv):
        return lambda *args: jnp.sum(jnp.sin(conv(*args)))

    ours = jax.grad(loss(conv_same), argnums=(0, 1, 2))(x, kernel, bias)
    ref = jax.grad(loss(lax_conv), argnums=(0, 1, 2))(x, kernel, bias)
    for a, b in zip(ours, ref, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_cnn_torso_params_have_conv_shapes():
    net = pjd.networks.make_actor_critic(
        pjd.NetworkConfig(torso="cnn", conv_features=16, hidden_sizes=(32,)),
        Box((10, 10, 4)),
        Discrete(3),
    )
    params = net.init(jax.random.key(0), jnp.zeros((10, 10, 4)))
    conv = params["params"]["actor_torso"]["_Conv_0"]
    assert conv["kernel"].shape == (3, 3, 4, 16) and conv["bias"].shape == (16,)
    policy, value = net.apply(params, jnp.ones((5, 10, 10, 4)))
    assert policy.shape == (5, 3) and value.shape == (5,)
