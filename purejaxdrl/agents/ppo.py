"""Proximal Policy Optimisation (Schulman et al., 2017, arXiv:1707.06347)."""

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from purejaxdrl.agents.actor_critic import (
    actor_critic_acting,
    actor_critic_networks,
    gae_targets,
    learner_outputs,
)
from purejaxdrl.agents.base import (
    Agent,
    AgentState,
    Algorithm,
    RunShape,
    check_agent_args,
)
from purejaxdrl.agents.fields import ActorCriticFields, AdvantageFields
from purejaxdrl.agents.optim import (
    flat_gradient_epochs,
    flat_learner_init,
    learner_optimizer,
)
from purejaxdrl.agents.ppo_minibatches import (
    env_groups,
    minibatch_split,
    sequence_split,
)
from purejaxdrl.config import ConfigError, check, check_ranges
from purejaxdrl.config_docs import both_ways, flag
from purejaxdrl.networks import AnyNetwork, RecurrentNetwork
from purejaxdrl.parallel import env_multiple_message, split_share
from purejaxdrl.rl.losses import (
    clipped_surrogate_loss,
    normalize_advantages,
    value_loss,
)
from purejaxdrl.types import Metrics, Params, PRNGKey, PyTree, Transition


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class PPOConfig(AdvantageFields, ActorCriticFields):
    """PPO hyper-parameters; the defaults are PureJaxRL's and CleanRL's.

    Static fields change shapes or loop counts (changing them recompiles); the
    others are array leaves that can be traced, vmapped and swept. PPO's
    own fields are described below. Those it shares with other learners
    (learning rate, discount, rewards, loss weights, Adam's ε, GAE) are
    declared and described in `agents.fields` (`ActorCriticFields`,
    `AdvantageFields`); `help(PPOConfig)` and `purejaxdrl train --help`
    describe every field, the shared ones too.

    Attributes:
      num_epochs: passes over each update's batch.
      num_minibatches: minibatches each pass is split into, one gradient step
        each (with a recurrent core: whole environment sequences, so it must
        divide num_envs).
      clip_value: clip the value loss as PPO2 does: the prediction may move
        at most clip_eps from the value it had when the data was collected.
      clip_eps: ε of the clipped surrogate, the ratio π/π_old's bound 1 ± ε
        (and the value's, with clip_value).

    """

    # Static.
    num_epochs: int = jax.tree.static(default=4)
    num_minibatches: int = jax.tree.static(default=4)
    clip_value: bool = jax.tree.static(default=True)
    # Dynamic.
    clip_eps: float | jax.Array = 0.2


class Batch(NamedTuple):
    """An unroll and its advantages, leaves [T, B, ...]: what PPO learns from.

    `reset` and the start states (leaves [B, ...]) only for a recurrent core.
    """

    observation: PyTree
    action: jax.Array
    log_prob: jax.Array  # the behaviour policy's
    value: jax.Array  # the behaviour values, which the value loss clips around
    advantage: jax.Array
    target: jax.Array  # the value targets
    reset: jax.Array | tuple = ()
    core_state: PyTree = ()


def loss(
    params: Params,
    batch: Batch,
    key: PRNGKey,
    *,
    network: AnyNetwork,
    config: PPOConfig,
    axis_name: str | None = None,
    step: jax.Array | int = 0,
) -> tuple[jax.Array, Metrics]:
    """PPO's objective on one minibatch (Schulman et al., 2017, eq. 9).

    The clipped surrogate of the probability ratios r = π(a|s) / π_old(a|s),
    plus `value_cost` x the value loss (clipped around the old values when
    `clip_value`), minus `entropy_cost` x the mean entropy.

    `axis_name` and `step` are for a variant's loss (`make_ppo`'s `loss_fn`),
    unused here: the mesh axis a statistic of the batch must be averaged over
    to be the same on any device count (None on one device), and the index of
    this update from 0 (for a schedule).
    """
    del axis_name, step
    dist = network.distribution
    policy, value = learner_outputs(network, params, batch)
    log_ratio = dist.log_prob(policy, batch.action) - batch.log_prob
    ratio = jnp.exp(log_ratio)
    pg_loss = clipped_surrogate_loss(ratio, batch.advantage, config.clip_eps)
    v_old = batch.value if config.clip_value else None
    v_loss = value_loss(value, batch.target, v_old, config.clip_eps)
    entropy = jnp.mean(dist.entropy(policy, key))
    total = pg_loss + config.value_cost * v_loss - config.entropy_cost * entropy
    return total, {
        "loss/total": total,
        "loss/policy": pg_loss,
        "loss/value": v_loss,
        "entropy": entropy,
        # k3 estimator of KL(old || new) (Schulman, 2020): unbiased, >= 0.
        "approx_kl": jnp.mean(ratio - 1.0 - log_ratio),
        "clip_fraction": jnp.mean(jnp.abs(ratio - 1.0) > config.clip_eps),
    }


def env_multiple(config: Any, shape: RunShape) -> int:
    """What each device's environment count must be a multiple of.

    For any config whose `num_minibatches` split as PPO's do (PQN's too). A
    minibatch takes whole groups of environments: with a recurrent core, one
    in M of them (whole sequences, `sequence_split`); else, when there are
    more minibatches than time blocks, one in Me (`minibatch_split`).
    """
    if shape.recurrent:
        return config.num_minibatches
    return env_groups(config.num_minibatches, shape.unroll_length)


def checked_split(
    validate: Callable[[Any, RunShape], None],
    config: Any,
    batch: PyTree,
    traj: Transition,
    recurrent: bool,
    devices: int = 1,
    *,
    axis_name: str | None = None,
) -> tuple[PyTree, Callable[[PyTree, PRNGKey], PyTree]]:
    """Checks that this device's unroll splits into minibatches, and how it does.

    For PPO and any learner that takes its minibatches as PPO does (PQN):
    `validate(config, shape)` with `traj`'s [T, B]; then, with a recurrent
    core, `batch` with the unroll's resets and start states and its whole
    sequences' split (`sequence_split`), else `batch` and `minibatch_split`.
    `devices` (the run's `num_devices`) the batch is split over: the message
    names the run's num_envs and each device's share. The environments are
    dealt into new groups for each key, which needs the learner's `axis_name`
    (the device's place among the environments).
    """
    t, b = traj.reward.shape
    validate(config, RunShape(b * devices, t, recurrent, num_devices=devices))
    if recurrent:
        batch = batch._replace(reset=traj.reset, core_state=traj.core_state)
        return batch, sequence_split(config.num_minibatches, axis_name=axis_name)
    return batch, minibatch_split((t, b), config.num_minibatches, axis_name=axis_name)


def make_ppo(
    config: PPOConfig,
    network: AnyNetwork,
    obs_example: jax.Array,
    run: RunShape,
    *,
    loss_fn: Callable[..., tuple[jax.Array, Metrics]] = loss,
) -> Agent:
    """Builds PPO (an `AgentFactory`): epochs of minibatch Adam steps on `loss`.

    `update` takes time-major transitions [T, B] (B: this device's
    environments) and splits them into minibatches by `minibatch_split`; with
    a recurrent core, into whole sequences (`sequence_split`)
    re-unrolled from the core state stored at their start. Advantages are
    normalised over `axis_name` too.

    `loss_fn` replaces the objective, with `loss`'s signature (it may call
    `loss` and add to it): a variant of PPO is
    `functools.partial(make_ppo, loss_fn=my_loss)` in a record of its own, and
    `config` may be a subclass of `PPOConfig` with the variant's fields.

    Minibatches are CleanRL's in size, not in how they are drawn: not an
    i.i.d. draw of the T x B steps, each holds a shuffled share of the time
    steps of every environment (or of a shuffled group of them, see
    `minibatch_split`), so that each device's part of it is its own.
    """
    # `update` checks the shape of the batch it is given, not `run`'s.
    check_agent_args(validate, config, run, fits=False)
    axis_name = run.axis_name
    steps_per_update = config.num_epochs * config.num_minibatches
    learning_rate, optimizer = learner_optimizer(
        config, run.num_updates, steps_per_update=steps_per_update, eps=config.eps
    )
    recurrent = isinstance(network, RecurrentNetwork)
    acting = actor_critic_acting(network)
    context = {"network": network, "config": config, "axis_name": axis_name}

    def update(
        state: AgentState, traj: Transition, key: PRNGKey
    ) -> tuple[AgentState, Metrics]:
        adv, target = gae_targets(traj, config)
        batch = Batch(
            traj.observation, traj.action, traj.log_prob, traj.value, adv, target
        )
        batch, split = checked_split(
            validate, config, batch, traj, recurrent, run.num_devices,
            axis_name=axis_name,
        )  # fmt: skip
        # Each minibatch's advantages are standardised over all its steps.
        adv_axes = (1, 2) if recurrent else 1

        def minibatches(key: PRNGKey) -> tuple[Batch, PRNGKey]:
            key_perm, key = jax.random.split(key)
            minibatches = split(batch, key_perm)
            if config.normalize_advantages:
                # Each minibatch standardised over its global rows, all of the
                # epoch's at once: two all-reduces per epoch, not two per
                # minibatch, each a barrier that every device waits at.
                advantage = normalize_advantages(
                    minibatches.advantage, axis_name, axis=adv_axes
                )
                minibatches = minibatches._replace(advantage=advantage)
            return minibatches, jax.random.split(key, config.num_minibatches)

        new_state, metrics = flat_gradient_epochs(
            functools.partial(loss_fn, **context, step=state.step),
            optimizer,
            state,
            minibatches,
            jax.random.split(key, config.num_epochs),
            axis_name=axis_name,
        )
        metrics["learning_rate"] = learning_rate(state.step * steps_per_update)
        return new_state, metrics

    init = flat_learner_init(network, optimizer, obs_example)
    return Agent(init=init, acting=acting, update=update, axis_name=axis_name)


def validate(
    config: PPOConfig, shape: RunShape | None = None, name: str = "ppo"
) -> None:
    """PPO's range rules, and with `shape` that its minibatches split the batch.

    `shape` is the run's (`num_envs` over all devices) or one device's; `name`
    is the section messages name (a variant registered under another name
    passes its own, `functools.partial(validate, name="ppo_kl")`).

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    check_ranges(
        name,
        config,
        at_least_one=("num_epochs", "num_minibatches"),
        positive=("learning_rate", "clip_eps", "max_grad_norm", "reward_scale", "eps"),
        non_negative=("entropy_cost", "value_cost", "reward_clip"),
        unit=("gamma", "gae_lambda"),
    )
    check_minibatches(name, config, shape)
    if shape is not None:  # after: a minibatch that does not split says so
        check_normalised_batch(name, config, shape, config.num_minibatches)


def check_normalised_batch(
    name: str, config: Any, shape: RunShape, num_minibatches: int = 1
) -> None:
    """That advantages normalised over a (mini)batch have two samples to use.

    Normalising one sample's advantage makes it 0: the policy would never
    learn, silently (`approx_kl` 0 all run).

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    samples = shape.num_envs * shape.unroll_length // max(1, num_minibatches)
    check(
        not getattr(config, "normalize_advantages", False) or samples >= 2,
        f"{name}.normalize_advantages=true over {samples} sample per "
        f"{'minibatch' if num_minibatches > 1 else 'batch'} (num_envs x "
        f"unroll_length / num_minibatches) makes every advantage 0: the policy "
        "would not learn; raise --num-envs or --unroll-length"
        + (f", lower --{name}.num-minibatches" if num_minibatches > 1 else "")
        + f", or pass --{name}.normalize-advantages false.",
    )


def check_minibatches(name: str, config: Any, shape: RunShape | None) -> None:
    """That `config.num_minibatches` splits `shape`'s environments (`env_multiple`).

    For PPO and any learner that takes its minibatches as PPO does (PQN);
    `name` is the config section the message names. Nothing without a shape.
    The rule and its line are `parallel`'s (`split_share`,
    `env_multiple_message`), as for every algorithm; this says PPO's why.

    Raises:
      ConfigError: naming the value, the rule and the fix.

    """
    if shape is None:
        return
    envs, devices = shape.num_envs, shape.num_devices
    multiple = env_multiple(config, shape)
    # With no multiple, an uneven split alone is `parallel.per_device`'s.
    if multiple <= 1 or split_share(envs, devices, multiple) is not None:
        return
    if shape.recurrent:
        why = "a recurrent core (minibatches of whole sequences)"
        also = _fewer_sequences(name, config.num_minibatches, shape)
    else:
        why = f"unroll_length={shape.unroll_length}"
        near = _nearest_divisor(config.num_minibatches, shape.unroll_length)
        field = f"{name}.num_minibatches"
        also = (
            ", or make num_minibatches a divisor of unroll_length, e.g. "
            + both_ways(flag(field), field, near)
        )
    needs = f"{name}.num_minibatches={config.num_minibatches} with {why}"
    message = env_multiple_message(
        needs,
        envs,
        devices,
        multiple,
        flag=flag(shape.devices_field),
        python=shape.devices_field,
        also=also,
        requested=shape.requested_devices,
    )
    raise ConfigError(message)


def _fewer_sequences(name: str, num_minibatches: int, shape: RunShape) -> str:
    """The other fix for whole-sequence minibatches: fewer of them.

    The largest divisor of each device's environments below
    `num_minibatches`, spelt both ways; nothing where the environments do not
    split evenly over the devices (fewer minibatches cannot mend that).
    """
    devices = shape.num_devices if shape.num_devices > 1 else shape.requested_devices
    each, rest = divmod(shape.num_envs, max(1, devices))
    if rest or each < 1:
        return ""
    fewer = max(d for d in range(1, num_minibatches + 1) if each % d == 0)
    field = f"{name}.num_minibatches"
    return (
        f", or lower num_minibatches to a divisor of each device's {each} "
        f"envs, e.g. {both_ways(flag(field), field, fewer)}"
    )


def _nearest_divisor(number: int, of: int) -> int:
    """The divisor of `of` nearest `number` (the smaller of two as near)."""
    divisors = [d for d in range(1, of + 1) if of % d == 0]
    return min(divisors, key=lambda d: (abs(d - number), d))


ALGORITHM = Algorithm(
    name="ppo",
    recurrent=True,
    dict_observations=True,
    summary="PPO: clipped surrogate, GAE, epochs of minibatches, on-policy",
    config_type=PPOConfig,
    make_agent=make_ppo,
    make_networks=actor_critic_networks,
    validate=validate,
    env_multiple=env_multiple,
)
