"""Flax modules behind pure `Network(init, apply)` pairs.

- `base`: NetworkConfig, Network, dense layers.
- `conv`: convolutions as matmuls on CPU (native elsewhere).
- `pixels`: the Nature DQN CNN and the IMPALA ResNet for Atari frames.
- `torsos`: observations to features (mlp, cnn, nature, impala_resnet).
- `heads`: actor-critic, Q-networks, SAC's actor and twin critics.
"""

from purejaxdrl.networks.base import TORSOS, Network, NetworkConfig
from purejaxdrl.networks.conv import conv_same
from purejaxdrl.networks.heads import (
    SACNetworks,
    make_actor_critic,
    make_q_network,
    make_sac_networks,
)

__all__ = [
    "TORSOS",
    "Network",
    "NetworkConfig",
    "SACNetworks",
    "conv_same",
    "make_actor_critic",
    "make_q_network",
    "make_sac_networks",
]
