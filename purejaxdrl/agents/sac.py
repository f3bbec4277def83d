"""SAC: soft actor-critic with twin critics and a learned temperature.

Haarnoja et al. (2018), "Soft Actor-Critic Algorithms and Applications",
https://arxiv.org/abs/1812.05905. The actor is a tanh-squashed Gaussian whose
log-probability carries the squashing's Jacobian (`rl.distributions`); two
critics and their Polyak-averaged targets give clipped double-Q targets; the
temperature α is learned towards a target entropy of -|A|. Transitions go to a
uniform replay shard per device, and gradients are all-reduced.
"""

import dataclasses
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
from jax.sharding import PartitionSpec as P

from purejaxdrl.agents.base import (
    Agent,
    Algorithm,
    RunShape,
    check_agent_args,
    feed_forward,
)
from purejaxdrl.agents.fields import LearnerFields, ReplayFields, RewardFields
from purejaxdrl.agents.optim import local_copy, make_learner_optimizer
from purejaxdrl.agents.replay_sizes import (
    check_replay_sizes,
    check_target_tau,
    merge_steps,
    replay_shard_sizes,
    stored_items,
    transitions_per_update,
)
from purejaxdrl.config import check, check_ranges
from purejaxdrl.networks import (
    AnyNetwork,
    NetworkConfig,
    SACNetworks,
    make_sac_networks,
)
from purejaxdrl.parallel import DATA_AXIS
from purejaxdrl.replay import device_key, make_uniform_buffer
from purejaxdrl.types import Metrics, Params, PRNGKey, PyTree, Transition


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class SACConfig(RewardFields, ReplayFields, LearnerFields):
    """SAC hyper-parameters (the paper's, but for the replay's sizes).

    SAC's own fields are described below. Those it shares with other learners
    (Adam's learning rate for actor, critics and, unless `alpha_learning_rate`
    is set, temperature; discount, replay sizes, reward scale) are declared
    and described in `agents.fields` (`LearnerFields`, `ReplayFields`,
    `RewardFields`); `help(SACConfig)` and `--algo sac --help` describe every
    field, the shared ones too.

    Attributes:
      alpha_learning_rate: Adam's step size for the temperature (log α); 0
        (none reads as 0): learning_rate, as for the actor and critics
        (brax's SAC, which Playground's configs drive, fixes 3e-4).
      tau: Polyak rate of the target critics, in (0, 1] (0 never moves them).
      init_alpha: the temperature α at the start.
      target_entropy_scale: the target entropy is -scale x |A|.

    """

    # Static.
    min_replay: int = jax.tree.static(default=5_000)
    # Dynamic.
    learning_rate: float | jax.Array = 3e-4
    # 0 follows learning_rate; a number, so a leaf that sweeps and PBT vary.
    alpha_learning_rate: float | None = 0.0
    tau: float | jax.Array = 0.005
    # Read only by `init` (the learner state holds log α after it): PBT's
    # ready steps could not change it, so `pbt --explore` refuses it.
    init_alpha: float | jax.Array = dataclasses.field(
        default=1.0, metadata={"start_only": True}
    )
    target_entropy_scale: float | jax.Array = 1.0

    def __post_init__(self) -> None:
        if self.alpha_learning_rate is None:  # older config.yaml files' null
            object.__setattr__(self, "alpha_learning_rate", 0.0)


class SACState(NamedTuple):
    """SAC's learner state with its replay shard.

    Attributes:
      params: {"actor": ..., "critic": ...}.
      target_critic: the Polyak-averaged critics.
      opt_state: (actor, critic, temperature) Adam states.
      log_alpha: float32 [], log of the temperature.
      step: int32 [], runner updates done.
      grad_steps: int32 [], gradient steps done.
      buffer: this device's replay shard (RingState).

    """

    params: Params
    target_critic: Params
    opt_state: tuple
    log_alpha: jax.Array
    step: jax.Array
    grad_steps: jax.Array
    buffer: object


class Stored(NamedTuple):
    """One replayed transition; `discount` is the env's (0 on termination)."""

    observation: PyTree  # an array, or a dict of them
    action: jax.Array  # the squashed action the environment received
    reward: jax.Array
    discount: jax.Array
    next_observation: PyTree  # the final observation (before any reset)


def sample_action(
    network: SACNetworks, actor: Params, obs: jax.Array, key: PRNGKey
) -> tuple[jax.Array, jax.Array]:
    """A reparameterised action [B, A], in [-1, 1], and its log-probability [B]."""
    dist = network.policy.distribution
    out = network.actor(actor, obs)
    u = dist.sample(out, key)  # mean + std * noise
    return dist.to_env(u), dist.log_prob(out, u)


def soft_q_target(
    network: SACNetworks,
    actor: Params,
    target_critic: Params,
    item: Stored,
    alpha: jax.Array,
    key: PRNGKey,
    config: SACConfig,
) -> jax.Array:
    """Clipped double-Q soft targets [B]: r + γ d (min_i Q'_i(s', a') - α log π(a'|s')).

    `d` is 0 after a termination and 1 otherwise, truncations included: their
    `next_observation` is the final observation, so they bootstrap.
    """
    next_action, next_logp = sample_action(network, actor, item.next_observation, key)
    next_q = network.critic(target_critic, item.next_observation, next_action)
    soft = next_q.min(axis=-1) - alpha * next_logp
    # Masked, not only multiplied: a termination's final observation may hold
    # inf or NaN (a diverged simulation), and 0 * inf is NaN.
    soft = jnp.where(item.discount == 0, 0.0, soft)
    reward = item.reward * config.reward_scale
    return jax.lax.stop_gradient(reward + config.gamma * item.discount * soft)


def critic_loss(
    critic: Params, item: Stored, target: jax.Array, *, network: SACNetworks
) -> jax.Array:
    """Both critics' squared errors to the soft target, halved, batch mean."""
    q = network.critic(critic, item.observation, item.action)
    return 0.5 * jnp.mean(jnp.sum(jnp.square(q - target[:, None]), axis=-1))


def actor_loss(
    actor: Params,
    critic: Params,
    item: Stored,
    alpha: jax.Array,
    key: PRNGKey,
    *,
    network: SACNetworks,
) -> tuple[jax.Array, jax.Array]:
    """E[α log π(a|s) - min_i Q_i(s, a)] with reparameterised a; and log π [B]."""
    action, logp = sample_action(network, actor, item.observation, key)
    q = network.critic(critic, item.observation, action).min(axis=-1)
    return jnp.mean(alpha * logp - q), logp


def alpha_loss(
    log_alpha: jax.Array, logp: jax.Array, target_entropy: float | jax.Array
) -> jax.Array:
    """The temperature's loss: -log α (log π + target entropy), batch mean."""
    return -jnp.mean(log_alpha * jax.lax.stop_gradient(logp + target_entropy))


def apply_gradients(
    carry: SACState,
    grads: tuple[Params, Params, jax.Array],
    ready: jax.Array,
    optimizers: tuple[optax.GradientTransformation, ...],
    tau: float | jax.Array,
) -> SACState:
    """Adam steps on (actor, critic, log α) and a Polyak target; kept before `ready`."""
    old = (carry.params["actor"], carry.params["critic"], carry.log_alpha)
    new, opt_states = [], []
    for g, s, p, optimizer in zip(grads, carry.opt_state, old, optimizers, strict=True):
        updates, s = optimizer.update(g, s, p)
        new.append(optax.apply_updates(p, updates))
        opt_states.append(s)
    target_critic = optax.incremental_update(new[1], carry.target_critic, tau)
    learned = (
        {"actor": new[0], "critic": new[1]},
        target_critic,
        tuple(opt_states),
        new[2],
        carry.grad_steps + 1,
    )
    kept = (*carry[:4], carry.grad_steps)  # the fields of `learned`
    # Before `ready` the learner state stays (a select of small trees).
    learned = jax.tree.map(lambda n, o: jnp.where(ready, n, o), learned, kept)
    return SACState(*learned[:4], carry.step, learned[4], carry.buffer)


def make_sac(
    config: SACConfig, network: AnyNetwork, obs_example: jax.Array, run: RunShape
) -> Agent:
    """Builds SAC (an `AgentFactory`) for continuous actions in [-1, 1].

    Each update adds the unroll's transitions to this device's replay shard;
    once `min_replay` are stored, it takes `updates_per_step` gradient steps
    on the critics, the actor and the temperature. Targets bootstrap from the
    final observation of a truncated episode, never past a termination. Its
    state is a `SACState` whose buffer is split over the run's devices
    (ValueError where a size does not split evenly).
    """
    check_agent_args(validate, config, run)
    axis_name = run.axis_name
    num_devices = run.num_devices
    capacity, batch, min_size = replay_shard_sizes("sac", config, num_devices)
    buffer = make_uniform_buffer(capacity, batch)
    policy = network.policy
    dist = policy.distribution
    # Constant learning rates and no gradient clipping, as in the paper.
    optimizer = make_learner_optimizer(config.learning_rate, max_grad_norm=None)
    rate = config.alpha_learning_rate
    alpha_optimizer = (  # 0: the very optimiser of the actor and critics
        optimizer
        if isinstance(rate, int | float) and rate == 0
        else make_learner_optimizer(
            jnp.where(rate > 0, rate, config.learning_rate), max_grad_norm=None
        )
    )
    optimizers = (optimizer, optimizer, alpha_optimizer)
    obs_example = _float32(obs_example)

    def init(key: PRNGKey) -> SACState:
        params = policy.init(key, obs_example)
        log_alpha = jnp.log(jnp.asarray(config.init_alpha, jnp.float32))
        policy_out = policy.apply(params, obs_example)[0]
        example = Stored(
            obs_example,
            jnp.zeros(policy_out.shape[-1] // 2, jnp.float32),
            jnp.float32(0),
            jnp.float32(0),
            obs_example,
        )
        return SACState(
            params,
            jax.tree.map(jnp.copy, params["critic"]),
            (
                optimizer.init(params["actor"]),
                optimizer.init(params["critic"]),
                alpha_optimizer.init(log_alpha),
            ),
            log_alpha,
            jnp.zeros((), jnp.int32),
            jnp.zeros((), jnp.int32),
            buffer.init(example),
        )

    def act(
        params: Params, obs: jax.Array, key: PRNGKey
    ) -> tuple[jax.Array, dict[str, jax.Array]]:
        out = policy.apply(params, obs)[0]
        u = dist.sample(out, key)
        return u, {"log_prob": dist.log_prob(out, u), "env_action": dist.to_env(u)}

    def value(params: Params, obs: jax.Array) -> jax.Array:
        return policy.apply(params, obs)[1]

    def grad_step(
        carry: SACState, key: PRNGKey, ready: jax.Array
    ) -> tuple[SACState, Metrics]:
        # This device's draws: its own slots, and its own noise for them.
        key_sample, key_next, key_new = jax.random.split(device_key(key, axis_name), 3)
        item = buffer.sample(carry.buffer, key_sample).item
        alpha = jnp.exp(carry.log_alpha)
        actor, critic = carry.params["actor"], carry.params["critic"]
        target = soft_q_target(
            network, actor, carry.target_critic, item, alpha, key_next, config
        )
        target_entropy = -config.target_entropy_scale * item.action.shape[-1]
        # Each device's own gradients, averaged below (`local_copy`).
        own = local_copy((critic, actor, carry.log_alpha), axis_name)
        loss_q, grad_q = jax.value_and_grad(critic_loss)(
            own[0], item, target, network=network
        )
        (loss_pi, logp), grad_pi = jax.value_and_grad(actor_loss, has_aux=True)(
            own[1], critic, item, alpha, key_new, network=network
        )
        loss_a, grad_a = jax.value_and_grad(alpha_loss)(own[2], logp, target_entropy)
        grads = (grad_pi, grad_q, grad_a)
        metrics = {
            "loss/critic": loss_q,
            "loss/actor": loss_pi,
            "loss/alpha": loss_a,
            "entropy": -jnp.mean(logp),
            "q/target_mean": jnp.mean(target),  # the soft target y, not Q
        }
        if axis_name is not None:
            grads, metrics = jax.lax.pmean((grads, metrics), axis_name)
        carry = apply_gradients(carry, grads, ready, optimizers, config.tau)
        zeroed = jax.tree.map(lambda m: jnp.where(ready, m, 0.0), metrics)
        return carry, {**zeroed, "alpha": alpha}  # α is never 0, learning or not

    def update(
        state: SACState, traj: Transition, key: PRNGKey
    ) -> tuple[SACState, Metrics]:
        items = Stored(
            _float32(jax.tree.map(merge_steps, traj.observation)),
            merge_steps(jnp.tanh(traj.action)).astype(jnp.float32),
            merge_steps(traj.reward),
            merge_steps(traj.discount),
            _float32(jax.tree.map(merge_steps, traj.final_observation)),
        )
        state = state._replace(buffer=buffer.add(state.buffer, items))
        stored = stored_items(state.step, items.reward.shape[0], capacity)
        ready = stored >= min_size
        keys = jax.random.split(key, config.updates_per_step)
        state, metrics = jax.lax.scan(
            lambda carry, k: grad_step(carry, k, ready), state, keys
        )
        metrics = {
            **jax.tree.map(jnp.mean, metrics),
            "replay/size": (stored * num_devices).astype(jnp.float32),
            "learner/grad_steps": state.grad_steps.astype(jnp.float32),
        }
        return state._replace(step=state.step + 1), metrics

    return Agent(
        init=init,
        acting=feed_forward(act, value),
        update=update,
        axis_name=axis_name,
        state_spec=SACState(P(), P(), P(), P(), P(), P(), P(DATA_AXIS)),
    )


def _float32(obs: PyTree) -> PyTree:
    """Observations, an array or a dict of them, as float32."""
    return jax.tree.map(lambda x: jnp.asarray(x, jnp.float32), obs)


def validate(config: SACConfig, shape: RunShape | None = None) -> None:
    """SAC's range rules (any run shape fits it): a `ConfigError` names the fix."""
    check_ranges(
        "sac",
        config,
        at_least_one=("buffer_size", "batch_size", "min_replay", "updates_per_step"),
        positive=("learning_rate", "init_alpha", "reward_scale"),
        non_negative=("alpha_learning_rate",),  # 0: learning_rate's
        unit=("gamma",),
    )
    check_target_tau("sac", config, "tau")
    scale = config.target_entropy_scale
    check(
        isinstance(scale, jax.core.Tracer) or math.isfinite(float(scale)),
        f"sac.target_entropy_scale={scale} must be a finite number (a negative "
        "one targets a positive entropy); e.g. --sac.target-entropy-scale 1.",
    )
    check_replay_sizes("sac", config, shape)


def _networks(
    config: SACConfig, network: NetworkConfig, obs_spec: Any, action_spec: Any
) -> tuple[Any, SACNetworks]:
    """SAC acts with its policy; the learner takes the policy and the critics."""
    del config
    networks = make_sac_networks(network, obs_spec, action_spec)
    return networks.policy, networks


ALGORITHM = Algorithm(
    name="sac",
    summary="SAC: soft actor-critic, twin critics, learned temperature, replay",
    config_type=SACConfig,
    make_agent=make_sac,
    make_networks=_networks,
    validate=validate,
    keeps_replay=lambda config: True,
    replay_items=transitions_per_update,
    dict_observations=True,
    action_kinds=("continuous",),
)
