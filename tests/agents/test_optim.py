"""The one optimiser builder and the flat gradient steps every learner shares."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from purejaxdrl.agents.base import AgentState
from purejaxdrl.agents.optim import (
    annealed_learning_rate,
    flat_gradient_epochs,
    flat_gradient_step,
    flat_optimizer_state,
    make_learner_optimizer,
)
from purejaxdrl.config import ConfigError

PARAMS = {"a": jnp.array([1.0, 2.0]), "b": jnp.array(3.0)}


def loss(params, target, scale=1.0):
    """0.5 |a - target|² + b², with two named metrics."""
    d = params["a"] - target
    total = scale * (0.5 * jnp.sum(d * d) + params["b"] ** 2)
    return total, {"loss/total": total, "b": params["b"]}


def test_builder_is_the_optax_chain_each_learner_had():
    grads = {"a": jnp.array([3.0, -4.0]), "b": jnp.array(0.5)}
    cases = [
        # PPO, DQN, R2D2: clipping then Adam with their ε.
        (
            make_learner_optimizer(0.1, max_grad_norm=1.0, eps=1e-5),
            optax.chain(optax.clip_by_global_norm(1.0), optax.adam(0.1, eps=1e-5)),
        ),
        # A2C and IMPALA: TensorFlow's RMSProp.
        (
            make_learner_optimizer(
                0.1, name="rmsprop", max_grad_norm=40.0, eps=0.01, decay=0.9
            ),
            optax.chain(
                optax.clip_by_global_norm(40.0),
                optax.rmsprop(0.1, decay=0.9, eps=0.01, eps_in_sqrt=True),
            ),
        ),
        # SAC: Adam alone, optax's ε, no clipping (and no chain in its state).
        (make_learner_optimizer(0.1, max_grad_norm=None), optax.adam(0.1)),
    ]
    for built, reference in cases:
        state, ref_state = built.init(PARAMS), reference.init(PARAMS)
        assert jax.tree.structure(state) == jax.tree.structure(ref_state)
        updates, _ = built.update(grads, state, PARAMS)
        expected, _ = reference.update(grads, ref_state, PARAMS)
        jax.tree.map(np.testing.assert_array_equal, updates, expected)
    with pytest.raises(ValueError, match="optimizer='lamb' is not one of"):
        make_learner_optimizer(0.1, name="lamb", max_grad_norm=None)


def test_flat_gradient_step_steps_the_loss_of_the_params():
    sgd = make_learner_optimizer(0.5, name="sgd", max_grad_norm=None)
    opt_state = flat_optimizer_state(sgd, PARAMS)
    assert opt_state == sgd.init(jnp.array([1.0, 2.0, 3.0]))  # over one flat vector
    target = jnp.array([0.0, 1.0])
    state, metrics = flat_gradient_step(
        loss, sgd, AgentState(PARAMS, opt_state, 7), target, axis_name=None
    )
    params = state.params
    assert state.step == 8  # one update
    # By hand: ∇a = a - target = [1, 1], ∇b = 2b = 6; lr 0.5.
    np.testing.assert_allclose(params["a"], [0.5, 1.5])
    np.testing.assert_allclose(params["b"], 0.0)
    assert list(metrics) == ["loss/total", "b"]
    np.testing.assert_allclose(metrics["loss/total"], 0.5 * 2 + 9.0)
    np.testing.assert_allclose(metrics["b"], 3.0)


def test_flat_gradient_epochs_are_the_steps_in_order():
    sgd = make_learner_optimizer(0.1, name="sgd", max_grad_norm=None)
    # Two epochs of three minibatches: (target, scale) pairs, one per step.
    targets = jnp.arange(12.0).reshape(2, 3, 2)
    scales = jnp.array([[1.0, 2.0, 0.5], [0.25, 1.0, 3.0]])
    keys = jnp.arange(2)

    def minibatches(epoch):
        return targets[epoch], scales[epoch]

    start = AgentState(PARAMS, flat_optimizer_state(sgd, PARAMS), jnp.int32(0))
    state, metrics = jax.jit(
        lambda s: flat_gradient_epochs(loss, sgd, s, minibatches, keys, axis_name=None)
    )(start)
    assert state.step == 1  # one update of six steps
    expected, seen = start, []
    for e in range(2):
        for m in range(3):
            expected, step_metrics = flat_gradient_step(
                loss, sgd, expected, targets[e, m], scales[e, m], axis_name=None
            )
            seen.append(step_metrics["loss/total"])
    jax.tree.map(np.testing.assert_allclose, state.params, expected.params)
    np.testing.assert_allclose(metrics["loss/total"], np.mean(seen), rtol=1e-6)


def test_the_annealed_rate_falls_linearly_per_update_to_zero_and_stays():
    # 4 updates of 3 optimiser steps: the rate of update k is 1 - k/4 at each
    # of its steps, and 0 past the budget (a run continued beyond it).
    schedule = annealed_learning_rate(
        2.0, num_updates=4, anneal=True, steps_per_update=3
    )
    rates = [float(schedule(jnp.int32(count))) for count in range(15)]
    want = [1, 1, 1, 0.75, 0.75, 0.75, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0, 0, 0]
    np.testing.assert_allclose(rates, 2.0 * np.array(want))
    constant = annealed_learning_rate(2.0, num_updates=4, anneal=False)
    assert [float(constant(jnp.int32(c))) for c in (0, 7, 20)] == [2.0] * 3


def test_a_loss_that_is_no_scalar_is_refused_in_one_line_as_it_traces():
    # JAX's own "Gradient only defined for scalar-output functions" names no
    # loss; the step says which value is wrong and how to fix it.
    sgd = make_learner_optimizer(0.5, name="sgd", max_grad_norm=None)
    state = AgentState(PARAMS, flat_optimizer_state(sgd, PARAMS), 0)

    def per_sample(params, target):
        d = params["a"] - target
        return 0.5 * d * d, {"b": params["b"]}  # [2], no sum

    with pytest.raises(ConfigError) as error:
        flat_gradient_step(per_sample, sgd, state, jnp.zeros(2), axis_name=None)
    assert str(error.value) == (
        "a loss returned a total of shape (2,), but the loss differentiated must "
        "be a scalar (a gradient is of one number); return its mean, e.g. "
        "jnp.mean(x)."
    )


@pytest.mark.parametrize(
    ("returned", "got"),
    [
        (lambda total, b: total, "float32[] alone"),  # forgot ", metrics"
        (lambda total, b: (total, b), "(float32[], float32[])"),
        (lambda total, b: (total, {}, b), "(float32[], dict, float32[])"),
        (lambda total, b: None, "None alone"),
    ],
)
def test_a_loss_that_returns_no_total_and_metrics_pair_is_refused_in_one_line(
    returned, got
):
    # Unpacked as it was, a total alone failed with JAX's "iteration over a
    # 0-d array", naming no loss and no contract.
    sgd = make_learner_optimizer(0.5, name="sgd", max_grad_norm=None)
    state = AgentState(PARAMS, flat_optimizer_state(sgd, PARAMS), 0)

    def slip(params, target):
        return returned(loss(params, target)[0], params["b"])

    with pytest.raises(ConfigError) as error:
        flat_gradient_step(slip, sgd, state, jnp.zeros(2), axis_name=None)
    assert str(error.value) == (
        f"a loss returns (total, metrics dict); got {got}; e.g. return total, "
        "{'loss': total}."
    )
    with pytest.raises(ConfigError, match=r"^a loss returns \(total, metrics dict\)"):
        minibatches = lambda key: (jnp.zeros((1, 2)),)  # noqa: E731
        flat_gradient_epochs(
            slip, sgd, state, minibatches, jnp.arange(1), axis_name=None
        )
