"""The Atari torsos: the Nature CNN and the IMPALA ResNet.

Parameter counts by hand from the papers' layer lists; the CPU lowering (im2col
and a matmul) against `lax.conv_general_dilated`, values and gradients; frames
read channels-first or channels-last, uint8 or float, scaled by 1/255.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.networks import NetworkConfig, make_actor_critic
from purejaxdrl.networks.conv import im2col_conv, xla_conv
from purejaxdrl.networks.pixels import channels_first, frames
from purejaxdrl.setup_warnings import (
    SetupWarning,
    forget_warnings,
    quiet_setup_warnings,
)


def _count(tree) -> int:
    return sum(x.size for x in jax.tree.leaves(tree))


def _conv(k, cin, cout):
    return k * k * cin * cout + cout


def test_nature_cnn_parameters_by_hand():
    config = NetworkConfig(torso="nature", hidden_sizes=(512,), shared_torso=True)
    net = make_actor_critic(config, Box((4, 84, 84)), Discrete(18))
    params = net.init(jax.random.key(0), jnp.zeros((1, 4, 84, 84), jnp.uint8))
    # 32 8x8 on 4 channels, 64 4x4, 64 3x3; 7x7x64 = 3136 -> 512; heads.
    torso = _conv(8, 4, 32) + _conv(4, 32, 64) + _conv(3, 64, 64) + 3136 * 512 + 512
    heads = 512 * 18 + 18 + 512 + 1
    assert _count(params) == torso + heads == 1_684_128 + 9_747


def test_impala_resnet_parameters_by_hand():
    config = NetworkConfig(
        torso="impala_resnet", hidden_sizes=(256,), shared_torso=True
    )
    net = make_actor_critic(config, Box((84, 84, 4)), Discrete(6))
    params = net.init(jax.random.key(0), jnp.zeros((84, 84, 4)))
    stacks, cin = 0, 4
    for c in (16, 32, 32):  # a conv, then 2 residual blocks of 2 convs each
        stacks += _conv(3, cin, c) + 4 * _conv(3, c, c)
        cin = c
    dense = 11 * 11 * 32 * 256 + 256  # 84 -> 42 -> 21 -> 11 after each pool
    assert _count(params) == stacks + dense + 256 * 6 + 6 + 256 + 1


@pytest.mark.parametrize("torso", ["nature", "impala_resnet"])
def test_frames_any_layout_and_dtype_give_the_same_output(torso):
    config = NetworkConfig(torso=torso, hidden_sizes=(32,))
    chw = make_actor_critic(config, Box((4, 84, 84)), Discrete(6))
    hwc = make_actor_critic(config, Box((84, 84, 4)), Discrete(6))
    frames = jax.random.randint(jax.random.key(1), (2, 3, 4, 84, 84), 0, 256)
    frames = frames.astype(jnp.uint8)
    params = chw.init(jax.random.key(0), frames[0, 0])
    logits, value = chw.apply(params, frames)
    assert logits.shape == (2, 3, 6) and value.shape == (2, 3)
    # The same params read [H, W, C] frames, and float frames 0..255 alike.
    moved = jnp.moveaxis(frames, -3, -1)
    np.testing.assert_allclose(hwc.apply(params, moved)[0], logits, atol=1e-5)
    as_float = chw.apply(params, frames.astype(jnp.float32))[0]
    np.testing.assert_allclose(as_float, logits, atol=1e-5)


@pytest.mark.parametrize(("k", "stride", "size"), [(8, 4, 84), (4, 2, 20), (3, 1, 9)])
def test_im2col_matches_xla_convolution_and_its_gradients(k, stride, size):
    keys = jax.random.split(jax.random.key(0), 3)
    x = jax.random.normal(keys[0], (2, size, size, 5))
    kernel = jax.random.normal(keys[1], (k, k, 5, 7))
    bias = jax.random.normal(keys[2], (7,))

    def loss(conv, x, kernel, bias):
        return jnp.sum(jnp.sin(conv(x, kernel, bias, stride)))

    ours = jax.grad(lambda *a: loss(im2col_conv, *a), argnums=(0, 1, 2))
    ref = jax.grad(lambda *a: loss(xla_conv, *a), argnums=(0, 1, 2))
    np.testing.assert_allclose(
        im2col_conv(x, kernel, bias, stride),
        xla_conv(x, kernel, bias, stride),
        rtol=1e-4,
        atol=1e-4,
    )
    for a, b in zip(ours(x, kernel, bias), ref(x, kernel, bias), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(
    ("config", "shape", "message"),
    [
        (NetworkConfig(torso="nature"), (4,), "needs image observations"),
        (NetworkConfig(torso="nature"), (4, 30, 30), "at least 36x36"),
        (
            NetworkConfig(torso="impala_resnet", resnet_channels=()),
            (4, 84, 84),
            "must be one or more positive widths",
        ),
        (NetworkConfig(torso="resnet"), (4, 84, 84), "is not one of"),
    ],
)
def test_bad_pixel_torsos_are_one_line_errors(config, shape, message):
    with pytest.raises(ValueError, match=message):
        make_actor_critic(config, Box(shape), Discrete(6))


def test_the_cnn_torso_refuses_channels_first_frames():
    # EnvPool's [4, 84, 84] stacks: `cnn` has no transpose, so it would read the
    # 4 frames as image rows and the 84 columns as channels (a 3x3x84 kernel).
    with pytest.raises(ConfigError, match=r"'cnn' reads observations as \[H, W, C\]"):
        make_actor_critic(NetworkConfig(torso="cnn"), Box((4, 84, 84)), Discrete(6))
    # Channels-last images, MinAtar's among them, still build.
    for shape in ((10, 10, 4), (10, 10, 10), (84, 84, 4), (8, 8, 16)):
        make_actor_critic(NetworkConfig(torso="cnn"), Box(shape), Discrete(6))


def test_small_frames_are_pointed_at_the_torso_that_fits_them():
    # impala_resnet divides by 255 too: on MinAtar's 0/1 planes it would scale
    # them to 1/255, so the fix the message names is `cnn` alone.
    with pytest.raises(ConfigError, match=r"use --network.torso cnn\.$"):
        make_actor_critic(NetworkConfig(torso="nature"), Box((10, 10, 4)), Discrete(6))
    # Small channels-first frames: `cnn` refuses them, impala_resnet fits.
    with pytest.raises(ConfigError, match=r"use --network.torso impala_resnet \("):
        make_actor_critic(NetworkConfig(torso="nature"), Box((4, 10, 10)), Discrete(6))
    resnet = NetworkConfig(torso="impala_resnet")
    make_actor_critic(resnet, Box((4, 10, 10)), Discrete(6))


@pytest.mark.parametrize(
    "shape, first",
    [((4, 84, 84), True), ((4, 10, 10), True), ((3, 210, 160), True),
     ((84, 84, 4), False), ((10, 10, 4), False), ((10, 10, 10), False),
     ((63, 63, 3), False), ((130, 110, 3), False), ((210, 160, 3), False)],
)  # fmt: skip
def test_frames_keep_the_layouts_of_atari_minatar_and_craftax(shape, first):
    # EnvPool's [C, H, W] stacks, MinAtar's [10, 10, C] planes and Craftax's
    # [H, W, 3] pixels: the channels are the smallest axis, first or last.
    assert channels_first(shape) is first
    x = jax.random.uniform(jax.random.key(0), (2, *shape), maxval=255.0)
    hwc = np.transpose(x, (0, 2, 3, 1)) if first else x
    np.testing.assert_allclose(frames(x), np.asarray(hwc) / 255.0, rtol=1e-6)
    with quiet_setup_warnings():  # MinAtar's: the warning is tested below
        make_actor_critic(NetworkConfig(torso="impala_resnet"), Box(shape), Discrete(3))


@pytest.mark.parametrize("shape", [(8, 8, 16), (8, 4, 16), (10, 4, 10), (16, 8, 16)])
def test_frames_that_read_both_ways_are_refused(shape):
    # [8, 8, 16] is 16 channels of 8x8 or 8 channels of 8x16: the rule "the
    # first axis is smaller than the last" read it channels-first, silently.
    resnet = NetworkConfig(torso="impala_resnet")
    with pytest.raises(ConfigError, match=r"cannot tell the channels") as error:
        make_actor_critic(resnet, Box(shape), Discrete(3))
    assert "\n" not in str(error.value) and str(shape) in str(error.value)
    # More planes than rows (board games) cannot follow "[H, W, C]": cnn can.
    assert "pass --network.torso cnn" in str(error.value)
    with pytest.raises(ConfigError, match=r"cannot tell the channels"):
        frames(jnp.zeros((1, *shape)))


def test_impala_resnet_on_small_channels_last_frames_warns_once_of_cnn():
    # MinAtar's 0/1 planes would reach the convolutions as [0, 1/255].
    forget_warnings()
    resnet = NetworkConfig(torso="impala_resnet")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make_actor_critic(resnet, Box((84, 84, 4)), Discrete(3))
        make_actor_critic(resnet, Box((4, 10, 10)), Discrete(3))  # [C, H, W]
        assert not [w for w in caught if issubclass(w.category, SetupWarning)]
        make_actor_critic(resnet, Box((10, 10, 4)), Discrete(3))
        make_actor_critic(resnet, Box((10, 10, 7)), Discrete(3))
    (warning,) = [w for w in caught if issubclass(w.category, SetupWarning)]
    assert "use --network.torso cnn" in str(warning.message)
    assert "[0, 1/255]" in str(warning.message)
    forget_warnings()
