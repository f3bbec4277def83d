import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import rl


def paper_vtrace(
    v_tm1, v_t, r, disc, log_rho, truncated, lam, rho_bar, c_bar, rho_pg_bar=None
):
    """The paper's definitions, episode by episode, in plain NumPy.

    Espeholt et al. (2018), section 4.1: within one episode x_s, ..., x_n (x_n
    the bootstrap state), with ρ_t = min(ρ̄, π/μ) and c_i = λ min(c̄, π/μ),
      v_s = V(x_s) + δ_s + γ_s c_s (v_{s+1} - V(x_{s+1})),  v_n = V(x_n)
    (remark 1, the recursion), which must equal the sum of equation (1):
      v_s = V(x_s) + Σ_{t=s}^{n-1} (Π_{i=s}^{t-1} γ_i c_i) δ_t,
    and the policy-gradient advantage of section 4.2 is
      A_s = ρ^pg_s (r_s + γ_s v_{s+1} - V(x_s)),  ρ^pg_s = min(ρ̄_pg, π/μ),
    with ρ̄_pg = ρ̄ unless given (the paper uses one ρ̄ for both).
    The stream is cut into episodes at terminations and truncations first, so
    nothing here knows about auto-reset: each episode is a trajectory of its own.
    """
    T = len(r)
    rho = np.exp(log_rho.astype(np.float64))
    rho_c = np.minimum(rho_bar, rho)
    rho_pg = np.minimum(rho_bar if rho_pg_bar is None else rho_pg_bar, rho)
    c = lam * np.minimum(c_bar, rho)
    ends = [t for t in range(T) if disc[t] == 0 or truncated[t] or t == T - 1]
    target = np.zeros(T)
    adv = np.zeros(T)
    start = 0
    for end in ends:
        idx = list(range(start, end + 1))
        n = len(idx)
        # V(x_0..x_n) of this episode: its states, then the state reached last.
        values = [v_tm1[t] for t in idx] + [v_t[end]]
        gammas = [disc[t] for t in idx]
        delta = [
            rho_c[t] * (r[t] + gammas[k] * values[k + 1] - values[k])
            for k, t in enumerate(idx)
        ]
        # Remark 1: backwards from v_n = V(x_n).
        vs = [0.0] * n + [values[n]]
        for k in reversed(range(n)):
            t = idx[k]
            vs[k] = (
                values[k] + delta[k] + gammas[k] * c[t] * (vs[k + 1] - values[k + 1])
            )
        # Equation (1): the explicit sum, which the recursion must reproduce.
        for k in range(n):
            total, trace = values[k], 1.0
            for j in range(k, n):
                total += trace * delta[j]
                trace *= gammas[j] * c[idx[j]]
            np.testing.assert_allclose(vs[k], total, rtol=1e-10, atol=1e-10)
        for k, t in enumerate(idx):
            target[t] = vs[k]
            adv[t] = rho_pg[t] * (r[t] + gammas[k] * vs[k + 1] - values[k])
        start = end + 1
    return target, adv


def random_stream(rng, T, gamma=0.9):
    """Random consistent inputs with terminations and truncations.

    Within an episode the value of the state reached equals the value of the
    next state acted in (v_t[s] = v_tm1[s + 1]), as it does for real data; at
    an episode end v_t[s] is the value of the final observation.
    """
    r = rng.normal(size=T)
    terminated = rng.random(T) < 0.15
    # Independent flags: some steps are both terminated and truncated (the
    # time limit fires on the terminating step), one of them always.
    truncated = rng.random(T) < 0.15
    terminated[T // 2] = truncated[T // 2] = True
    disc = gamma * (1.0 - terminated)
    v_tm1 = rng.normal(size=T)
    v_t = rng.normal(size=T)
    within = ~(terminated | truncated)
    v_t[:-1] = np.where(within[:-1], v_tm1[1:], v_t[:-1])
    log_rho = rng.normal(scale=0.7, size=T)
    f32 = functools.partial(np.asarray, dtype=np.float32)
    return f32(v_tm1), f32(v_t), f32(r), f32(disc), f32(log_rho), truncated


@pytest.mark.parametrize("jit", [False, True])
def test_hand_computed_values_with_a_termination(jit):
    # Episode: x0 -> x1 -> terminal; then x2 -> x3 (end of stream, bootstrap).
    v_tm1 = jnp.array([1.0, 2.0, 3.0])
    v_t = jnp.array([2.0, 7.0, 4.0])  # v_t[1] = 7 must be ignored (terminal)
    r_t = jnp.ones(3)
    discount_t = jnp.array([0.9, 0.0, 0.9])
    log_rho = jnp.log(jnp.array([0.5, 2.0, 1.0]))
    # ρ = min(1, π/μ) = [0.5, 1, 1] and c = min(1, π/μ) = [0.5, 1, 1]:
    # δ0 = 0.5 (1 + 0.9 * 2 - 1) = 0.9; δ1 = 1 (1 + 0 - 2) = -1;
    # δ2 = 1 (1 + 0.9 * 4 - 3) = 1.6.
    # v2 = 3 + 1.6 = 4.6; v1 = 2 - 1 = 1 (no trace past the termination);
    # v0 = 1 + 0.9 + 0.9 * 0.5 * (v1 - V(x1)) = 1.9 - 0.45 = 1.45.
    # A0 = 0.5 (1 + 0.9 v1 - 1) = 0.45; A1 = 1 (1 - 2) = -1;
    # A2 = 1 (1 + 0.9 * 4 - 3) = 1.6 (v3 is the bootstrap value 4).
    fn = jax.jit(rl.vtrace) if jit else rl.vtrace
    out = fn(v_tm1, v_t, r_t, discount_t, log_rho)
    np.testing.assert_allclose(out.target_tm1, [1.45, 1.0, 4.6], rtol=1e-6)
    np.testing.assert_allclose(out.pg_advantage_tm1, [0.45, -1.0, 1.6], rtol=1e-6)


def test_hand_computed_values_with_a_truncation():
    # As above, but the first episode is truncated at step 1 instead: it
    # bootstraps from V(x'1) = 7 and the trace stops there.
    v_tm1 = jnp.array([1.0, 2.0, 3.0])
    v_t = jnp.array([2.0, 7.0, 4.0])
    discount_t = jnp.full(3, 0.9)
    truncated = jnp.array([False, True, False])
    log_rho = jnp.log(jnp.array([0.5, 2.0, 1.0]))
    # δ1 = 1 (1 + 0.9 * 7 - 2) = 5.3, so v1 = 7.3 (nothing from x2);
    # v0 = 1 + 0.9 + 0.9 * 0.5 * 5.3 = 4.285; A1 = 1 + 6.3 - 2 = 5.3 (v2 := 7);
    # A0 = 0.5 (1 + 0.9 * 7.3 - 1) = 3.285; step 2 is unchanged.
    out = rl.vtrace(v_tm1, v_t, jnp.ones(3), discount_t, log_rho, truncated)
    np.testing.assert_allclose(out.target_tm1, [4.285, 7.3, 4.6], rtol=1e-6)
    np.testing.assert_allclose(out.pg_advantage_tm1, [3.285, 5.3, 1.6], rtol=1e-6)


@pytest.mark.parametrize("lam", [1.0, 0.8])
def test_on_policy_targets_are_n_step_and_lambda_returns(lam):
    rng = np.random.default_rng(1)
    v_tm1, v_t, r, disc, _, truncated = random_stream(rng, 30)
    on_policy = np.zeros(30, np.float32)  # π = μ: ρ = c = 1 (with ρ̄, c̄ >= 1)
    out = rl.vtrace(
        v_tm1, v_t, r, disc, on_policy, truncated, lambda_=lam, clip_c_threshold=2.0
    )
    # λ-returns by their recursive definition, backwards in NumPy: G_s =
    # r_s + γ_s ((1 - λ) V(x'_s) + λ G_{s+1}), and G_s = r_s + γ_s V(x'_s) at
    # an episode's end (or the stream's); A_s = r_s + γ_s G_{s+1} - V(x_s).
    ends = truncated | (np.arange(30) == 29)
    g = np.zeros(31)  # g[30] is never read: the stream's end is an end
    for s in reversed(range(30)):
        future = v_t[s] if ends[s] else (1 - lam) * v_t[s] + lam * g[s + 1]
        g[s] = r[s] + disc[s] * future
    g_next = np.where(ends, v_t, g[1:])
    np.testing.assert_allclose(out.target_tm1, g[:30], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        out.pg_advantage_tm1, r + disc * g_next - v_tm1, rtol=1e-5, atol=1e-5
    )
    if lam == 1.0:
        # n-step returns by hand: discounted rewards to the episode's end (or
        # the stream's), plus the discounted bootstrap value there.
        returns = np.zeros(30)
        for s in range(30):
            g, scale = 0.0, 1.0
            for t in range(s, 30):
                g += scale * r[t]
                scale *= disc[t]
                if disc[t] == 0 or truncated[t] or t == 29:
                    g += scale * v_t[t]
                    break
            returns[s] = g
        np.testing.assert_allclose(out.target_tm1, returns, rtol=1e-5, atol=1e-5)
        # With λ = 1, A_s = r_s + γ v_{s+1} - V(x_s) = v_s - V(x_s).
        np.testing.assert_allclose(
            out.pg_advantage_tm1, returns - v_tm1, rtol=1e-5, atol=1e-5
        )


@pytest.mark.parametrize(
    "lam, rho_bar, c_bar, rho_pg_bar",
    [
        (1.0, 1.0, 1.0, 1.0),
        (0.9, 1.0, 1.0, 1.0),
        (0.95, 2.0, 0.8, 2.0),
        # A policy-gradient clip of its own, below and above ρ̄.
        (0.95, 2.0, 0.8, 0.7),
        (0.9, 1.0, 1.0, 1.5),
    ],
)
def test_matches_numpy_paper_definition_on_random_streams(
    lam, rho_bar, c_bar, rho_pg_bar
):
    rng = np.random.default_rng(0)
    fn = jax.jit(
        functools.partial(
            rl.vtrace,
            lambda_=lam,
            clip_rho_threshold=rho_bar,
            clip_c_threshold=c_bar,
            clip_pg_rho_threshold=rho_pg_bar,
        )
    )
    for _ in range(5):
        v_tm1, v_t, r, disc, log_rho, truncated = random_stream(rng, 50)
        assert truncated.any() and (disc == 0).any()
        assert (truncated & (disc == 0)).any() and (truncated & (disc > 0)).any()
        # The bootstrap values of terminated steps are never read.
        v_t = np.where(disc == 0, 1e3, v_t).astype(np.float32)
        target, adv = paper_vtrace(
            v_tm1, v_t, r, disc, log_rho, truncated, lam, rho_bar, c_bar, rho_pg_bar
        )
        out = fn(v_tm1, v_t, r, disc, log_rho, truncated)
        np.testing.assert_allclose(out.target_tm1, target, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(out.pg_advantage_tm1, adv, rtol=1e-5, atol=1e-5)


def test_jit_equals_no_jit_and_vmap_equals_loop():
    rng = np.random.default_rng(2)
    T, B = 40, 6
    streams = [random_stream(rng, T) for _ in range(B)]
    # Time-major [T, B], as the agents hold their data.
    batch = [np.stack(column, axis=1) for column in zip(*streams, strict=True)]
    fn = functools.partial(rl.vtrace, lambda_=0.9, clip_c_threshold=0.9)
    batched = jax.jit(jax.vmap(fn, in_axes=1, out_axes=1))(*batch)
    single_jit = jax.jit(fn)
    for b in range(B):
        single = single_jit(*streams[b])
        for x, z in zip(batched, single, strict=True):
            np.testing.assert_allclose(x[:, b], z, rtol=1e-6, atol=1e-6)
    # And one stream without jit at all.
    for x, z in zip(fn(*streams[0]), single_jit(*streams[0]), strict=True):
        np.testing.assert_allclose(x, z, rtol=1e-6, atol=1e-6)


def test_importance_weights_above_rho_bar_are_constants():
    # Above ρ̄ the weight is constant: the target no longer depends on log ρ.
    def target0(log_rho):
        return rl.vtrace(
            jnp.zeros(2), jnp.ones(2), jnp.ones(2), jnp.ones(2), log_rho
        ).target_tm1[0]

    grad = jax.jit(jax.grad(target0))
    assert float(grad(jnp.array([1.0, 1.0]))[0]) == 0.0
    assert float(grad(jnp.array([-1.0, 1.0]))[0]) != 0.0


def test_rejects_mismatched_shapes_and_ranks():
    with pytest.raises(ValueError, match=r"v_t \[4\].*same length\.$"):
        rl.vtrace(jnp.ones(3), jnp.ones(4), jnp.ones(3), jnp.ones(3), jnp.ones(3))
    with pytest.raises(ValueError, match=r"jax\.vmap\(vtrace, in_axes=1, out_axes=1\)"):
        rl.vtrace(*(jnp.ones((3, 2)),) * 5)
    with pytest.raises(ValueError, match=r"truncated_t \[2\].*same length\.$"):
        rl.vtrace(*(jnp.ones(3),) * 5, truncated_t=jnp.zeros(2, bool))


@pytest.mark.parametrize("dtype", [jnp.int32, jnp.bfloat16])
def test_integer_and_low_precision_rewards_give_the_float32_numbers(dtype):
    # An int or bf16 reward once made the scan's carry int / bf16 (TypeError).
    rng = np.random.default_rng(3)
    v_tm1, v_t, r, disc, log_rho, truncated = random_stream(rng, 12)
    r = np.round(3 * r)  # small integers: exact in every dtype
    expected = rl.vtrace(v_tm1, v_t, r.astype(np.float32), disc, log_rho, truncated)
    got = rl.vtrace(v_tm1, v_t, jnp.asarray(r).astype(dtype), disc, log_rho, truncated)
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == jnp.float32
        np.testing.assert_allclose(g, e)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_non_finite_values_at_terminations_do_not_reach_the_targets(bad):
    # inf or NaN as V(x') of a terminated step must not reach any target or
    # advantage.
    rng = np.random.default_rng(5)
    v_tm1, v_t, r, disc, log_rho, truncated = random_stream(rng, 30)
    assert (disc == 0).sum() >= 2
    fn = functools.partial(rl.vtrace, lambda_=0.9, clip_rho_threshold=2.0)
    want = paper_vtrace(v_tm1, v_t, r, disc, log_rho, truncated, 0.9, 2.0, 1.0, 1.0)
    v_t = np.where(disc == 0, bad, v_t).astype(np.float32)
    out = jax.jit(fn)(v_tm1, v_t, r, disc, log_rho, truncated)
    for got, ref in zip(out, want, strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_an_empty_stream_is_refused_with_the_rule():
    with pytest.raises(ValueError, match=r"vtrace needs a stream of T >= 1 steps"):
        rl.vtrace(*(jnp.zeros(0),) * 5)
