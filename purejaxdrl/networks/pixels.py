"""Conv stacks for Atari frames: the Nature DQN CNN and the IMPALA ResNet.

Both take raw frames, 0..255 in any dtype (host runners cast uint8 to float32
on the device), and scale them by 1/255 themselves, whatever the dtype: nothing
tells them an observation is already in [0, 1], so on Craftax's `*-Pixels-*`
ids and MinAtar's 0/1 planes they would scale twice (inputs in [0, 1/255]);
use `cnn` or `mlp` there. Frames come channels-last [H, W, C] or, as
EnvPool gives them, channels-first [C, H, W]: the channels are the smallest
axis, the first one strictly (then the frames are transposed on the device)
or else the last one; a shape whose smallest axis is neither, as [8, 8, 16],
reads both ways and is refused (`channels_first`). The dense layers after the
stack are the torso's (`hidden_sizes`).
"""

from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

from purejaxdrl.config import ConfigError
from purejaxdrl.networks.conv import Conv


def channels_first(shape: Sequence[int], torso: str = "nature") -> bool:
    """Whether a frame of `shape` [C, H, W] is channels-first, not [H, W, C].

    Raises:
      ConfigError: (one line) a shape that is not 3-D, or whose smallest axis
        is neither its first alone nor its last: it reads as [C, H, W] and as
        [H, W, C] (e.g. [8, 8, 16]: 8 channels of 8x16 or 16 of 8x8).

    """
    shape = tuple(shape)
    if len(shape) == 3 and shape[0] < min(shape[1:]):
        return True  # EnvPool's [4, 84, 84]
    if len(shape) == 3 and shape[2] <= min(shape[:2]):
        return False  # [84, 84, 4], MinAtar's [10, 10, C], Craftax's [H, W, 3]
    raise ConfigError(
        f"network.torso={torso!r} cannot tell the channels of frames of shape "
        f"{shape}: it reads [C, H, W] when the first axis is the smallest, "
        "[H, W, C] when the last is; give the environment [H, W, C] "
        "observations with fewer channels than rows and columns, or, for more "
        "planes than that (board games' [8, 8, 119]), pass --network.torso cnn, "
        "which reads [H, W, C] as given and does not rescale."
    )


def frames(obs: jax.Array) -> jax.Array:
    """[N, *frame] raw frames -> [N, H, W, C] float32 in [0, 1]."""
    if channels_first(obs.shape[1:]):  # [N, C, H, W]
        obs = jnp.transpose(obs, (0, 2, 3, 1))
    return obs.astype(jnp.float32) / 255.0


def min_size(torso: str) -> int:
    """The smallest H and W the torso's conv stack accepts."""
    # Nature: 8/4 then 4/2 then 3/1, all VALID: (36-8)/4+1 = 8, (8-4)/2+1 = 3.
    return 36 if torso == "nature" else 1


class NatureCNN(nn.Module):
    """Mnih et al. (2015): 32 8x8/4, 64 4x4/2, 64 3x3/1 (VALID, relu), flattened.

    84x84 frames give 7x7x64 = 3136 features.
    """

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        for features, kernel, stride in ((32, 8, 4), (64, 4, 2), (64, 3, 1)):
            x = nn.relu(Conv(features, kernel, stride)(x))
        return x.reshape((x.shape[0], -1))


class _ResidualBlock(nn.Module):
    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        channels = x.shape[-1]
        y = Conv(channels, 3, padding="SAME")(nn.relu(x))
        y = Conv(channels, 3, padding="SAME")(nn.relu(y))
        return x + y


class ImpalaResNet(nn.Module):
    """The IMPALA ResNet (Espeholt et al., 2018, fig. 3), flattened.

    Per stack a 3x3 conv, a 3x3/2 max-pool and two residual blocks; then relu.
    84x84 frames with channels (16, 32, 32) give 11x11x32 = 3872 features.
    """

    channels: tuple[int, ...] = (16, 32, 32)

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        for channels in self.channels:
            x = Conv(channels, 3, padding="SAME")(x)
            x = nn.max_pool(x, (3, 3), strides=(2, 2), padding="SAME")
            x = _ResidualBlock()(x)
            x = _ResidualBlock()(x)
        x = nn.relu(x)
        return x.reshape((x.shape[0], -1))
