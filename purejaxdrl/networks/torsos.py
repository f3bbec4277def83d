"""Torsos: observations to features, before the heads.

`mlp` flattens the observation; `cnn` adds one 3x3 conv layer (MinAtar);
`nature` and `impala_resnet` put an Atari conv stack (`pixels.py`) first. Every torso
ends in the dense layers of `hidden_sizes`, each with a LayerNorm before its
activation when `norm` is `layer_norm`.
"""

import flax.linen as nn
import jax
import numpy as np

from purejaxdrl.env.base import Box
from purejaxdrl.networks.base import (
    ACTIVATIONS,
    NORMS,
    PIXEL_TORSOS,
    TORSOS,
    NetworkConfig,
    dense,
)
from purejaxdrl.networks.conv import _Conv
from purejaxdrl.networks.pixels import ImpalaResNet, NatureCNN, frames, min_size


class _Torso(nn.Module):
    config: NetworkConfig
    obs_ndim: int

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        act = ACTIVATIONS[self.config.activation]
        batch_shape = obs.shape[: obs.ndim - self.obs_ndim]
        x = obs
        torso = self.config.torso
        if torso != "mlp":
            x = x.reshape((-1, *obs.shape[-self.obs_ndim :]))
        if torso == "cnn":
            x = nn.relu(_Conv(self.config.conv_features)(x))
        elif torso == "nature":
            x = NatureCNN()(frames(x))
        elif torso == "impala_resnet":
            x = ImpalaResNet(self.config.resnet_channels)(frames(x))
        x = x.reshape((*batch_shape, -1))
        for width in self.config.hidden_sizes:
            x = dense(width, np.sqrt(2.0))(x)
            if self.config.norm == "layer_norm":
                # Only when asked: a LayerNorm's parameters would change every
                # other network's parameter tree.
                x = nn.LayerNorm()(x)
            x = act(x)
        return x


def check_torso(config: NetworkConfig, obs_spec: Box) -> None:
    """Raises ValueError (one line: value, rule, fix) for a torso that cannot be.

    An unknown torso, activation or norm, a conv torso on observations that are not
    images, or frames too small for the Nature CNN.
    """
    if config.torso not in TORSOS:
        raise ValueError(
            f"network.torso={config.torso!r} is not one of {TORSOS}; pick one of them."
        )
    if config.activation not in ACTIVATIONS:
        raise ValueError(
            f"network.activation={config.activation!r} is not one of "
            f"{tuple(ACTIVATIONS)}; pick one of them."
        )
    if config.norm not in NORMS:
        raise ValueError(
            f"network.norm={config.norm!r} is not one of {NORMS}; pick one of them."
        )
    if config.torso != "mlp" and len(obs_spec.shape) != 3:
        raise ValueError(
            f"network.torso={config.torso!r} needs image observations [H, W, C] "
            f"(or [C, H, W]), got shape {obs_spec.shape}; use --network.torso mlp."
        )
    if config.torso in PIXEL_TORSOS:
        shape = sorted(obs_spec.shape)[1:]  # H and W, whichever end C is at
        if min(shape) < min_size(config.torso):
            raise ValueError(
                f"network.torso={config.torso!r} needs frames of at least "
                f"{min_size(config.torso)}x{min_size(config.torso)}, got "
                f"{obs_spec.shape}; use --network.torso impala_resnet or cnn."
            )
        if config.torso == "impala_resnet" and not config.resnet_channels:
            raise ValueError(
                "network.resnet_channels=() needs at least one stack, e.g. "
                "--network.resnet-channels 16 32 32."
            )
