"""Flax modules behind pure `Network(init, apply)` pairs: actor-critic, Q-networks."""

import dataclasses
from collections.abc import Callable
from typing import NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.rl.distributions import Distribution, categorical, tanh_gaussian
from purejaxdrl.types import Params, PRNGKey

_ACTIVATIONS: dict[str, Callable[[jax.Array], jax.Array]] = {
    "tanh": jnp.tanh,
    "relu": nn.relu,
    "gelu": nn.gelu,
    "silu": nn.silu,
}
TORSOS = ("mlp", "cnn")


@dataclasses.dataclass(frozen=True, kw_only=True)
class NetworkConfig:
    """Architecture of an actor-critic network.

    Attributes:
      torso: `mlp` (flattened input) or `cnn` (one 3x3 conv layer, for MinAtar).
      hidden_sizes: widths of the dense layers of each tower.
      activation: one of tanh, relu, gelu, silu.
      shared_torso: policy and value heads share one torso (else two towers).
      conv_features: output channels of the conv layer (`cnn` only).

    """

    torso: str = "mlp"
    hidden_sizes: tuple[int, ...] = (64, 64)
    activation: str = "tanh"
    shared_torso: bool = False
    conv_features: int = 16


class Network(NamedTuple):
    """A pure network: `apply(params, obs)` -> (policy head output, value).

    `obs` has shape `[*batch, *obs_shape]`; outputs have `[*batch, ...]`.
    """

    init: Callable[[PRNGKey, jax.Array], Params]
    apply: Callable[[Params, jax.Array], tuple[jax.Array, jax.Array]]
    distribution: Distribution


def _dense(features: int, scale: float) -> nn.Dense:
    return nn.Dense(
        features,
        kernel_init=nn.initializers.orthogonal(scale),
        bias_init=nn.initializers.zeros,
    )


def conv_same(x: jax.Array, kernel: jax.Array, bias: jax.Array) -> jax.Array:
    """Stride-1 'SAME' convolution (cross-correlation, as `nn.Conv`) as one matmul.

    x: [N, H, W, C]; kernel: [k, k, C, F] with k odd; bias: [F] -> [N, H, W, F].
    The k*k shifted views of the zero-padded input are stacked along channels
    (im2col) and multiplied by the flattened kernel. Why not `lax.conv`: XLA:CPU
    runs convolution gradients inside a loop (here, the scan over updates) about
    40x slower than outside one (jax-ml/jax#12868); a matmul has no such cliff.
    Measured on CPU for 2048 MinAtar frames: kernel gradient inside a scan 29 ms
    per step vs 1.5 s; the forward pass alone (outside loops) 37 vs 17 ms.
    """
    k = kernel.shape[0]
    pad = k // 2
    h, w = x.shape[1], x.shape[2]
    padded = jnp.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    patches = jnp.concatenate(
        [padded[:, dy : dy + h, dx : dx + w] for dy in range(k) for dx in range(k)],
        axis=-1,
    )
    return patches @ kernel.reshape(-1, kernel.shape[-1]) + bias


class _Conv(nn.Module):
    """A k x k, stride-1, 'SAME' conv layer with `nn.Conv`'s parameters and init."""

    features: int
    kernel_size: int = 3

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        shape = (self.kernel_size, self.kernel_size, x.shape[-1], self.features)
        kernel = self.param("kernel", nn.initializers.lecun_normal(), shape)
        bias = self.param("bias", nn.initializers.zeros, (self.features,))
        return conv_same(x, kernel, bias)


class _Torso(nn.Module):
    config: NetworkConfig
    obs_ndim: int

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        act = _ACTIVATIONS[self.config.activation]
        batch_shape = obs.shape[: obs.ndim - self.obs_ndim]
        x = obs
        if self.config.torso == "cnn":
            x = x.reshape((-1, *obs.shape[-self.obs_ndim :]))
            x = _Conv(self.config.conv_features)(x)
            x = nn.relu(x)
        x = x.reshape((*batch_shape, -1))
        for width in self.config.hidden_sizes:
            x = act(_dense(width, np.sqrt(2.0))(x))
        return x


class _ActorCritic(nn.Module):
    config: NetworkConfig
    obs_ndim: int
    policy_size: int

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        actor = _Torso(self.config, self.obs_ndim, name="actor_torso")(obs)
        if self.config.shared_torso:
            critic = actor
        else:
            # Two plain towers. Measured on CPU: a vmapped stack of both misses
            # XNNPACK (24 vs 6.5 us per matmul) and a masked block-diagonal
            # fusion of both was slower still.
            critic = _Torso(self.config, self.obs_ndim, name="critic_torso")(obs)
        policy = _dense(self.policy_size, 0.01)(actor)
        value = _dense(1, 1.0)(critic)[..., 0]
        return policy, value


def make_actor_critic(
    config: NetworkConfig, obs_spec: Box, action_spec: Discrete | Box
) -> Network:
    """Builds an actor-critic network for the given observation and action specs.

    Discrete actions get a categorical head (logits [A]); Box actions a
    tanh-Gaussian head (mean and bounded log-std, [2A]).

    Raises:
      ValueError: for an unknown torso or activation, or a `cnn` torso on
        observations that are not images [H, W, C].

    """
    if config.torso not in TORSOS:
        raise ValueError(
            f"network.torso={config.torso!r} is not one of {TORSOS}; pick one of them."
        )
    if config.activation not in _ACTIVATIONS:
        raise ValueError(
            f"network.activation={config.activation!r} is not one of "
            f"{tuple(_ACTIVATIONS)}; pick one of them."
        )
    if config.torso == "cnn" and len(obs_spec.shape) != 3:
        raise ValueError(
            f"network.torso='cnn' needs image observations [H, W, C], got shape "
            f"{obs_spec.shape}; use --network.torso mlp."
        )
    if isinstance(action_spec, Discrete):
        distribution, policy_size = categorical(), action_spec.num_values
    else:
        (num_dims,) = action_spec.shape
        distribution, policy_size = tanh_gaussian(), 2 * num_dims
    module = _ActorCritic(config, len(obs_spec.shape), policy_size)

    def init(key: PRNGKey, obs: jax.Array) -> Params:
        return module.init(key, obs)

    return Network(init=init, apply=module.apply, distribution=distribution)


class _QNetwork(nn.Module):
    config: NetworkConfig
    obs_ndim: int
    num_actions: int
    dueling: bool

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        x = _Torso(self.config, self.obs_ndim, name="torso")(obs)
        if not self.dueling:
            q = _dense(self.num_actions, 1.0)(x)
        else:
            # Wang et al. (2016): Q = V + A - mean(A), two heads on one torso.
            value = _dense(1, 1.0)(x)
            advantage = _dense(self.num_actions, 1.0)(x)
            q = value + advantage - advantage.mean(axis=-1, keepdims=True)
        return q, q.max(axis=-1)


def make_q_network(
    config: NetworkConfig, obs_spec: Box, action_spec: Discrete, *, dueling: bool
) -> Network:
    """A Q-network for discrete actions: `apply(params, obs) -> (Q [A], max Q)`.

    Q-values stand where an actor-critic has its logits, with a categorical
    distribution, so the deterministic policy (`dist.mode`: argmax Q),
    evaluation, rendering and export work unchanged.

    Raises:
      ValueError: for continuous actions (use SAC, PPO or IMPALA), or the
        torso errors of `make_actor_critic`.

    """
    if not isinstance(action_spec, Discrete):
        raise ValueError(
            f"Q-learning needs discrete actions, got {action_spec}; use ppo, "
            "impala or a2c for continuous control."
        )
    make_actor_critic(config, obs_spec, action_spec)  # the same checks
    module = _QNetwork(config, len(obs_spec.shape), action_spec.num_values, dueling)

    def init(key: PRNGKey, obs: jax.Array) -> Params:
        return module.init(key, obs)

    return Network(init=init, apply=module.apply, distribution=categorical())


class _Actor(nn.Module):
    config: NetworkConfig
    obs_ndim: int
    num_dims: int

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        x = _Torso(self.config, self.obs_ndim, name="torso")(obs)
        return _dense(2 * self.num_dims, 0.01)(x)


class _TwinQ(nn.Module):
    config: NetworkConfig
    obs_ndim: int

    @nn.compact
    def __call__(self, obs: jax.Array, action: jax.Array) -> jax.Array:
        batch = obs.shape[: obs.ndim - self.obs_ndim]
        x = jnp.concatenate([obs.reshape((*batch, -1)), action], axis=-1)
        qs = [
            _dense(1, 1.0)(_Torso(self.config, 1, name=f"q{i}")(x))[..., 0]
            for i in range(2)
        ]
        return jnp.stack(qs, axis=-1)


class SACNetworks(NamedTuple):
    """SAC's actor and twin critics.

    `policy` is a Network whose params are {"actor": ..., "critic": ...} and
    whose apply gives (tanh-Gaussian parameters [2A], 0): what evaluation,
    rendering and export call. `critic(params["critic"], obs, action [A])` gives
    both Q-values [..., 2].
    """

    policy: Network
    init_critic: Callable[[PRNGKey, jax.Array, jax.Array], Params]
    critic: Callable[[Params, jax.Array, jax.Array], jax.Array]
    init_actor: Callable[[PRNGKey, jax.Array], Params]
    actor: Callable[[Params, jax.Array], jax.Array]


def make_sac_networks(
    config: NetworkConfig, obs_spec: Box, action_spec: Discrete | Box
) -> SACNetworks:
    """An actor (tanh-Gaussian head) and twin Q critics of (obs, action).

    Raises:
      ValueError: for discrete actions (use DQN, PPO, IMPALA or A2C), or the
        torso errors of `make_actor_critic`.

    """
    if not isinstance(action_spec, Box):
        raise ValueError(
            f"SAC needs continuous actions, got {action_spec}; use dqn, apex, "
            "ppo, impala or a2c for discrete actions."
        )
    make_actor_critic(config, obs_spec, action_spec)  # the same checks
    (num_dims,) = action_spec.shape
    obs_ndim = len(obs_spec.shape)
    actor = _Actor(config, obs_ndim, num_dims)
    # The critics take flat inputs: an MLP over [obs, action].
    critic = _TwinQ(dataclasses.replace(config, torso="mlp"), obs_ndim)

    def init(key: PRNGKey, obs: jax.Array) -> Params:
        key_actor, key_critic = jax.random.split(key)
        action = jnp.zeros((*obs.shape[: obs.ndim - obs_ndim], num_dims))
        return {
            "actor": actor.init(key_actor, obs),
            "critic": critic.init(key_critic, obs, action),
        }

    def apply(params: Params, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        policy = actor.apply(params["actor"], obs)
        return policy, jnp.zeros(policy.shape[:-1], policy.dtype)

    return SACNetworks(
        policy=Network(init=init, apply=apply, distribution=tanh_gaussian()),
        init_critic=critic.init,
        critic=critic.apply,
        init_actor=actor.init,
        actor=actor.apply,
    )
