"""Peng's Q(λ) targets against a direct sum of their definition."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import rl
from tests.probe import ProbeParams
from tests.rl.test_returns import _episode_ends, _probe_unroll


def numpy_q_lambda(r, disc, truncated, max_q, gamma, lam):
    """Q(λ) targets [T, B] as the λ-weighted sum of n-step returns, in NumPy.

    For step t whose episode (or the unroll) ends at step e >= t, with
    horizon H = e - t + 1 and per-step discounts γ_j = γ discount_j:
    G^(n) = Σ_{k<n} (Π_{j<k} γ_{t+j}) r_{t+k} + (Π_{j<n} γ_{t+j}) maxQ_{t+n-1},
    G^λ = (1 - λ) Σ_{n=1}^{H-1} λ^(n-1) G^(n) + λ^(H-1) G^(H).
    Written from the definition, not from the recursion under test; a
    termination zeroes every later term through its γ_e = 0.
    """
    steps, batch = r.shape
    out = np.zeros((steps, batch), np.float64)
    for b in range(batch):
        for t in range(steps):
            e = t
            while e < steps - 1 and disc[e, b] > 0 and not truncated[e, b]:
                e += 1
            horizon = e - t + 1

            def n_step(n, t=t, b=b):
                ret, scale = 0.0, 1.0
                for k in range(n):
                    ret += scale * r[t + k, b]
                    scale *= gamma * disc[t + k, b]
                return ret + scale * max_q[t + n - 1, b]

            total = sum(
                (1 - lam) * lam ** (n - 1) * n_step(n) for n in range(1, horizon)
            )
            out[t, b] = total + lam ** (horizon - 1) * n_step(horizon)
    return out


@pytest.mark.parametrize("lam", [0.0, 0.65, 1.0])
def test_q_lambda_matches_the_direct_sum_of_its_definition(lam):
    rng = np.random.default_rng(int(lam * 100))
    steps, batch, gamma = 24, 6, 0.9
    r = rng.normal(size=(steps, batch)).astype(np.float32)
    terminated = rng.random((steps, batch)) < 0.12
    truncated = rng.random((steps, batch)) < 0.12
    # Both on the same step in some envs (termination must win), each alone
    # in others, and none in the last env.
    terminated[5, 0] = truncated[5, 0] = True
    terminated[:, -1] = truncated[:, -1] = False
    disc = 1.0 - terminated.astype(np.float32)
    max_q = rng.normal(size=(steps, batch)).astype(np.float32)
    assert (terminated & truncated).any() and (terminated & ~truncated).any()
    assert (truncated & ~terminated).any()
    got = jax.jit(rl.episode_aware_q_lambda)(r, disc, truncated, max_q, gamma, lam)
    want = numpy_q_lambda(r, disc, truncated, max_q, gamma, lam)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # A termination's target is its reward alone, truncated or not.
    np.testing.assert_allclose(got[5, 0], r[5, 0], rtol=1e-6)
    ends = truncated & ~terminated
    np.testing.assert_allclose(
        got[ends], r[ends] + gamma * max_q[ends], rtol=1e-5, atol=1e-6
    )


def test_lambda_0_is_one_step_q_learning_and_1_the_discounted_sum():
    r = jnp.array([1.0, 2.0, 3.0])
    disc = jnp.array([0.5, 0.5, 0.5])
    q = jnp.array([10.0, 20.0, 30.0])
    np.testing.assert_allclose(
        rl.lambda_returns(r, disc, 0.0, q), [1 + 5, 2 + 10, 3 + 15]
    )
    g2 = 3 + 0.5 * 30
    g1 = 2 + 0.5 * g2
    np.testing.assert_allclose(
        rl.lambda_returns(r, disc, 1.0, q), [1 + 0.5 * g1, g1, g2]
    )


def test_lambda_returns_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match=r"discount_t \[4\].*same length\.$"):
        rl.lambda_returns(jnp.ones(3), jnp.ones(4), 0.5, jnp.ones(3))


def _targets(traj, gamma, lam):
    col = {
        k: jnp.asarray(getattr(traj, k))[:, None]
        for k in ("reward", "discount", "truncated", "bootstrap_value")
    }
    return rl.episode_aware_q_lambda(
        col["reward"], col["discount"], col["truncated"], col["bootstrap_value"],
        gamma, lam,
    )[:, 0]  # fmt: skip


def test_a_rollouts_truncation_bootstraps_from_the_final_observation():
    # The probe's value is 10 t + 100 episode: the final observation [3, 0]
    # is worth 30, the reset one [0, 1] 100.
    traj = _probe_unroll(ProbeParams(jnp.int32(0), jnp.int32(3)), 4)
    np.testing.assert_array_equal(traj.truncated, [False, False, True, False])
    gamma, lam = 0.9, 0.5
    g3 = 1 + gamma * 110
    g2 = 1 + gamma * 30  # truncation: bootstrap, no recursion past it
    g1 = 1 + gamma * ((1 - lam) * 20 + lam * g2)
    g0 = 1 + gamma * ((1 - lam) * 10 + lam * g1)
    np.testing.assert_allclose(_targets(traj, gamma, lam), [g0, g1, g2, g3], rtol=1e-6)


def test_a_termination_ends_the_return_even_when_the_time_limit_fires_too():
    # Both flags on one step (a user env may emit them): the target there is
    # the reward alone, and earlier steps of its episode carry it back.
    r, disc, truncated, _, max_q = _episode_ends()
    gamma, lam = 0.9, 0.5
    got = jax.jit(rl.episode_aware_q_lambda)(r, disc, truncated, max_q, gamma, lam)
    want = numpy_q_lambda(r, disc, truncated, max_q, gamma, lam)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[2, 0], r[2, 0], rtol=1e-6)
    np.testing.assert_allclose(got[3, 1], r[3, 1], rtol=1e-6)
    # By hand, step 1 of env 0: r1 + γ ((1 - λ) maxQ1 + λ r2).
    by_hand = r[1, 0] + gamma * ((1 - lam) * max_q[1, 0] + lam * r[2, 0])
    np.testing.assert_allclose(got[1, 0], by_hand, rtol=1e-5)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_non_finite_values_at_terminations_do_not_reach_the_targets(bad):
    # The docstring lets a caller pass max-Q of every final observation: inf
    # or NaN at a terminated step must not poison any target.
    r, disc, truncated, _, max_q = _episode_ends()
    clean = max_q.copy()
    max_q[disc == 0] = bad
    got = jax.jit(rl.episode_aware_q_lambda)(r, disc, truncated, max_q, 0.9, 0.65)
    want = numpy_q_lambda(r, disc, truncated, clean, 0.9, 0.65)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
