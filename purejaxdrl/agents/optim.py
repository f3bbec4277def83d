"""How learners step: learning-rate schedules, optimisers, gradient steps."""

from collections.abc import Callable

import jax
import jax.numpy as jnp
import optax

from purejaxdrl.config import check
from purejaxdrl.types import PyTree

OPTIMIZERS = ("rmsprop", "adam", "sgd")


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


def check_optimizer(name: str, optimizer: str) -> None:
    """Raises ConfigError unless `optimizer` is one `make_optimizer` builds."""
    check(
        optimizer in OPTIMIZERS,
        f"{name}.optimizer={optimizer!r} is not one of {OPTIMIZERS}; "
        f"e.g. --{name}.optimizer rmsprop.",
    )


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
