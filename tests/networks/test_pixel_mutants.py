"""The Atari torsos and their layers against NumPy and Flax, branch by branch.

Gaps that mutation testing found: the layers' init and padding against
`nn.Conv`, the accelerators' branches (which CPU programs never lower: they are
run here by making `lax.platform_dependent` take its default), the torsos'
forward passes layer by layer, and which products dense layers send to
`matmul`. References: NumPy by the definitions, or Flax's own layers.
"""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.networks import NetworkConfig, make_actor_critic
from purejaxdrl.networks.conv import Conv, _Conv, conv_valid, xla_conv
from purejaxdrl.networks.matmul import dot_general, matmul
from purejaxdrl.networks.pixels import ImpalaResNet, NatureCNN
from tests.helpers import randomised

DENSE = (((1,), (0,)), ((), ()))


def _default_branch(monkeypatch) -> list:
    """`lax.platform_dependent` takes the accelerators' branch; its calls listed."""
    taken = []

    def default_branch(*args, cpu, default):
        taken.append(default)
        return default(*args)

    monkeypatch.setattr(jax.lax, "platform_dependent", default_branch)
    return taken


def _np_conv(x, kernel, bias, stride=1):
    """'VALID' cross-correlation by its definition: [N, H, W, C] -> [N, h, w, F]."""
    k = kernel.shape[0]
    h = (x.shape[1] - k) // stride + 1
    w = (x.shape[2] - k) // stride + 1
    out = np.zeros((x.shape[0], h, w, kernel.shape[-1]))
    for i in range(h):
        for j in range(w):
            window = x[:, i * stride : i * stride + k, j * stride : j * stride + k]
            out[:, i, j] = np.einsum("nijc,ijcf->nf", window, kernel) + bias
    return out


def _np_conv_same(x, kernel, bias):
    pad = kernel.shape[0] // 2
    return _np_conv(np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0))), kernel, bias)


def _np_max_pool_same(x, window=3, stride=2):
    """XLA's 'SAME' max-pool: ceil(n / stride) outputs, -inf padding, the odd
    cell of padding after the input."""
    pads = []
    for n in x.shape[1:3]:
        total = max((-(-n // stride) - 1) * stride + window - n, 0)
        pads.append((total // 2, total - total // 2))
    padded = np.pad(x, ((0, 0), *pads, (0, 0)), constant_values=-np.inf)
    h = (padded.shape[1] - window) // stride + 1
    w = (padded.shape[2] - window) // stride + 1
    out = np.zeros((x.shape[0], h, w, x.shape[3]))
    for i in range(h):
        for j in range(w):
            cells = padded[:, i * stride : i * stride + window]
            out[:, i, j] = cells[:, :, j * stride : j * stride + window].max((1, 2))
    return out


def _relu(x):
    return np.maximum(x, 0.0)


def _np_params(params, name):
    layer = params[name]
    return np.asarray(layer["kernel"], np.float64), np.asarray(layer["bias"])


def test_conv_layers_are_nn_conv_in_init_and_output():
    # Same key, same parameters (names, shapes, lecun-normal kernel, zero bias)
    # and, randomised, the same outputs on frames whose height and width differ.
    x = jax.random.normal(jax.random.key(1), (2, 11, 8, 3))
    cases = [
        (Conv(5, 4, 2), nn.Conv(5, (4, 4), strides=2, padding="VALID")),
        (Conv(5, 3, padding="SAME"), nn.Conv(5, (3, 3), padding="SAME")),
        (_Conv(5), nn.Conv(5, (3, 3), padding="SAME")),
    ]
    for ours, flax_conv in cases:
        params = ours.init(jax.random.key(0), x)
        jax.tree.map(
            np.testing.assert_array_equal, params, flax_conv.init(jax.random.key(0), x)
        )
        params = randomised(params, jax.random.key(2))
        np.testing.assert_allclose(
            ours.apply(params, x), flax_conv.apply(params, x), rtol=1e-5, atol=1e-5
        )


def test_the_accelerators_conv_branch_keeps_the_stride(monkeypatch):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 13, 10, 3)).astype(np.float32)
    kernel = rng.normal(size=(4, 4, 3, 5)).astype(np.float32)
    bias = rng.normal(size=5).astype(np.float32)
    taken = _default_branch(monkeypatch)
    got = conv_valid(jnp.asarray(x), jnp.asarray(kernel), jnp.asarray(bias), 3)
    assert len(taken) == 1
    want = _np_conv(x.astype(np.float64), kernel, bias, stride=3)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_cpu_programs_hold_no_convolution():
    # What conv.py is for: XLA:CPU's convolution gradients are slow inside
    # loops, so the CPU program is im2col and a matmul, forward and backward.
    x, kernel, bias = jnp.ones((2, 12, 12, 3)), jnp.ones((4, 4, 3, 5)), jnp.ones(5)

    def hlo(conv):
        loss = lambda x, k, b: jnp.sum(jnp.sin(conv(x, k, b, 2)))  # noqa: E731
        grad = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))
        return grad.lower(x, kernel, bias).compile().as_text()

    assert "convolution(" not in hlo(conv_valid)
    assert "convolution(" in hlo(xla_conv)  # the check can fail


def test_nature_cnn_is_its_three_relu_convolutions(monkeypatch):
    # 36 x 44 frames (the smallest height): 8 x 10, then 3 x 4, then 1 x 2
    # cells of 64 features, flattened row by row.
    x = jax.random.uniform(jax.random.key(0), (2, 36, 44, 3))
    cnn = NatureCNN()
    params = randomised(cnn.init(jax.random.key(1), x), jax.random.key(2))
    want = np.asarray(x, np.float64)
    for i, stride in enumerate((4, 2, 1)):
        want = _relu(_np_conv(want, *_np_params(params["params"], f"Conv_{i}"), stride))
    want = want.reshape(2, -1)
    assert want.shape == (2, 128)
    np.testing.assert_allclose(cnn.apply(params, x), want, rtol=1e-4, atol=1e-4)
    _default_branch(monkeypatch)  # the accelerators' convolutions alike
    np.testing.assert_allclose(cnn.apply(params, x), want, rtol=1e-4, atol=1e-4)


def test_impala_resnet_is_its_stacks_of_pool_and_residual_blocks():
    # Odd sizes: the 'SAME' pool pads unevenly (9 -> 5 -> 3, 7 -> 4 -> 2).
    x = jax.random.uniform(jax.random.key(0), (2, 9, 7, 2))
    resnet = ImpalaResNet((4, 3))
    params = randomised(resnet.init(jax.random.key(1), x), jax.random.key(2))
    p = params["params"]
    want = np.asarray(x, np.float64)
    for stack in range(2):
        want = _np_conv_same(want, *_np_params(p, f"Conv_{stack}"))
        want = _np_max_pool_same(want)
        for block in (2 * stack, 2 * stack + 1):
            convs = p[f"_ResidualBlock_{block}"]
            y = _np_conv_same(_relu(want), *_np_params(convs, "Conv_0"))
            y = _np_conv_same(_relu(y), *_np_params(convs, "Conv_1"))
            want = want + y
    want = _relu(want).reshape(2, -1)
    assert want.shape == (2, 3 * 2 * 3)
    np.testing.assert_allclose(resnet.apply(params, x), want, rtol=1e-4, atol=1e-4)


def test_the_nature_torso_refuses_frames_under_36_by_36():
    # 35: (35 - 8) // 4 + 1 = 7, (7 - 4) // 2 + 1 = 2, under the last 3x3
    # kernel. (36 builds: tests/networks/test_heads_by_hand.py.)
    config = NetworkConfig(torso="nature", hidden_sizes=(8,))
    with pytest.raises(ConfigError, match=r"at least 36x36, got \(4, 35, 36\)"):
        make_actor_critic(config, Box((4, 35, 36)), Discrete(3))


def test_the_accelerators_weight_gradient_is_autodiffs(monkeypatch):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 5, 4)).astype(np.float32)
    w = rng.normal(size=(4, 6)).astype(np.float32)
    taken = _default_branch(monkeypatch)
    dx, dw = jax.grad(lambda x, w: jnp.sum(jnp.sin(matmul(x, w))), (0, 1))(x, w)
    assert len(taken) == 1
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    g = np.cos(x64 @ w64)  # d sum(sin(x @ w)) / d(x @ w)
    np.testing.assert_allclose(dx, g @ w64.T, rtol=1e-4, atol=1e-4)
    want = x64.reshape(-1, 4).T @ g.reshape(-1, 6)
    np.testing.assert_allclose(dw, want, rtol=1e-4, atol=1e-4)


def test_only_default_precision_dense_products_take_matmul():
    # matmul is a custom_vjp: forward mode fails through it and works through
    # lax.dot_general, so jvp tells which one a product went to.
    x, w = jnp.ones((5, 3)), jnp.ones((3, 2))

    def jvp(**options):
        f = lambda x: dot_general(x, w, DENSE, **options)  # noqa: E731
        return jax.jvp(f, (x,), (x,))[1]

    with pytest.raises(TypeError, match="forward-mode"):
        jvp()  # a dense layer's product: matmul
    np.testing.assert_allclose(jvp(precision="highest"), np.full((5, 2), 3.0))
    np.testing.assert_allclose(
        jvp(preferred_element_type=jnp.float32), np.full((5, 2), 3.0)
    )
