"""What the Q-learners (DQN, Ape-X, R2D2) share: their networks and target step."""

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax

from purejaxdrl.agents.optim import local_copy
from purejaxdrl.networks import Network, NetworkConfig, make_q_network
from purejaxdrl.types import Params


def q_networks(
    config: Any, network: NetworkConfig, obs_spec: Any, action_spec: Any
) -> tuple[Network, Network]:
    """A Q-network (dueling if `config.dueling`), twice: to act and to learn."""
    q = make_q_network(network, obs_spec, action_spec, dueling=config.dueling)
    return q, q


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
