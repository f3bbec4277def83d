import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import rl


def test_clipped_surrogate_hand_computed():
    # One sample per case of min(rA, clip(r, 0.8, 1.2) A), eps = 0.2. The last
    # (r = 0.5 < 1 - eps, A < 0) is the only case the lower clip changes:
    # min(-0.5, -0.8) = -0.8 (without the lower clip, -0.5 and a mean of -0.16).
    ratio = jnp.array([0.5, 1.5, 1.1, 0.9, 0.5])
    adv = jnp.array([1.0, 1.0, -1.0, -1.0, -1.0])
    # min(rA, clip(r)A) = [0.5, 1.2, -1.1, -0.9, -0.8]; mean = -1.1 / 5 = -0.22
    loss = rl.clipped_surrogate_loss(ratio, adv, 0.2)
    assert float(loss) == pytest.approx(0.22)


def test_value_loss_plain_and_clipped():
    v = jnp.array([2.0, 0.0])
    target = jnp.array([1.0, 1.0])
    assert float(rl.value_loss(v, target)) == pytest.approx(0.5 * (1 + 1) / 2)
    v_old = jnp.array([1.0, 1.0])
    # clipped v = [1.2, 0.8]: max((1)^2, 0.2^2) = 1; max(1, 0.04) = 1
    assert float(rl.value_loss(v, target, v_old, 0.2)) == pytest.approx(0.5)
    v_old = jnp.array([3.0, -1.0])
    # clipped v = [2.8, -0.8]: max(1, 3.24) = 3.24; max(1, 3.24) = 3.24
    assert float(rl.value_loss(v, target, v_old, 0.2)) == pytest.approx(0.5 * 3.24)


def test_normalize_advantages():
    adv = jnp.array([1.0, 2.0, 3.0, 6.0])
    out = np.asarray(rl.normalize_advantages(adv))
    np.testing.assert_allclose(out, (adv - 3.0) / (np.std(adv) + 1e-8), rtol=1e-5)


def test_normalize_advantages_per_row_of_axis():
    # Rows of [M, N] are separate minibatches: each standardised on its own.
    adv = np.array([[1.0, 2.0, 3.0, 6.0], [100.0, 100.5, 99.5, 100.0]], np.float32)
    out = np.asarray(rl.normalize_advantages(jnp.asarray(adv), axis=1))
    for row, got in zip(adv, out, strict=True):
        want = (row - row.mean()) / (row.std() + 1e-8)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_actor_critic_gradients_hold_advantages_and_targets_constant():
    # By hand, for N samples: d/dlogp = -A/N, d/dv = c_v (v - G)/N,
    # d/dH = -c_H/N, and nothing reaches the advantages or the targets, as
    # the docstrings promise: a user's algorithm may compute them from the
    # parameters it differentiates (the shipped ones stop gradients first).

    logp = jnp.array([-0.5, -1.0, -2.0])
    adv = jnp.array([1.0, -2.0, 0.5])
    v = jnp.array([0.3, 1.0, -1.0])
    target = jnp.array([1.0, 0.0, 2.0])
    entropy = jnp.array([0.7, 0.2, 1.1])

    def total(*args):
        return rl.actor_critic_loss(*args, value_cost=0.5, entropy_cost=0.01)[0]

    grads = jax.grad(total, argnums=(0, 1, 2, 3, 4))(logp, adv, v, target, entropy)
    n = 3.0
    want = (-adv / n, 0.0 * adv, 0.5 * (v - target) / n, 0.0 * v, -0.01 / n + 0 * v)
    for got, expected in zip(grads, want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    pg_grads = jax.grad(rl.policy_gradient_loss, argnums=(0, 1))(logp, adv)
    np.testing.assert_allclose(pg_grads[0], -adv / n, rtol=1e-6)
    np.testing.assert_array_equal(pg_grads[1], np.zeros(3))
