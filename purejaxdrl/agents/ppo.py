"""Proximal Policy Optimisation (Schulman et al., 2017, arXiv:1707.06347)."""

import dataclasses
import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import optax
from jax.flatten_util import ravel_pytree

from purejaxdrl.agents.base import Agent, AgentState
from purejaxdrl.networks import Network
from purejaxdrl.rl.losses import (
    clipped_surrogate_loss,
    normalize_advantages,
    value_loss,
)
from purejaxdrl.rl.returns import episode_aware_gae
from purejaxdrl.rng import permutation
from purejaxdrl.types import Metrics, Params, PRNGKey, Transition


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class PPOConfig:
    """PPO hyper-parameters.

    Static fields change shapes or loop counts (changing them recompiles); the
    others are array leaves that can be traced, vmapped and swept.
    """

    # Static.
    num_epochs: int = jax.tree.static(default=4)
    num_minibatches: int = jax.tree.static(default=4)
    anneal_lr: bool = jax.tree.static(default=True)
    normalize_advantages: bool = jax.tree.static(default=True)
    clip_value: bool = jax.tree.static(default=True)
    # Dynamic.
    learning_rate: float | jax.Array = 2.5e-4
    gamma: float | jax.Array = 0.99
    gae_lambda: float | jax.Array = 0.95
    clip_eps: float | jax.Array = 0.2
    entropy_cost: float | jax.Array = 0.01
    value_cost: float | jax.Array = 0.5
    max_grad_norm: float | jax.Array = 0.5
    reward_scale: float | jax.Array = 1.0


_METRIC_NAMES = (
    "loss/total",
    "loss/policy",
    "loss/value",
    "entropy",
    "approx_kl",
    "clip_fraction",
)


def make_ppo(
    config: PPOConfig,
    network: Network,
    obs_example: jax.Array,
    *,
    num_updates: int,
    axis_name: str | None = None,
) -> Agent:
    """Builds PPO with a clipped surrogate, clipped value loss and entropy bonus.

    Args:
      config: hyper-parameters.
      network: actor-critic network.
      obs_example: one observation (unbatched), to initialise parameters.
      num_updates: total number of `update` calls, for learning-rate annealing.
      axis_name: mesh axis over which `update` all-reduces gradients and metrics
        and normalises advantages (None on one device).

    Returns:
      The Agent. `update` takes time-major transitions `[T, B]` whose `T * B` is
      divisible by `config.num_minibatches`.

    """
    if config.num_epochs < 1 or config.num_minibatches < 1:
        raise ValueError(
            f"ppo.num_epochs={config.num_epochs} and ppo.num_minibatches="
            f"{config.num_minibatches} must both be >= 1; pass positive integers."
        )
    if num_updates < 1:
        raise ValueError(f"num_updates={num_updates} must be >= 1.")
    dist = network.distribution
    steps_per_update = config.num_epochs * config.num_minibatches

    def learning_rate(count: jax.Array) -> jax.Array:
        if not config.anneal_lr:
            return jnp.asarray(config.learning_rate, jnp.float32)
        frac = 1.0 - (count // steps_per_update) / num_updates
        return config.learning_rate * frac

    optimizer = optax.chain(
        optax.clip_by_global_norm(config.max_grad_norm),
        optax.adam(learning_rate, eps=1e-5),
    )

    def init(key: PRNGKey) -> AgentState:
        params = network.init(key, obs_example)
        # The optimiser sees one flat vector (see `update`), so its state is flat.
        flat, _ = ravel_pytree(params)
        return AgentState(params, optimizer.init(flat), jnp.zeros((), jnp.int32))

    def act(
        params: Params, obs: jax.Array, key: PRNGKey
    ) -> tuple[jax.Array, dict[str, jax.Array]]:
        # Only the policy output is used: XLA drops the critic tower here.
        policy, _ = network.apply(params, obs)
        action = dist.sample(policy, key)
        extras = {
            "log_prob": dist.log_prob(policy, action),
            "env_action": dist.to_env(action),
        }
        return action, extras

    def value(params: Params, obs: jax.Array) -> jax.Array:
        return network.apply(params, obs)[1]

    def loss(
        flat: jax.Array, unravel: Callable, batch: dict[str, jax.Array], key: PRNGKey
    ) -> tuple[jax.Array, jax.Array]:
        policy, v = network.apply(unravel(flat), batch["observation"])
        log_prob = dist.log_prob(policy, batch["action"])
        log_ratio = log_prob - batch["log_prob"]
        ratio = jnp.exp(log_ratio)
        adv = batch["advantage"]
        if config.normalize_advantages:
            adv = normalize_advantages(adv, axis_name)
        pg_loss = clipped_surrogate_loss(ratio, adv, config.clip_eps)
        v_old = batch["value"] if config.clip_value else None
        v_loss = value_loss(v, batch["target"], v_old, config.clip_eps)
        entropy = jnp.mean(dist.entropy(policy, key))
        total = pg_loss + config.value_cost * v_loss - config.entropy_cost * entropy
        metrics = (
            total,
            pg_loss,
            v_loss,
            entropy,
            # k3 estimator of KL(old || new) (Schulman, 2020): unbiased, >= 0.
            jnp.mean(ratio - 1.0 - log_ratio),
            jnp.mean(jnp.abs(ratio - 1.0) > config.clip_eps),
        )
        # One vector, not six scalars: the minibatch scan then stacks one array
        # per step instead of six (each a separate kernel on CPU).
        return total, jnp.stack(metrics)

    def sgd_step(
        unravel: Callable,
        state: tuple[jax.Array, optax.OptState],
        xs: tuple[dict[str, jax.Array], PRNGKey],
    ) -> tuple[tuple[jax.Array, optax.OptState], jax.Array]:
        flat, opt_state = state
        minibatch, key = xs
        grads, metrics = jax.grad(loss, has_aux=True)(flat, unravel, minibatch, key)
        if axis_name is not None:
            grads, metrics = jax.lax.pmean((grads, metrics), axis_name)
        updates, opt_state = optimizer.update(grads, opt_state, flat)
        return (flat + updates, opt_state), metrics

    def update(
        state: AgentState, traj: Transition, key: PRNGKey
    ) -> tuple[AgentState, Metrics]:
        adv, target = episode_aware_gae(
            traj.reward * config.reward_scale,
            traj.discount,
            traj.truncated,
            traj.value,
            traj.bootstrap_value,
            config.gamma,
            config.gae_lambda,
        )
        batch = {
            "observation": traj.observation,
            "action": traj.action,
            "log_prob": traj.log_prob,
            "value": traj.value,
            "advantage": adv,
            "target": target,
        }
        batch_size = adv.size
        batch = jax.tree.map(lambda x: x.reshape((batch_size, *x.shape[2:])), batch)
        num_mb = config.num_minibatches
        # Optimise one flat vector: on CPU each small kernel costs more than its
        # arithmetic, and Adam over a dozen leaves is dozens of kernels per step.
        flat, unravel = ravel_pytree(state.params)
        step = functools.partial(sgd_step, unravel)

        def epoch(
            carry: tuple[jax.Array, optax.OptState], key: PRNGKey
        ) -> tuple[tuple[jax.Array, optax.OptState], jax.Array]:
            key_perm, key = jax.random.split(key)
            perm = permutation(key_perm, batch_size)
            minibatches = jax.tree.map(
                lambda x: x[perm].reshape((num_mb, -1, *x.shape[1:])), batch
            )
            return jax.lax.scan(
                step, carry, (minibatches, jax.random.split(key, num_mb))
            )

        (flat, opt_state), stacked = jax.lax.scan(
            epoch,
            (flat, state.opt_state),
            jax.random.split(key, config.num_epochs),
        )
        means = stacked.reshape(-1, len(_METRIC_NAMES)).mean(axis=0)
        metrics = dict(zip(_METRIC_NAMES, means, strict=True))
        metrics["learning_rate"] = learning_rate(state.step * steps_per_update)
        return AgentState(unravel(flat), opt_state, state.step + 1), metrics

    return Agent(init=init, act=act, value=value, update=update)
