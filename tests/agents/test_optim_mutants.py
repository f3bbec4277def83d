"""The optimisers and the flat steps against their update rules, by hand.

Gaps that mutation testing found: RMSProp's decay and RAdam were only
compared with optax given the same arguments (optax's defaults hid a dropped
one), SGD's and Adam's state over several steps, what `learner_optimizer`
takes from a config, and the steps' averaging over devices.
"""

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

from purejaxdrl.agents.a2c import A2CConfig
from purejaxdrl.agents.base import AgentState
from purejaxdrl.agents.fields import OptimizerFields
from purejaxdrl.agents.optim import (
    annealed_learning_rate,
    flat_gradient_epochs,
    flat_gradient_step,
    flat_optimizer_state,
    learner_optimizer,
    make_learner_optimizer,
)
from purejaxdrl.parallel import make_mesh

# Gradients of 5 steps, one of them large and one with a zero.
GRADS = np.array(
    [[0.5, -2.0], [1.5, 0.25], [-1.0, 3.0], [0.0, -0.5], [2.0, 1.0]], np.float32
)
NO_CLIP = 1e9


def _updates(optimizer, grads=GRADS) -> np.ndarray:
    """The optimiser's updates for `grads` [T, n], fed one step at a time."""
    state = optimizer.init(jnp.zeros(grads.shape[1]))
    out = []
    for g in grads:
        update, state = optimizer.update(jnp.asarray(g), state, jnp.zeros(len(g)))
        out.append(update)
    return np.asarray(out)


def _rmsprop(grads, lr, decay, eps):
    """TensorFlow's RMSProp: ν ← decay ν + (1 - decay) g², Δ = -lr g / √(ν + ε)."""
    nu, out = np.zeros(grads.shape[1]), []
    for g in grads.astype(np.float64):
        nu = decay * nu + (1 - decay) * g * g
        out.append(-lr * g / np.sqrt(nu + eps))
    return np.array(out)


def _adam_moments(grads, b1=0.9, b2=0.999):
    """Adam's bias-corrected moments (m̂_t, v̂_t) for t = 1..T."""
    m = v = np.zeros(grads.shape[1])
    for t, g in enumerate(grads.astype(np.float64), start=1):
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        yield t, m / (1 - b1**t), v / (1 - b2**t)


def _adam(grads, lr, eps):
    return np.array([-lr * m / (np.sqrt(v) + eps) for _, m, v in _adam_moments(grads)])


def _radam_steps(grads, lr, eps, b2=0.999):
    """Rectified Adam (Liu et al., 2020, algorithm 2) by step t: ρ_t the length
    of the approximated SMA; the momentum alone while the variance is
    intractable, else the rectified Adam step."""
    rho_inf = 2 / (1 - b2) - 1
    for t, m, v in _adam_moments(grads, b2=b2):
        rho = rho_inf - 2 * t * b2**t / (1 - b2**t)
        r = math.sqrt(
            (rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho)
            if rho > 4
            else 0.0
        )
        yield t, rho, -lr * m, -lr * r * m / (np.sqrt(v) + eps)


def test_rmsprop_decays_its_average_at_the_given_rate():
    # 0.5, far from optax's default 0.9 and the builder's 0.99.
    built = make_learner_optimizer(
        0.1, name="rmsprop", max_grad_norm=None, eps=0.01, decay=0.5
    )
    want = _rmsprop(GRADS, 0.1, 0.5, 0.01)
    np.testing.assert_allclose(_updates(built), want, rtol=1e-5)
    default = make_learner_optimizer(0.1, name="rmsprop", max_grad_norm=None)
    np.testing.assert_allclose(
        _updates(default), _rmsprop(GRADS, 0.1, 0.99, 1e-8), rtol=1e-5
    )


def test_radam_is_the_momentum_then_the_rectified_step():
    # 30 steps: ρ_t < 4 (the momentum alone) for t <= 4, then rectified. Near
    # ρ = 5 implementations' thresholds differ, and float32's ρ_t, a difference
    # of two numbers near 2 / (1 - β₂), moves the step by 1% at t = 6, 0.15% at
    # t = 20. ε = 0.5 is a fifth of √v̂ or more: a dropped ε shows.
    grads = np.concatenate([GRADS * s for s in (1.0, -1.5, 0.5, 2.0, -1.0, 1.0)])
    built = make_learner_optimizer(0.1, name="radam", max_grad_norm=None, eps=0.5)
    got = _updates(built, grads)
    for t, rho, momentum, rectified in _radam_steps(grads, 0.1, 0.5):
        if t <= 4:
            assert rho < 4
            np.testing.assert_allclose(got[t - 1], momentum, rtol=1e-5)
        elif t >= 20:
            np.testing.assert_allclose(got[t - 1], rectified, rtol=1e-2)


def test_sgd_and_adam_over_several_steps():
    sgd = make_learner_optimizer(0.1, name="sgd", max_grad_norm=None)
    np.testing.assert_allclose(_updates(sgd), -0.1 * GRADS, rtol=1e-6)
    adam = make_learner_optimizer(0.1, max_grad_norm=None, eps=0.1)
    np.testing.assert_allclose(_updates(adam), _adam(GRADS, 0.1, 0.1), rtol=1e-5)


def test_learner_optimizer_builds_what_the_config_names():
    # The A2C config's optimiser and decay; the learner's own eps.
    config = A2CConfig(
        optimizer="rmsprop",
        rms_decay=0.5,
        learning_rate=0.1,
        max_grad_norm=NO_CLIP,
        anneal_lr=False,
    )
    _, optimizer = learner_optimizer(config, 10, eps=0.01)
    want = _rmsprop(GRADS, 0.1, 0.5, 0.01)
    np.testing.assert_allclose(_updates(optimizer), want, rtol=1e-5)
    sgd = dataclasses.replace(config, optimizer="sgd")
    _, optimizer = learner_optimizer(sgd, 10, eps=0.01)
    np.testing.assert_allclose(_updates(optimizer), -0.1 * GRADS, rtol=1e-6)
    # A config without a choice: the options' optimiser (here adam's default).
    plain = OptimizerFields(learning_rate=0.1, max_grad_norm=NO_CLIP, anneal_lr=False)
    _, optimizer = learner_optimizer(plain, 10, eps=0.1)
    np.testing.assert_allclose(_updates(optimizer), _adam(GRADS, 0.1, 0.1), rtol=1e-5)


def test_learner_optimizer_anneals_per_update_as_the_config_says():
    # 4 updates of 3 steps from 2.0: 2, 1.5, 1, 0.5 per update, then 0, also
    # from the 6th update on (count 15), where 1 - 5/4 is below 0.
    config = OptimizerFields(learning_rate=2.0, anneal_lr=True)
    schedule, _ = learner_optimizer(config, 4, steps_per_update=3)
    rates = [float(schedule(jnp.int32(c))) for c in range(20)]
    want = [2.0] * 3 + [1.5] * 3 + [1.0] * 3 + [0.5] * 3 + [0.0] * 8
    np.testing.assert_allclose(rates, want)
    constant = dataclasses.replace(config, anneal_lr=False, learning_rate=0.1)
    schedule, _ = learner_optimizer(constant, 4, steps_per_update=3)
    for count in (0, 5, 100):
        rate = schedule(jnp.int32(count))
        assert rate.dtype == jnp.float32 and rate == np.float32(0.1)
    assert annealed_learning_rate(0.1, num_updates=4, anneal=False)(0).dtype == (
        jnp.float32
    )


PARAMS = {"a": jnp.array([1.0, 2.0]), "b": jnp.array(3.0)}


def _loss(params, target, scale=1.0):
    """scale (0.5 |a - target|² + b²): ∇a = scale (a - target), ∇b = 2 scale b."""
    d = params["a"] - target
    total = scale * (0.5 * jnp.sum(d * d) + params["b"] ** 2)
    return total, {"loss/total": total}


def _np_adam_run(targets, scales, lr, eps):
    """Adam on `_loss` by hand, one step per (target, scale): final [a, b]."""
    flat = np.array([1.0, 2.0, 3.0])
    m = v = np.zeros(3)
    for t, (target, scale) in enumerate(zip(targets, scales, strict=True), start=1):
        g = scale * np.concatenate([flat[:2] - target, [2 * flat[2]]])
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        m_hat, v_hat = m / (1 - 0.9**t), v / (1 - 0.999**t)
        flat = flat - lr * m_hat / (np.sqrt(v_hat) + eps)
    return flat


def test_flat_steps_carry_the_optimizer_state():
    adam = make_learner_optimizer(0.1, max_grad_norm=None, eps=0.1)
    targets = np.array([[0.0, 1.0], [2.0, -1.0], [0.5, 0.5], [1.0, 3.0]])
    scales = np.array([1.0, 2.0, 0.5, 1.5])
    state = AgentState(PARAMS, flat_optimizer_state(adam, PARAMS), jnp.int32(0))
    for target, scale in zip(targets, scales, strict=True):
        state, _ = flat_gradient_step(
            _loss, adam, state, jnp.asarray(target), scale, axis_name=None
        )
    want = _np_adam_run(targets, scales, 0.1, 0.1)
    np.testing.assert_allclose(state.params["a"], want[:2], rtol=1e-5)
    np.testing.assert_allclose(state.params["b"], want[2], rtol=1e-5)
    # Epochs: 2 of 2 minibatches, then a second update resumes from its state.
    start = AgentState(PARAMS, flat_optimizer_state(adam, PARAMS), jnp.int32(0))

    def update(state, first):
        def minibatches(epoch):
            at = first + 2 * epoch
            return tuple(
                jax.lax.dynamic_slice_in_dim(jnp.asarray(x, jnp.float32), at, 2)
                for x in (targets, scales)
            )

        return flat_gradient_epochs(
            _loss, adam, state, minibatches, jnp.zeros(1, jnp.int32), axis_name=None
        )

    state, _ = update(start, 0)
    state, _ = update(state, 2)
    np.testing.assert_allclose(state.params["a"], want[:2], rtol=1e-5)
    np.testing.assert_allclose(state.params["b"], want[2], rtol=1e-5)


def test_a_step_over_devices_is_the_global_batchs_step():
    # 2 devices, a target each: the gradient and the loss are the two's mean,
    # (a - mean target, 2b) and the mean loss, not their sum.
    sgd = make_learner_optimizer(0.5, name="sgd", max_grad_norm=None)
    targets = jnp.array([[0.0, 1.0], [2.0, -3.0]])
    state = AgentState(PARAMS, flat_optimizer_state(sgd, PARAMS), jnp.int32(0))

    def step(state, target):
        return flat_gradient_step(_loss, sgd, state, target[0], axis_name="data")

    sharded = jax.shard_map(
        step, mesh=make_mesh(2), in_specs=(P(), P("data")), out_specs=P()
    )
    new, metrics = jax.jit(sharded)(state, targets)
    a, b = np.array([1.0, 2.0]), 3.0
    np.testing.assert_allclose(new.params["a"], a - 0.5 * (a - [1.0, -1.0]))
    np.testing.assert_allclose(new.params["b"], b - 0.5 * 2 * b)
    losses = [0.5 * np.sum((a - t) ** 2) + b * b for t in np.asarray(targets)]
    np.testing.assert_allclose(metrics["loss/total"], np.mean(losses), rtol=1e-6)
