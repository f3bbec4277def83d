"""Pieces the agents share: acting, optimisers, and one flat-vector gradient step."""

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax

from purejaxdrl.config import check
from purejaxdrl.networks import (
    Network,
    NetworkConfig,
    RecurrentNetwork,
    make_actor_critic,
    make_q_network,
)
from purejaxdrl.types import Params, PyTree, Transition

OPTIMIZERS = ("rmsprop", "adam", "sgd")


def learning_rewards(
    reward: jax.Array, scale: jax.Array | float, clip: jax.Array | float
) -> jax.Array:
    """Rewards as the loss sees them: scaled, then clipped to [-clip, clip].

    `clip` 0 leaves them unclipped. Atari agents clip to 1 (Mnih et al., 2015;
    Espeholt et al., 2018) in the learner, so episode returns stay the game's.
    """
    reward = reward * scale
    return jnp.where(clip > 0, jnp.clip(reward, -clip, clip), reward)


def annealed_learning_rate(
    learning_rate: jax.Array | float,
    *,
    num_updates: int,
    anneal: bool,
    steps_per_update: int = 1,
) -> optax.Schedule:
    """A learning rate constant or decayed linearly to 0 over training.

    Linear annealing to 0 is what A3C (Mnih et al., 2016) and IMPALA
    (Espeholt et al., 2018, appendix) use.

    Args:
      learning_rate: the initial learning rate (may be traced, for sweeps).
      num_updates: number of agent updates in the run.
      anneal: decay linearly to 0, else constant.
      steps_per_update: optimiser steps per agent update.

    Returns:
      A schedule: optimiser step count (int32 []) -> learning rate (float32 []).

    """

    def schedule(count: jax.Array) -> jax.Array:
        if not anneal:
            return jnp.asarray(learning_rate, jnp.float32)
        frac = 1.0 - (count // steps_per_update) / num_updates
        # Clamped: a run continued past its budget keeps a zero, not negative, rate.
        return learning_rate * jnp.maximum(frac, 0.0)

    return schedule


def make_optimizer(
    name: str,
    learning_rate: optax.ScalarOrSchedule,
    *,
    max_grad_norm: jax.Array | float,
    eps: jax.Array | float,
    decay: jax.Array | float = 0.99,
) -> optax.GradientTransformation:
    """Global-norm gradient clipping followed by the optimiser `name`.

    `rmsprop` is IMPALA's (Espeholt et al., 2018) and A3C's shared RMSProp:
    no momentum, with ε inside the square root as TensorFlow's RMSProp has it.

    Args:
      name: one of OPTIMIZERS: rmsprop, adam or sgd.
      learning_rate: a value or a schedule of the optimiser step count.
      max_grad_norm: gradients are rescaled to at most this global norm.
      eps: the RMSProp / Adam ε (unused by sgd).
      decay: the RMSProp decay of the squared-gradient average.

    Returns:
      The optax transformation.

    Raises:
      ValueError: for an unknown optimiser name.

    """
    if name == "rmsprop":
        opt = optax.rmsprop(learning_rate, decay=decay, eps=eps, eps_in_sqrt=True)
    elif name == "adam":
        opt = optax.adam(learning_rate, eps=eps)
    elif name == "sgd":
        opt = optax.sgd(learning_rate)
    else:
        raise ValueError(f"optimizer={name!r} is not one of {OPTIMIZERS}; pick one.")
    return optax.chain(optax.clip_by_global_norm(max_grad_norm), opt)


def local_copy(tree: PyTree, axis_name: str | None) -> PyTree:
    """Replicated parameters as this device's own copy, to differentiate.

    Inside shard_map, the gradient of a per-device loss with respect to a
    replicated (invariant) value is summed over the devices by autodiff's
    transpose; with respect to a varying copy it is this device's own, and a
    `pmean` then gives the global batch's gradient whatever the device count.
    """
    if axis_name is None:
        return tree
    return jax.tree.map(lambda x: jax.lax.pcast(x, axis_name, to="varying"), tree)


def target_network_step(
    state: Any,
    loss_fn: Callable[[Params], tuple[jax.Array, jax.Array]],
    optimizer: optax.GradientTransformation,
    ready: jax.Array,
    *,
    target_every: int,
    target_tau: jax.Array | float,
    axis_name: str | None,
) -> tuple[Any, jax.Array, dict[str, jax.Array]]:
    """One gradient step of a Q-learner with a target network (DQN, R2D2).

    Args:
      state: has `params`, `target_params`, `opt_state` and `grad_steps`.
      loss_fn: params -> (loss, TD errors) on this device's batch.
      optimizer: the optax transformation.
      ready: bool []; before learning starts the four fields stay as they were.
      target_every: gradient steps between target updates.
      target_tau: each target update moves this fraction of the way (1: copy).
      axis_name: the mesh axis gradients and metrics are averaged over.

    Returns:
      (state with the four fields updated, TD errors, metrics `loss/total` and
      `td/abs_mean`, 0 before `ready`).

    """
    own = local_copy(state.params, axis_name)
    (loss, td), grads = jax.value_and_grad(loss_fn, has_aux=True)(own)
    metrics = {"loss/total": loss, "td/abs_mean": jnp.abs(td).mean()}
    if axis_name is not None:
        grads, metrics = jax.lax.pmean((grads, metrics), axis_name)
    updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
    params = optax.apply_updates(state.params, updates)
    grad_steps = state.grad_steps + 1
    tau = jnp.where(grad_steps % target_every == 0, target_tau, 0)
    target = optax.incremental_update(params, state.target_params, tau)
    # Before `ready` the learner state stays as it was. A select of these small
    # trees, not a `lax.cond`: a cond around the step would copy the whole
    # replay shard (tens of MB) on every update.
    params, target, opt_state, grad_steps = jax.tree.map(
        lambda new, old: jnp.where(ready, new, old),
        (params, target, opt_state, grad_steps),
        (state.params, state.target_params, state.opt_state, state.grad_steps),
    )
    state = state._replace(
        params=params, target_params=target, opt_state=opt_state, grad_steps=grad_steps
    )
    metrics = jax.tree.map(lambda m: jnp.where(ready, m, 0.0), metrics)
    return state, td, metrics


def flat_gradient_step(
    loss: Callable[..., tuple[jax.Array, jax.Array]],
    optimizer: optax.GradientTransformation,
    flat: jax.Array,
    opt_state: optax.OptState,
    *args: object,
    axis_name: str | None,
) -> tuple[jax.Array, optax.OptState, jax.Array]:
    """One optimiser step on a flat parameter vector, data-parallel over `axis_name`.

    The optimiser sees one vector (from `jax.flatten_util.ravel_pytree`), not a
    pytree: on CPU each small kernel costs more than its arithmetic, and an
    optimiser over a dozen leaves is dozens of kernels per step.

    Args:
      loss: `loss(flat, *args) -> (scalar loss, metrics float32 [M])`.
      optimizer: the optax transformation (its state over the flat vector).
      flat: parameters, float32 [P]; replicated over `axis_name`.
      opt_state: the optimiser state.
      *args: the rest of `loss`'s arguments (this device's data).
      axis_name: mesh axis to average gradients and metrics over, or None.

    Returns:
      (new flat parameters [P], new optimiser state, metrics [M] averaged over
      the devices of `axis_name`).

    """
    grads, metrics = jax.grad(loss, has_aux=True)(local_copy(flat, axis_name), *args)
    if axis_name is not None:
        grads, metrics = jax.lax.pmean((grads, metrics), axis_name)
    updates, opt_state = optimizer.update(grads, opt_state, flat)
    return flat + updates, opt_state, metrics


def replay_shard_sizes(
    name: str, config: Any, num_devices: int
) -> tuple[int, int, int]:
    """Per-device (capacity, batch, min_size) of a config's global replay sizes.

    `config` has `buffer_size`, `batch_size` and `min_replay`, over all devices.

    Raises:
      ValueError: when one does not split evenly over the devices.

    """
    sizes = (config.buffer_size, config.batch_size, config.min_replay)
    names = ("buffer_size", "batch_size", "min_replay")
    for field, value in zip(names, sizes, strict=True):
        if value < num_devices or value % num_devices:
            raise ValueError(
                f"{name}.{field}={value} must be a positive multiple of the "
                f"{num_devices} devices it is split over."
            )
    capacity, batch, min_size = (value // num_devices for value in sizes)
    return capacity, batch, min_size


def merge_steps(x: jax.Array) -> jax.Array:
    """[T, B, ...] -> [T * B, ...]: an unroll's steps as items for a replay buffer."""
    return x.reshape((-1, *x.shape[2:]))


def stored_items(step: jax.Array, per_update: int, capacity: int) -> jax.Array:
    """Items in a replay shard after the add of update `step` (counted from 0).

    Every device adds the same count each update, so this is the same on all of
    them, and learning starts on all of them at once.
    """
    return jnp.minimum((step + 1) * per_update, capacity)


def check_optimizer(name: str, optimizer: str) -> None:
    """Raises ConfigError unless `optimizer` is one `make_optimizer` builds."""
    check(
        optimizer in OPTIMIZERS,
        f"{name}.optimizer={optimizer!r} is not one of {OPTIMIZERS}; "
        f"e.g. --{name}.optimizer rmsprop.",
    )


def actor_critic_networks(
    config: Any, network: NetworkConfig, obs_spec: Any, action_spec: Any
) -> tuple[Network | RecurrentNetwork, Network | RecurrentNetwork]:
    """The acting and learner networks of an actor-critic: one network, twice.

    A recurrent one when `network.core` is not `none`.
    """
    del config  # the architecture is the run's, not the algorithm's
    actor_critic = make_actor_critic(network, obs_spec, action_spec)
    return actor_critic, actor_critic


def transition_example(
    obs_example: jax.Array, action_example: jax.ShapeDtypeStruct
) -> Transition:
    """One step of one environment, all zeros and no info: a buffer's example.

    Args:
      obs_example: one observation (unbatched).
      action_example: the shape and dtype of one stored action (unbatched):
        int32 [] for a categorical policy, float32 [A] (the pre-squash sample)
        for a tanh-Gaussian one. Anything with `shape` and `dtype` will do.

    Returns:
      A Transition of unbatched zeros, `reset` and `core_state` left unset.

    """
    obs = jnp.asarray(obs_example, jnp.float32)
    scalar = jnp.zeros((), jnp.float32)
    return Transition(
        observation=obs,
        action=jnp.zeros(action_example.shape, action_example.dtype),
        reward=scalar,
        discount=scalar,
        truncated=jnp.zeros((), bool),
        log_prob=scalar,
        value=scalar,
        bootstrap_value=scalar,
        final_observation=obs,
        info={},
    )


def q_networks(
    config: Any, network: NetworkConfig, obs_spec: Any, action_spec: Any
) -> tuple[Network, Network]:
    """A Q-network (dueling if `config.dueling`), twice: to act and to learn."""
    q = make_q_network(network, obs_spec, action_spec, dueling=config.dueling)
    return q, q
