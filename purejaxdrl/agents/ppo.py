"""Proximal Policy Optimisation (Schulman et al., 2017, arXiv:1707.06347)."""

import dataclasses
import functools
import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import optax
from jax.flatten_util import ravel_pytree

from purejaxdrl.agents.actor_critic import (
    actor_critic_acting,
    actor_critic_networks,
    learning_rewards,
)
from purejaxdrl.agents.base import Agent, AgentState, Algorithm, RunShape
from purejaxdrl.agents.optim import (
    annealed_learning_rate,
    flat_gradient_step,
    make_optimizer,
)
from purejaxdrl.agents.sequences import sequence_split
from purejaxdrl.config import check, check_ranges
from purejaxdrl.networks import Network, RecurrentNetwork
from purejaxdrl.rl.losses import (
    clipped_surrogate_loss,
    normalize_advantages,
    value_loss,
)
from purejaxdrl.rl.returns import episode_aware_gae
from purejaxdrl.rng import permutation
from purejaxdrl.types import Metrics, PRNGKey, PyTree, Transition


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
    # Rewards clipped to [-c, c] in the learner (Atari: 1); 0: not clipped.
    reward_clip: float | jax.Array = 0.0
    # Adam's ε: 1e-5 as in PureJaxRL and CleanRL; optax's and brax's is 1e-8.
    eps: float | jax.Array = 1e-5


_METRIC_NAMES = (
    "loss/total",
    "loss/policy",
    "loss/value",
    "entropy",
    "approx_kl",
    "clip_fraction",
)


def env_groups(num_minibatches: int, unroll_length: int) -> int:
    """Me: groups of environments each time block is split into (see below)."""
    return num_minibatches // math.gcd(num_minibatches, unroll_length)


def minibatch_split(
    shape: tuple[int, int], num_minibatches: int
) -> Callable[[PyTree, PRNGKey], PyTree]:
    """Splits `[T, B, ...]` data into minibatches whatever the device count.

    Time steps are shuffled with one permutation shared by all environments (the
    key is the same on every device), then cut into `Mt = gcd(M, T)` blocks; when
    M > Mt, each block is further split into `Me = M / Mt` groups of
    environments by global index modulo Me. A device holding a contiguous slice
    of environments whose size Me divides therefore takes exactly its own share
    of every global minibatch: the global minibatches are the same on 1 or 8
    devices, so the same seed trains the same run.

    Args:
      shape: (T, B), the unroll length and this device's number of environments.
      num_minibatches: M.

    Returns:
      `split(batch, key)`, mapping leaves `[T, B, ...]` to `[M, T*B/M, ...]`.

    Raises:
      ValueError: when B is not a multiple of Me.

    """
    t, b = shape
    num_env_groups = env_groups(num_minibatches, t)
    num_time_blocks = num_minibatches // num_env_groups
    if b % num_env_groups:
        raise ValueError(
            f"ppo.num_minibatches={num_minibatches} with unroll_length={t} splits "
            f"each time block over {num_env_groups} groups of environments, but "
            f"each device has {b} environments; make num_envs per device a "
            f"multiple of {num_env_groups}, or num_minibatches a divisor of {t}."
        )

    def split_leaf(x: jax.Array, perm: jax.Array) -> jax.Array:
        rest = x.shape[2:]
        x = x[perm].reshape(
            num_time_blocks, t // num_time_blocks, b // num_env_groups,
            num_env_groups, *rest,
        )  # fmt: skip
        # (time block, env group) index the minibatch; env j is in group j % Me.
        x = jnp.moveaxis(x, 3, 1)
        return x.reshape(num_minibatches, -1, *rest)

    def split(batch: PyTree, key: PRNGKey) -> PyTree:
        perm = permutation(key, t)
        return jax.tree.map(lambda x: split_leaf(x, perm), batch)

    return split


def make_ppo(
    config: PPOConfig,
    network: Network | RecurrentNetwork,
    obs_example: jax.Array,
    *,
    num_updates: int,
    axis_name: str | None = None,
) -> Agent:
    """Builds PPO with a clipped surrogate, clipped value loss and entropy bonus.

    Args:
      config: hyper-parameters.
      network: actor-critic network. With a recurrent core, minibatches are
        whole environment sequences (`sequences.sequence_split`) re-unrolled
        from the core state stored at their start, and the agent acts through
        `Agent.core`.
      obs_example: one observation (unbatched), to initialise parameters.
      num_updates: total number of `update` calls, for learning-rate annealing.
      axis_name: mesh axis over which `update` all-reduces gradients and metrics
        and normalises advantages (None on one device).

    Returns:
      The Agent. `update` takes time-major transitions `[T, B]` (B: this device's
      environments) split into minibatches by `minibatch_split`.

    """
    validate(config)
    if num_updates < 1:
        raise ValueError(f"num_updates={num_updates} must be >= 1.")
    dist = network.distribution
    steps_per_update = config.num_epochs * config.num_minibatches
    learning_rate = annealed_learning_rate(
        config.learning_rate,
        num_updates=num_updates,
        anneal=config.anneal_lr,
        steps_per_update=steps_per_update,
    )
    optimizer = make_optimizer(
        "adam", learning_rate, max_grad_norm=config.max_grad_norm, eps=config.eps
    )
    recurrent = isinstance(network, RecurrentNetwork)
    act, value, core = actor_critic_acting(network, obs_example.ndim)

    def outputs(params: PyTree, batch: dict[str, jax.Array]) -> tuple:
        if not recurrent:
            return network.apply(params, batch["observation"])
        start, obs, reset = batch["core_state"], batch["observation"], batch["reset"]
        return network.unroll(params, start, obs, reset)[1]

    def init(key: PRNGKey) -> AgentState:
        params = network.init(key, obs_example)
        # The optimiser sees one flat vector (see `update`), so its state is flat.
        flat, _ = ravel_pytree(params)
        return AgentState(params, optimizer.init(flat), jnp.zeros((), jnp.int32))

    def loss(
        flat: jax.Array, unravel: Callable, batch: dict[str, jax.Array], key: PRNGKey
    ) -> tuple[jax.Array, jax.Array]:
        policy, v = outputs(unravel(flat), batch)
        log_prob = dist.log_prob(policy, batch["action"])
        log_ratio = log_prob - batch["log_prob"]
        ratio = jnp.exp(log_ratio)
        pg_loss = clipped_surrogate_loss(ratio, batch["advantage"], config.clip_eps)
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
        flat, opt_state, metrics = flat_gradient_step(
            loss,
            optimizer,
            flat,
            opt_state,
            unravel,
            minibatch,
            key,
            axis_name=axis_name,
        )
        return (flat, opt_state), metrics

    def update(
        state: AgentState, traj: Transition, key: PRNGKey
    ) -> tuple[AgentState, Metrics]:
        adv, target = episode_aware_gae(
            learning_rewards(traj.reward, config.reward_scale, config.reward_clip),
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
        if recurrent:
            batch["reset"], batch["core_state"] = traj.reset, traj.core_state
            split = sequence_split(adv.shape[1], config.num_minibatches)
        else:
            split = minibatch_split(adv.shape, config.num_minibatches)
        # Each minibatch's advantages are standardised over all its steps.
        adv_axes = (1, 2) if recurrent else 1
        # One flat vector for the optimiser (see `flat_gradient_step`).
        flat, unravel = ravel_pytree(state.params)
        step = functools.partial(sgd_step, unravel)
        num_mb = config.num_minibatches

        def epoch(
            carry: tuple[jax.Array, optax.OptState], key: PRNGKey
        ) -> tuple[tuple[jax.Array, optax.OptState], jax.Array]:
            key_perm, key = jax.random.split(key)
            minibatches = split(batch, key_perm)
            if config.normalize_advantages:
                # Each minibatch standardised over its global rows, all of the
                # epoch's at once: two all-reduces per epoch, not two per
                # minibatch, each a barrier that every device waits at.
                minibatches["advantage"] = normalize_advantages(
                    minibatches["advantage"], axis_name, axis=adv_axes
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

    return Agent(
        init=init, act=act, value=value, update=update, axis_name=axis_name, core=core
    )


def validate(config: PPOConfig, shape: RunShape | None = None) -> None:
    """PPO's range rules, and with `shape` that its minibatches split the batch.

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    check_ranges(
        "ppo",
        config,
        at_least_one=("num_epochs", "num_minibatches"),
        positive=("learning_rate", "clip_eps", "max_grad_norm", "reward_scale", "eps"),
        non_negative=("entropy_cost", "value_cost", "reward_clip"),
        unit=("gamma", "gae_lambda"),
    )
    if shape is None:
        return
    if shape.recurrent:
        check(
            shape.num_envs % config.num_minibatches == 0,
            f"ppo.num_minibatches={config.num_minibatches} with a recurrent core "
            f"splits the environments into minibatches of whole sequences, so "
            f"num_envs={shape.num_envs} must be divisible by it; change either.",
        )
        return
    # Minibatches take time blocks and, when there are more minibatches than
    # time blocks, groups of environments (see minibatch_split).
    groups = env_groups(config.num_minibatches, shape.unroll_length)
    check(
        shape.num_envs % groups == 0,
        f"ppo.num_minibatches={config.num_minibatches} with unroll_length="
        f"{shape.unroll_length} needs num_envs divisible by {groups}, got "
        f"num_envs={shape.num_envs}; make num_minibatches a divisor of "
        f"unroll_length or num_envs a multiple of {groups}.",
    )


ALGORITHM = Algorithm(
    name="ppo",
    recurrent=True,
    summary="PPO: clipped surrogate, GAE, epochs of minibatches, on-policy",
    config_type=PPOConfig,
    default_config=PPOConfig,
    make_agent=make_ppo,
    make_networks=actor_critic_networks,
    validate=validate,
    env_multiple=lambda config, shape: (
        config.num_minibatches
        if shape.recurrent
        else env_groups(config.num_minibatches, shape.unroll_length)
    ),
)
