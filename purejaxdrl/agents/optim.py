"""How learners step: one optimiser builder, and gradient steps on a loss.

The actor-critic learners' steps take a loss of the parameters and hide two
CPU tricks: one flat parameter vector and one vector of metrics.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
import optax
from jax.flatten_util import ravel_pytree

from purejaxdrl.agents.base import AgentState
from purejaxdrl.agents.fields import OptimizerChoiceFields, OptimizerFields
from purejaxdrl.config import ConfigError, check
from purejaxdrl.types import Metrics, Params, PRNGKey, PyTree

OPTIMIZERS = ("rmsprop", "adam", "radam", "sgd")

# loss(params, *data) -> (scalar loss, scalar metrics by name).
Loss = Callable[..., tuple[jax.Array, Metrics]]
# An AgentState, or a learner's own NamedTuple with its fields (IMPALA's).
LearnerState = TypeVar("LearnerState", bound=tuple)


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


def make_learner_optimizer(
    learning_rate: optax.ScalarOrSchedule,
    *,
    name: str = "adam",
    max_grad_norm: jax.Array | float | None,
    eps: jax.Array | float = 1e-8,
    decay: jax.Array | float = 0.99,
) -> optax.GradientTransformation:
    """Global-norm gradient clipping followed by the optimiser `name`.

    `rmsprop` is IMPALA's (Espeholt et al., 2018) and A3C's shared RMSProp:
    no momentum, with ε inside the square root as TensorFlow's RMSProp has it.
    `radam` is Rectified Adam (Liu et al., 2020), PQN's (Gallici et al., 2025).

    Args:
      learning_rate: a value or a schedule of the optimiser step count.
      name: one of OPTIMIZERS: rmsprop, adam, radam or sgd.
      max_grad_norm: gradients are rescaled to at most this global norm;
        None: no clipping (the optimiser alone).
      eps: the RMSProp / Adam / RAdam ε (unused by sgd); optax's Adam default.
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
    elif name == "radam":
        opt = optax.radam(learning_rate, eps=eps)
    elif name == "sgd":
        opt = optax.sgd(learning_rate)
    else:
        raise ValueError(f"optimizer={name!r} is not one of {OPTIMIZERS}; pick one.")
    if max_grad_norm is None:
        return opt
    return optax.chain(optax.clip_by_global_norm(max_grad_norm), opt)


def learner_optimizer(
    config: OptimizerFields,
    num_updates: int,
    *,
    steps_per_update: int = 1,
    **options: Any,
) -> tuple[optax.Schedule, optax.GradientTransformation]:
    """(learning-rate schedule, optimiser) of a learner's `OptimizerFields`.

    The rate is `config.learning_rate`, annealed if `config.anneal_lr` over
    `num_updates` updates of `steps_per_update` steps; the optimiser is the one
    `options` name (`make_learner_optimizer`'s name, eps, decay; a config with
    `OptimizerChoiceFields` names its own), clipped to `config.max_grad_norm`.
    """
    learning_rate = annealed_learning_rate(
        config.learning_rate,
        num_updates=num_updates,
        anneal=config.anneal_lr,
        steps_per_update=steps_per_update,
    )
    if isinstance(config, OptimizerChoiceFields):
        options = {"name": config.optimizer, "decay": config.rms_decay, **options}
    optimizer = make_learner_optimizer(
        learning_rate, max_grad_norm=config.max_grad_norm, **options
    )
    return learning_rate, optimizer


def check_optimizer(name: str, config: OptimizerChoiceFields) -> None:
    """That `config` names an optimiser the builder builds, with a usable decay.

    `rms_decay` must lie in [0, 1): at 1 RMSProp's squared-gradient average
    stays at its initial 0, so each step is lr g / sqrt(eps), SGD with a step
    1 / sqrt(eps) times larger (316x at eps 1e-5). 0 keeps only the last
    squared gradient, a sign-like step, which is still RMSProp. Checked
    whatever the optimiser, as the other ranges are.

    Raises:
      ConfigError: naming the section's value, the rule and the fix.

    """
    optimizer = config.optimizer
    check(
        optimizer in OPTIMIZERS,
        f"{name}.optimizer={optimizer!r} is not one of {OPTIMIZERS}; "
        f"e.g. --{name}.optimizer rmsprop.",
    )
    decay = config.rms_decay
    if isinstance(decay, jax.core.Tracer):
        return  # a sweep's values were checked one by one before stacking
    decay = float(decay)
    check(
        0.0 <= decay < 1.0,
        f"{name}.rms_decay={decay} must be in [0, 1): at 1 RMSProp's "
        "squared-gradient average never moves from 0 and each step is "
        f"lr g / sqrt(eps); e.g. --{name.replace('_', '-')}.rms-decay 0.99.",
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


def stack_metrics(metrics: Metrics) -> jax.Array:
    """Scalar metrics as one vector [M]: one all-reduce and scan output, not M.

    Raises:
      ConfigError: for a metric that is no scalar (a loss's), by its name.

    """
    for name, value in metrics.items():
        if jnp.shape(value) != ():
            raise ConfigError(
                f"a loss returned metric {name!r} of shape {jnp.shape(value)}, but "
                "each metric must be a scalar (the runners log one number per "
                "metric); return its mean, e.g. jnp.mean(x)."
            )
    return jnp.stack(list(metrics.values()))


def check_scalar_loss(total: jax.Array) -> None:
    """That a loss's total, which is differentiated, is a scalar (as it traces).

    Raises:
      ConfigError: for another shape, which JAX's "Gradient only defined for
        scalar-output functions" would name no loss for.

    """
    if jnp.ndim(total) != 0:
        raise ConfigError(
            f"a loss returned a total of shape {jnp.shape(total)}, but the loss "
            "differentiated must be a scalar (a gradient is of one number); "
            "return its mean, e.g. jnp.mean(x)."
        )


def loss_pair(
    out: Any, second: str, example: str, fits: Callable[[Any], bool]
) -> tuple[Any, Any]:
    """A loss's output `out` as its pair (total, `second`), checked as it traces.

    `second` names what the pair's second item is ("metrics dict", "TD errors
    ([B], or [T, B] for sequences)"), `fits` says whether an item is one, and
    `example` is a return of that contract to show. A loss that returns its
    total alone would otherwise fail with JAX's "iteration over a 0-d array",
    naming no loss.

    Raises:
      ConfigError: for another output: the contract, what was returned, and
        a return statement of the contract.

    """
    if isinstance(out, tuple | list) and len(out) == 2 and fits(out[1]):
        return out[0], out[1]
    if isinstance(out, tuple | list):
        got = f"({', '.join(map(_described, out))})"
    else:
        got = f"{_described(out)} alone"
    raise ConfigError(
        f"a loss returns (total, {second}); got {got}; e.g. return {example}."
    )


def total_and_metrics(out: Any) -> tuple[jax.Array, Metrics]:
    """A learner's loss's output as (total, metrics), else one line (`loss_pair`)."""
    return loss_pair(
        out,
        "metrics dict",
        "total, {'loss': total}",
        lambda metrics: isinstance(metrics, Mapping),
    )


def total_and_td(out: Any) -> tuple[jax.Array, jax.Array]:
    """A Q-learner's loss's output as (total, TD errors), else one line (`loss_pair`).

    TD errors are an array (traced or not), not a metrics dict: one per item,
    [B], or per step of each sequence, [T, B] (R2D2's learner).
    """
    return loss_pair(
        out,
        "TD errors ([B], or [T, B] for sequences)",
        "jnp.mean(td**2), td",
        lambda td: hasattr(td, "shape"),
    )


def _described(value: Any) -> str:
    """What a loss returned, in a few characters: "float32[]", "dict", "None"."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"{jnp.dtype(value.dtype).name}{list(jnp.shape(value))}"
    return "None" if value is None else type(value).__name__


def unstack_metrics(names: Sequence[str], stacked: jax.Array) -> Metrics:
    """`stack_metrics` undone: the vector [M] as metrics by name."""
    return dict(zip(names, stacked, strict=True))


def flat_optimizer_state(
    optimizer: optax.GradientTransformation, params: Params
) -> optax.OptState:
    """The optimiser's state over `params` as one flat vector, as the steps use."""
    return optimizer.init(ravel_pytree(params)[0])


def flat_learner_init(
    network: Any, optimizer: optax.GradientTransformation, obs_example: jax.Array
) -> Callable[[PRNGKey], AgentState]:
    """`init(key) -> AgentState`: `network`'s parameters, a flat optimiser state."""

    def init(key: PRNGKey) -> AgentState:
        params = network.init(key, obs_example)
        opt_state = flat_optimizer_state(optimizer, params)
        return AgentState(params, opt_state, jnp.zeros((), jnp.int32))

    return init


def _flat_step(
    loss: Loss,
    optimizer: optax.GradientTransformation,
    unravel: Callable[[jax.Array], Params],
    axis_name: str | None,
    names: list[str],
) -> Callable[[tuple, tuple], tuple[tuple, jax.Array]]:
    """`step((flat, opt_state), args) -> ((flat, opt_state), metrics [M])`.

    One optimiser step on the flat vector; the metrics' names go to `names`.
    """

    def step(carry: tuple, args: tuple) -> tuple[tuple, jax.Array]:
        flat, opt_state = carry

        def flat_loss(flat: jax.Array, *args: Any) -> tuple[jax.Array, jax.Array]:
            total, metrics = total_and_metrics(loss(unravel(flat), *args))
            check_scalar_loss(total)
            names[:] = metrics  # Python strings, known once traced
            return total, stack_metrics(metrics)

        grads, stacked = jax.grad(flat_loss, has_aux=True)(
            local_copy(flat, axis_name), *args
        )
        if axis_name is not None:
            grads, stacked = jax.lax.pmean((grads, stacked), axis_name)
        updates, opt_state = optimizer.update(grads, opt_state, flat)
        return (flat + updates, opt_state), stacked

    return step


def flat_gradient_step(
    loss: Loss,
    optimizer: optax.GradientTransformation,
    state: LearnerState,
    *args: Any,
    axis_name: str | None,
) -> tuple[LearnerState, Metrics]:
    """An update of one optimiser step on `loss(params, *args)`, over `axis_name`.

    `loss` returns (scalar loss, scalar metrics by name: another shape is
    refused as it traces, `check_scalar_loss`); `args` are this
    device's data; gradients and metrics are averaged over `axis_name` (None:
    one device). The optimiser sees one vector (`ravel_pytree`), its state
    too (`flat_optimizer_state`): on CPU each small kernel costs more than its
    arithmetic, and an optimiser over a dozen leaves is dozens of kernels.

    Returns:
      (`state` with the new parameters and optimiser state and `step` + 1,
      metrics).

    """
    flat, unravel = ravel_pytree(state.params)
    names: list[str] = []
    step = _flat_step(loss, optimizer, unravel, axis_name, names)
    (flat, opt_state), stacked = step((flat, state.opt_state), args)
    state = state._replace(
        params=unravel(flat), opt_state=opt_state, step=state.step + 1
    )
    return state, unstack_metrics(names, stacked)


def flat_gradient_epochs(
    loss: Loss,
    optimizer: optax.GradientTransformation,
    state: LearnerState,
    minibatches: Callable[[PRNGKey], tuple],
    keys: PRNGKey,
    *,
    axis_name: str | None,
) -> tuple[LearnerState, Metrics]:
    """An update of epochs of optimiser steps, one per minibatch, on one vector.

    As `flat_gradient_step`, but the vector is carried through all the steps
    and unravelled once. `minibatches(key)` gives an epoch's minibatches: a
    tuple of `loss`'s data arguments, leaves [M, ...], one step each in order;
    `keys` [E] are the epochs'. The metrics are the steps' mean.
    """
    flat, unravel = ravel_pytree(state.params)
    names: list[str] = []
    step = _flat_step(loss, optimizer, unravel, axis_name, names)

    def epoch(carry: tuple, key: PRNGKey) -> tuple[tuple, jax.Array]:
        return jax.lax.scan(step, carry, minibatches(key))

    (flat, opt_state), stacked = jax.lax.scan(epoch, (flat, state.opt_state), keys)
    means = stacked.reshape(-1, stacked.shape[-1]).mean(axis=0)
    state = state._replace(
        params=unravel(flat), opt_state=opt_state, step=state.step + 1
    )
    return state, unstack_metrics(names, means)
