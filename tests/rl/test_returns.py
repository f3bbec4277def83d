import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import rl
from purejaxdrl.agents.base import feed_forward
from purejaxdrl.runners.rollout import reset_actors, unroll
from tests.probe import ProbeEnv, ProbeParams


def numpy_gae(r, disc, lam, v_tm1, v_t):
    """Direct implementation of the definition, backwards in time."""
    adv = np.zeros_like(r)
    acc = 0.0
    for t in reversed(range(len(r))):
        acc = r[t] + disc[t] * v_t[t] - v_tm1[t] + disc[t] * lam[t] * acc
        adv[t] = acc
    return adv


@pytest.mark.parametrize("jit", [False, True])
def test_gae_matches_hand_computed_values(jit):
    r_t = jnp.array([1.0, 0.0, -1.0])
    discount_t = jnp.array([0.5, 0.0, 0.5])  # terminates at t=1
    v_tm1 = v_t = jnp.ones(3)
    # delta = r + d v_t - v_tm1 = [0.5, -1.0, -1.5]; with lambda = 1:
    # adv_2 = -1.5; adv_1 = -1.0 + 0 * adv_2 = -1.0; adv_0 = 0.5 + 0.5 * -1.0 = 0.0
    fn = jax.jit(rl.gae) if jit else rl.gae
    np.testing.assert_allclose(fn(r_t, discount_t, 1.0, v_tm1, v_t), [0.0, -1.0, -1.5])


def test_gae_matches_numpy_definition_and_vmap_equals_loop():
    rng = np.random.default_rng(0)
    T, B = 40, 5
    r = rng.normal(size=(T, B)).astype(np.float32)
    disc = (0.99 * (rng.random((T, B)) > 0.1)).astype(np.float32)
    lam = np.full((T, B), 0.95, np.float32) * (rng.random((T, B)) > 0.1)
    v_tm1 = rng.normal(size=(T, B)).astype(np.float32)
    v_t = rng.normal(size=(T, B)).astype(np.float32)
    batched = jax.vmap(rl.gae, in_axes=1, out_axes=1)(r, disc, lam, v_tm1, v_t)
    for b in range(B):
        ref = numpy_gae(r[:, b], disc[:, b], lam[:, b], v_tm1[:, b], v_t[:, b])
        np.testing.assert_allclose(batched[:, b], ref, rtol=1e-4, atol=1e-5)
        single = rl.gae(r[:, b], disc[:, b], lam[:, b], v_tm1[:, b], v_t[:, b])
        np.testing.assert_allclose(batched[:, b], single, rtol=1e-6)


def test_gae_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match=r"discount_t \[4\].*same length\.$"):
        rl.gae(jnp.ones(3), jnp.ones(4), 1.0, jnp.ones(3), jnp.ones(3))


@pytest.mark.parametrize("dtype", [jnp.int32, jnp.bfloat16, jnp.float16])
def test_integer_and_low_precision_rewards_give_the_float32_numbers(dtype):
    # Integer rewards once cast λ to 0 in `lambda_returns` (one-step targets)
    # and gave `gae`'s scan an int carry; both now promote to float32.
    r, disc, v = jnp.array([1, 0, 1]), jnp.full(3, 0.9), jnp.array([0.5, 1.0, 2.0])
    r_low, r_f32 = r.astype(dtype), r.astype(jnp.float32)
    # λ = 0.95 by hand: G_2 = 1 + 0.9 * 2 = 2.8; G_1 = 0 + 0.9 (0.05 * 1 + 0.95 *
    # 2.8) = 2.439; G_0 = 1 + 0.9 (0.05 * 0.5 + 0.95 * 2.439) = 3.1078...
    got = rl.lambda_returns(r_low, disc, 0.95, v)
    assert got.dtype == jnp.float32
    np.testing.assert_allclose(got, [3.107845, 2.439, 2.8], rtol=1e-6)
    np.testing.assert_allclose(got, rl.lambda_returns(r_f32, disc, 0.95, v))
    got = rl.gae(r_low, disc, 0.95, v, v)
    assert got.dtype == jnp.float32
    np.testing.assert_allclose(got, rl.gae(r_f32, disc, 0.95, v, v))


def _act_zero(params, obs, key):
    return jnp.int32(0), {"log_prob": jnp.float32(0), "env_action": jnp.int32(0)}


class _ValueOfTime:
    """A stand-in agent: value(obs) = 10 * t + 100 * episode; acts 0."""

    acting = feed_forward(
        _act_zero, lambda params, obs: 10.0 * obs[..., 0] + 100.0 * obs[..., 1]
    )


def _probe_unroll(params: ProbeParams, length: int):
    env = ProbeEnv()
    actor = reset_actors(env, params, jax.random.key(0), jnp.arange(1))
    _, traj = unroll(
        env, params, _ValueOfTime(), None, actor, jax.random.key(1), length
    )
    return jax.tree.map(lambda x: np.asarray(x[:, 0]), traj)


def _gae(traj, gamma, lam):
    """episode_aware_gae on one probe stream, as a batch of one."""
    col = {
        k: jnp.asarray(getattr(traj, k))[:, None]
        for k in ("reward", "discount", "truncated", "value", "bootstrap_value")
    }
    return rl.episode_aware_gae(
        col["reward"],
        col["discount"],
        col["truncated"],
        col["value"],
        col["bootstrap_value"],
        gamma,
        lam,
    )


def test_truncation_bootstraps_from_final_observation():
    traj = _probe_unroll(ProbeParams(jnp.int32(0), jnp.int32(3)), 4)
    # Steps: t=1, 2, 3 (truncated; final obs [3, 0]), then t=1 of episode 1.
    np.testing.assert_array_equal(traj.truncated, [False, False, True, False])
    np.testing.assert_array_equal(traj.discount, [1, 1, 1, 1])
    # Bootstrap from the final observation [3, 0] (value 30), not the reset
    # observation [0, 1] (value 100).
    assert traj.bootstrap_value[2] == 30.0
    gamma, lam = 0.9, 0.8
    adv, _ = rl.episode_aware_gae(
        jnp.asarray(traj.reward)[:, None],
        jnp.asarray(traj.discount)[:, None],
        jnp.asarray(traj.truncated)[:, None],
        jnp.asarray(traj.value)[:, None],
        jnp.asarray(traj.bootstrap_value)[:, None],
        gamma,
        lam,
    )
    # By hand: values v(s_t) = [0, 10, 20, 100]; bootstraps [10, 20, 30, 110].
    d = [
        1 + gamma * 10 - 0,
        1 + gamma * 20 - 10,
        1 + gamma * 30 - 20,
        1 + gamma * 110 - 100,
    ]
    a3 = d[3]
    a2 = d[2]  # truncation: no recursion into the next episode
    a1 = d[1] + gamma * lam * a2
    a0 = d[0] + gamma * lam * a1
    np.testing.assert_allclose(adv[:, 0], [a0, a1, a2, a3], rtol=1e-5)


def test_termination_does_not_bootstrap():
    traj = _probe_unroll(ProbeParams(jnp.int32(2), jnp.int32(10)), 3)
    np.testing.assert_array_equal(traj.discount, [1, 0, 1])
    np.testing.assert_array_equal(traj.truncated, [False, False, False])
    adv, target = rl.episode_aware_gae(
        jnp.asarray(traj.reward)[:, None],
        jnp.asarray(traj.discount)[:, None],
        jnp.asarray(traj.truncated)[:, None],
        jnp.asarray(traj.value)[:, None],
        jnp.asarray(traj.bootstrap_value)[:, None],
        0.9,
        1.0,
    )
    # At the terminal step the target is the reward alone: 1.
    assert float(target[1, 0]) == pytest.approx(1.0)


def sum_gae(r, disc, truncated, v_tm1, v_t, gamma, lam):
    """GAE [T, B] as the forward sum of its definition, episode by episode.

    A_t = Σ_{j=t}^{e} (γλ)^{j-t} δ_j with δ_j = r_j + γ d_j V(x'_j) - V(x_j),
    where e is the end of t's episode (a termination, a truncation or the
    unroll's last step). A terminated step's V(x'_j) is never read, so it may
    be anything; Schulman et al. (2016), eq. (16), cut at episode ends.
    """
    steps, batch = r.shape
    adv = np.zeros((steps, batch))
    for b in range(batch):
        for t in range(steps):
            total, weight = 0.0, 1.0
            for j in range(t, steps):
                boot = gamma * v_t[j, b] if disc[j, b] > 0 else 0.0
                total += weight * (r[j, b] + boot - v_tm1[j, b])
                if disc[j, b] == 0 or truncated[j, b]:
                    break
                weight *= gamma * lam
            adv[t, b] = total
    return adv


def _episode_ends(steps=9, batch=3, seed=4):
    """Inputs [T, B] with a termination, a truncation and both on one step."""
    rng = np.random.default_rng(seed)
    r, v_tm1, v_t = (
        rng.normal(size=(steps, batch)).astype(np.float32) for _ in range(3)
    )
    v_t += 5.0  # nonzero everywhere: a wrong bootstrap cannot hide as 0
    disc = np.ones((steps, batch), np.float32)
    truncated = np.zeros((steps, batch), bool)
    disc[2, 0] = 0.0  # termination and time limit on the same step
    truncated[2, 0] = True
    disc[5, 0] = 0.0  # termination alone
    truncated[6, 1] = True  # time limit alone
    disc[3, 1] = 0.0  # both again, mid-unroll in another env
    truncated[3, 1] = True
    return r, disc, truncated, v_tm1, v_t


def test_gae_ends_the_episode_without_bootstrap_when_both_flags_are_set():
    # A user env may report a termination and a time limit on the same step:
    # the termination wins, so the advantage there is r - V(x), with nothing
    # bootstrapped and nothing carried back from the next episode.
    r, disc, truncated, v_tm1, v_t = _episode_ends()
    gamma, lam = 0.9, 0.8
    adv, target = jax.jit(rl.episode_aware_gae)(
        r, disc, truncated, v_tm1, v_t, gamma, lam
    )
    want = sum_gae(r, disc, truncated, v_tm1, v_t, gamma, lam)
    np.testing.assert_allclose(adv, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(target, want + v_tm1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(target[2, 0], r[2, 0], rtol=1e-6)
    np.testing.assert_allclose(target[3, 1], r[3, 1], rtol=1e-6)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_non_finite_values_at_terminations_do_not_reach_advantages(bad):
    # The docstrings let a caller pass any value of a terminated step's final
    # observation (V of every final observation, say): inf or NaN there must
    # not poison any advantage.
    r, disc, truncated, v_tm1, v_t = _episode_ends()
    gamma, lam = 0.9, 0.8
    clean = v_t.copy()
    v_t[disc == 0] = bad
    adv, _ = jax.jit(rl.episode_aware_gae)(r, disc, truncated, v_tm1, v_t, gamma, lam)
    want = sum_gae(r, disc, truncated, v_tm1, clean, gamma, lam)
    np.testing.assert_allclose(np.asarray(adv), want, rtol=1e-5, atol=1e-5)


def test_recursions_unrolled_for_accelerators_give_the_cpus_numbers(monkeypatch):
    # Off CPU, GAE, λ-returns and V-trace run RECURSION_UNROLL steps a loop
    # iteration (`scans.platform_scan`). Run that branch here, on a stream
    # whose length is not a multiple of the unroll, against the CPU's loop.
    rng = np.random.default_rng(3)
    T = 40
    r, v_tm1, v_t, log_rho = (rng.normal(size=T).astype(np.float32) for _ in range(4))
    disc = (0.9 * (rng.random(T) > 0.15)).astype(np.float32)
    lam = (0.95 * (rng.random(T) > 0.15)).astype(np.float32)
    truncated = lam == 0.0

    def recursions():  # new functions each time: traced again, not cached
        return jax.jit(
            lambda: (
                rl.gae(r, disc, lam, v_tm1, v_t),
                rl.lambda_returns(r, disc, lam, v_t),
                rl.vtrace(v_tm1, v_t, r, disc, log_rho, truncated, lambda_=0.9),
            )
        )()

    on_cpu = recursions()
    branches = []

    def default_branch(*args, cpu, default):
        branches.append(default)
        return default(*args)

    monkeypatch.setattr(jax.lax, "platform_dependent", default_branch)
    unrolled = recursions()
    assert len(branches) == 3  # each traced its accelerator's loop
    # Equal to float rounding: XLA:CPU fuses the unrolled steps' multiply-adds
    # differently (one element in 40 differed by 1 ulp).
    check = functools.partial(np.testing.assert_allclose, rtol=1e-6, atol=1e-6)
    jax.tree.map(check, unrolled, on_cpu)
    np.testing.assert_allclose(
        unrolled[0], numpy_gae(r, disc, lam, v_tm1, v_t), rtol=1e-5, atol=1e-6
    )


def test_empty_streams_are_refused_with_the_rule():
    empty = jnp.zeros(0)
    with pytest.raises(ValueError, match=r"gae needs a stream of T >= 1 steps"):
        rl.gae(empty, empty, 0.95, empty, empty)
    with pytest.raises(ValueError, match=r"lambda_returns needs a stream of T >= 1"):
        rl.lambda_returns(empty, empty, 0.95, empty)
