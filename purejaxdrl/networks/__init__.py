"""Flax modules behind pure `Network(init, apply)` pairs.

- `base`: NetworkConfig, Network, dense layers, activations.
- `matmul`: dense layers' matmul, its weight gradient a packed dot on CPU.
- `conv`: convolutions as matmuls on CPU (native elsewhere).
- `pixels`: the Nature DQN CNN and the IMPALA ResNet for Atari frames.
- `torsos`: observations to features (mlp, cnn, nature, impala_resnet, and
  the user's own, `register_torso`).
- `recurrent`: actor-critics with an LSTM or GRU core between torso and heads.
- `cores`: the LSTM, GRU and minGRU cores; `core_scan` the LSTM's and GRU's
  step and the learner's scan over time, `mingru` minGRU's step and scan.
- `heads`: actor-critic, Q-networks, SAC's actor and twin critics.
- `specs`: the factories' check that their specs are `env.Box`/`env.Discrete`.

Every network is differentiable in reverse mode only (`jax.grad`, `jax.vjp`,
and reverse over reverse for Hessian-vector products): the dense layers'
matmul and the LSTM's and GRU's scan are `jax.custom_vjp`s, for a faster
backward pass on CPU (`matmul`, `core_scan`), and forward mode (`jax.jvp`,
`jax.jacfwd`) raises on them.
"""

from purejaxdrl.networks.base import CORES, TORSOS, Network, NetworkConfig
from purejaxdrl.networks.conv import conv_same
from purejaxdrl.networks.heads import (
    SACNetworks,
    make_actor_critic,
    make_q_network,
    make_sac_networks,
)
from purejaxdrl.networks.recurrent import AnyNetwork, RecurrentNetwork
from purejaxdrl.networks.torsos import Torso, register_torso, torso_names

__all__ = [
    "AnyNetwork",
    "CORES",
    "RecurrentNetwork",
    "TORSOS",
    "Torso",
    "Network",
    "NetworkConfig",
    "SACNetworks",
    "conv_same",
    "make_actor_critic",
    "make_q_network",
    "make_sac_networks",
    "register_torso",
    "torso_names",
]
