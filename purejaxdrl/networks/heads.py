"""Heads on torsos: actor-critic, Q-networks, SAC's actor and twin critics."""

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.env.option_spelling import both
from purejaxdrl.env.specs import specs_error
from purejaxdrl.networks.base import (
    Network,
    NetworkConfig,
    dense,
    labelled,
    network_label,
)
from purejaxdrl.networks.recurrent import (
    RecurrentNetwork,
    make_recurrent_actor_critic,
    make_recurrent_q_network,
)
from purejaxdrl.networks.torsos import Torso, check_torso, pick, value_key
from purejaxdrl.rl.distributions import categorical, mask_logits, tanh_gaussian
from purejaxdrl.types import Params, PRNGKey, PyTree


class _ActorCritic(nn.Module):
    config: NetworkConfig
    obs_ndim: int
    policy_size: int
    value_ndim: int | None = None  # the critic's entry's, on dict observations

    @nn.compact
    def __call__(self, obs: PyTree) -> tuple[jax.Array, jax.Array]:
        actor = Torso(self.config, self.obs_ndim, name="actor_torso")(
            pick(obs, self.config.policy_obs_key)
        )
        if self.config.shared_torso:
            critic = actor
        else:
            # Two plain towers. Measured on CPU: a vmapped stack of both misses
            # XNNPACK (24 vs 6.5 us per matmul) and a masked block-diagonal
            # fusion of both was slower still.
            ndim = self.obs_ndim if self.value_ndim is None else self.value_ndim
            critic = Torso(self.config, ndim, name="critic_torso")(
                pick(obs, value_key(self.config))
            )
        policy = dense(self.policy_size, 0.01)(actor)
        value = dense(1, 1.0)(critic)[..., 0]
        return policy, value


def _masked(
    apply: Callable[..., tuple[jax.Array, jax.Array]],
    legal: Callable[[jax.Array], jax.Array],
    *,
    q_values: bool,
) -> Callable[..., tuple[jax.Array, jax.Array]]:
    """`apply` with the illegal actions' logits (or Q-values) at -inf.

    In the network, so that every caller sees one mask: the actors' sampling
    and log-probs, greedy evaluation, and the learners' log-probs, entropies
    and targets recomputed from the same stored observations (PPO's ratio is
    1 before its first step). A Q-network's second output, max Q, is then the
    max over legal actions: a target never bootstraps from an illegal one.
    """

    def masked(params: Params, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        return _mask_outputs(apply(params, obs), legal(obs), q_values)

    return masked


def _mask_outputs(
    outputs: tuple[jax.Array, jax.Array], legal: jax.Array, q_values: bool
) -> tuple[jax.Array, jax.Array]:
    head, value = outputs
    head = mask_logits(head, legal)
    return head, head.max(axis=-1) if q_values else value


def _masked_recurrent(
    net: RecurrentNetwork, legal: Callable[[jax.Array], jax.Array], *, q_values: bool
) -> RecurrentNetwork:
    """`net` with `_masked`'s mask on every output, read from the observation.

    The heads see the core's output, not the observation that says which
    actions are legal, so the mask is applied after them: each output with
    the observation it answers (the final observation's for `final_outputs`).
    """

    def mask(outputs: tuple, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        return _mask_outputs(outputs, legal(obs), q_values)

    def step(params: Params, state: Any, obs: jax.Array, reset: jax.Array) -> tuple:
        state, outputs = net.step(params, state, obs, reset)
        return state, mask(outputs, obs)

    def unroll(params: Params, state: Any, obs: jax.Array, reset: jax.Array) -> tuple:
        state, outputs = net.unroll(params, state, obs, reset)
        return state, mask(outputs, obs)

    def final_outputs(params: Params, state: Any, obs, reset, final_obs) -> tuple:
        return mask(net.final_outputs(params, state, obs, reset, final_obs), final_obs)

    def unroll_final(params: Params, state: Any, obs, reset, final_obs) -> tuple:
        outputs, final = net.unroll_final(params, state, obs, reset, final_obs)
        return mask(outputs, obs), mask(final, final_obs)

    return net._replace(
        step=step,
        unroll=unroll,
        final_outputs=final_outputs,
        unroll_final=unroll_final,
    )


def _check_specs(factory: str, obs_spec: Any, action_spec: Any) -> None:
    """Raises ConfigError, one line after `factory: `, unless the specs keep the rule.

    Used alone, a factory is often tried with a plain shape and count
    (`make_actor_critic(config, (4,), 2)`), which failed as an AttributeError
    on `int.shape`, and a 2-D action Box as an unpacking error.
    """
    problem = specs_error(obs_spec, action_spec)
    if problem is not None:
        raise ConfigError(f"{factory}: {problem}")


def _entry(obs_spec: dict) -> str:
    """The entry a one-array network would read: `state` (the policy's), if any."""
    return "state" if "state" in obs_spec else sorted(obs_spec)[0]


def make_actor_critic(
    config: NetworkConfig, obs_spec: Box, action_spec: Discrete | Box
) -> Network | RecurrentNetwork:
    """Builds an actor-critic network for the given observation and action specs.

    Discrete actions get a categorical head (logits [A]); Box actions a
    tanh-Gaussian head (mean and bounded log-std, [2A]). With a recurrent
    `config.core`, a RecurrentNetwork: torso, core, then the same heads. A
    Discrete spec with `legal` masks the illegal actions' logits to -inf. On
    dict observations (`obs_spec` a dict of Box) the policy's torso reads
    `config.policy_obs_key` and the critic's `value_obs_key`.

    Raises:
      ConfigError: (a ValueError) for specs that are not purejaxdrl.env's
        (a tuple for a `Box`, an int for a `Discrete`, a 2-D action `Box`:
        `env.specs.specs_error`),
        a torso that cannot be (`torsos.check_torso`), or a recurrent core on
        dict observations.

    """
    _check_specs("make_actor_critic", obs_spec, action_spec)
    # Before the torso's checks: on dict observations they would first ask for
    # the entry keys, which a core cannot use, a second error later.
    if config.recurrent and isinstance(obs_spec, dict):
        raise ConfigError(
            f"network.core={config.core!r} takes array observations, but the "
            f"environment observes a dict ({', '.join(sorted(obs_spec))}); keep "
            f"the core on one entry (MuJoCo Playground: "
            f"{both('observation_key', _entry(obs_spec))}), or pass "
            "--network.core none (network.core='none' in Python)."
        )
    policy_spec, value_spec = check_torso(config, obs_spec)
    masks = isinstance(action_spec, Discrete) and action_spec.legal
    if isinstance(action_spec, Discrete):
        distribution, policy_size = categorical(), action_spec.num_values
        head = f"categorical[{policy_size}]"
    else:
        (num_dims,) = action_spec.shape
        distribution, policy_size = tanh_gaussian(), 2 * num_dims
        head = f"tanh-gaussian[{num_dims}]"
    label = network_label(config, f"{head} + value")
    if config.recurrent:
        net = make_recurrent_actor_critic(
            config, len(obs_spec.shape), policy_size, distribution
        )
        labelled(net.init, label)
        return (
            _masked_recurrent(net, action_spec.legal, q_values=False) if masks else net
        )
    module = _ActorCritic(
        config, len(policy_spec.shape), policy_size, len(value_spec.shape)
    )

    def init(key: PRNGKey, obs: jax.Array) -> Params:
        return module.init(key, obs)

    apply = module.apply
    if masks:
        apply = _masked(apply, action_spec.legal, q_values=False)
    return Network(init=labelled(init, label), apply=apply, distribution=distribution)


class _QNetwork(nn.Module):
    config: NetworkConfig
    obs_ndim: int
    num_actions: int
    dueling: bool

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        x = Torso(self.config, self.obs_ndim, name="torso")(obs)
        if not self.dueling:
            q = dense(self.num_actions, 1.0)(x)
        else:
            # Wang et al. (2016): Q = V + A - mean(A), two heads on one torso.
            value = dense(1, 1.0)(x)
            advantage = dense(self.num_actions, 1.0)(x)
            q = value + advantage - advantage.mean(axis=-1, keepdims=True)
        return q, q.max(axis=-1)


def make_q_network(
    config: NetworkConfig, obs_spec: Box, action_spec: Discrete, *, dueling: bool
) -> Network | RecurrentNetwork:
    """A Q-network for discrete actions: `apply(params, obs) -> (Q [A], max Q)`.

    Q-values stand where an actor-critic has its logits, with a categorical
    distribution, so the deterministic policy (`dist.mode`: argmax Q),
    evaluation, rendering and export work unchanged. With a recurrent
    `config.core`, a RecurrentNetwork with the same outputs. A Discrete spec
    with `legal` sets the illegal actions' Q-values to -inf, so max Q, argmax Q
    and ε-greedy's random actions (`rl.epsilon_greedy`) are over legal ones.

    Raises:
      ValueError: for continuous actions (use SAC, PPO, IMPALA or A2C), or the
        spec and torso errors of `make_actor_critic`.

    """
    _check_specs("make_q_network", obs_spec, action_spec)
    if not isinstance(action_spec, Discrete):
        raise ValueError(
            f"Q-learning needs discrete actions, got {action_spec}; use sac, "
            "ppo, impala or a2c for continuous control."
        )
    if isinstance(obs_spec, dict):
        raise ConfigError(
            "a Q-network reads one array observation, but the environment "
            f"observes a dict ({', '.join(sorted(obs_spec))}); give it one entry "
            f"(MuJoCo Playground: {both('observation_key', _entry(obs_spec))}), "
            "or train an actor-critic (ppo, sac) with --network.policy-obs-key "
            "(network.policy_obs_key in Python)."
        )
    make_actor_critic(config, obs_spec, action_spec)  # the same checks
    q = f"{'dueling ' * dueling}q[{action_spec.num_values}]"
    if config.recurrent:
        net = make_recurrent_q_network(
            config,
            len(obs_spec.shape),
            action_spec.num_values,
            categorical(),
            dueling=dueling,
        )
        labelled(net.init, network_label(config, q))
        legal = action_spec.legal
        return _masked_recurrent(net, legal, q_values=True) if legal else net
    module = _QNetwork(config, len(obs_spec.shape), action_spec.num_values, dueling)

    def init(key: PRNGKey, obs: jax.Array) -> Params:
        return module.init(key, obs)

    apply = module.apply
    if action_spec.legal:
        apply = _masked(apply, action_spec.legal, q_values=True)
    return Network(
        init=labelled(init, network_label(config, q)),
        apply=apply,
        distribution=categorical(),
    )


class _Actor(nn.Module):
    config: NetworkConfig
    obs_ndim: int
    num_dims: int

    @nn.compact
    def __call__(self, obs: PyTree) -> jax.Array:
        obs = pick(obs, self.config.policy_obs_key)
        x = Torso(self.config, self.obs_ndim, name="torso")(obs)
        return dense(2 * self.num_dims, 0.01)(x)


class _TwinQ(nn.Module):
    config: NetworkConfig
    obs_ndim: int

    @nn.compact
    def __call__(self, obs: PyTree, action: jax.Array) -> jax.Array:
        obs = pick(obs, value_key(self.config))
        batch = obs.shape[: obs.ndim - self.obs_ndim]
        # The dense layers of `hidden_sizes` read [features, action]; with the
        # mlp torso the features are the flat observation itself.
        mlp = dataclasses.replace(self.config, torso="mlp")
        qs = []
        for i in range(2):
            if self.config.torso == "mlp":
                features = obs.reshape((*batch, -1))
            else:  # each critic its own torso, as each its own dense layers
                torso = Torso(self.config, self.obs_ndim, False, name=f"q{i}_obs")
                features = torso(obs)
            x = jnp.concatenate([features, action], axis=-1)
            qs.append(dense(1, 1.0)(Torso(mlp, 1, name=f"q{i}")(x))[..., 0])
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

    Each critic reads the observation through a torso of its own (the
    configured one; with `mlp`, the flat observation), then the dense layers
    of `hidden_sizes` over [features, action]. On dict observations the actor
    reads `config.policy_obs_key` and the critics `value_obs_key` (an
    asymmetric actor-critic).

    Raises:
      ValueError: for discrete actions (use PPO, PQN, DQN, Ape-X, IMPALA or A2C), or the
        spec errors of `make_actor_critic` and the torso errors of `check_torso`.

    """
    _check_specs("make_sac_networks", obs_spec, action_spec)
    if not isinstance(action_spec, Box):
        raise ValueError(
            f"SAC needs continuous actions, got {action_spec}; use ppo, pqn, "
            "dqn, apex, impala or a2c for discrete actions."
        )
    policy_spec, value_spec = check_torso(config, obs_spec)
    (num_dims,) = action_spec.shape
    obs_ndim = len(policy_spec.shape)
    actor = _Actor(config, obs_ndim, num_dims)
    # The critics: the torso over the observation (on dict observations, the
    # critic's entry), then dense layers over [features, action].
    critic = _TwinQ(config, len(value_spec.shape))

    def init(key: PRNGKey, obs: PyTree) -> Params:
        key_actor, key_critic = jax.random.split(key)
        obs_policy = pick(obs, config.policy_obs_key)
        batch = obs_policy.shape[: obs_policy.ndim - obs_ndim]
        action = jnp.zeros((*batch, num_dims))
        return {
            "actor": actor.init(key_actor, obs),
            "critic": critic.init(key_critic, obs, action),
        }

    def apply(params: Params, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        policy = actor.apply(params["actor"], obs)
        return policy, jnp.zeros(policy.shape[:-1], policy.dtype)

    return SACNetworks(
        policy=Network(
            init=labelled(init, network_label(config, f"tanh-gaussian[{num_dims}]")),
            apply=apply,
            distribution=tanh_gaussian(),
        ),
        init_critic=critic.init,
        critic=critic.apply,
        init_actor=actor.init,
        actor=actor.apply,
    )
