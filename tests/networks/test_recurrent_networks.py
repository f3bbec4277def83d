"""Recurrent cores and networks: flax's cell equations, and resets under auto-reset."""

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.networks import NetworkConfig, RecurrentNetwork, make_actor_critic
from purejaxdrl.networks.cores import Core, zero_state


def _flax_params(kind, ours):
    """Our fused core's parameters as flax's cell's (the same numbers, split)."""
    w, b = ours["input"]["kernel"], ours["input"]["bias"]
    u = ours["recurrent"]
    if kind == "gru":
        wr, wz, wn = jnp.split(w, 3, axis=-1)
        br, bz, bn = jnp.split(b, 3)
        ur, uz, un = jnp.split(u, 3, axis=-1)
        return {
            "ir": {"kernel": wr, "bias": br},
            "iz": {"kernel": wz, "bias": bz},
            "in": {"kernel": wn, "bias": bn},
            "hr": {"kernel": ur},
            "hz": {"kernel": uz},
            "hn": {"kernel": un, "bias": ours["recurrent_bias"]},
        }
    gates = "ifgo"
    ws, bs, us = (jnp.split(x, 4, axis=-1) for x in (w, b, u))
    params = {f"i{g}": {"kernel": ws[k]} for k, g in enumerate(gates)}
    params.update(
        {f"h{g}": {"kernel": us[k], "bias": bs[k]} for k, g in enumerate(gates)}
    )
    return params


@pytest.mark.parametrize("kind", ["gru", "lstm"])
def test_core_step_computes_flax_cells_equations(kind):
    size, batch, features = 5, 3, 4
    core = Core(kind, size)
    x = jax.random.normal(jax.random.key(0), (batch, features))
    key_state, key_init = jax.random.split(jax.random.key(1))
    state = jax.tree.map(
        lambda z: jax.random.normal(key_state, z.shape), zero_state(kind, size, batch)
    )
    reset = jnp.zeros(batch, bool)
    params = core.init(
        key_init, state, x, reset, method=lambda m, s, x, r: m.step(s, m.project(x), r)
    )
    ours_state, ours_out = core.apply(
        params, state, x, reset, method=lambda m, s, x, r: m.step(s, m.project(x), r)
    )
    cell = nn.GRUCell(size) if kind == "gru" else nn.OptimizedLSTMCell(size)
    flax_params = {"params": _flax_params(kind, params["params"])}
    theirs_state, theirs_out = cell.apply(flax_params, state, x)
    np.testing.assert_allclose(ours_out, theirs_out, atol=1e-6)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, atol=1e-6),
                 ours_state, theirs_state)  # fmt: skip


def _network(kind):
    config = NetworkConfig(hidden_sizes=(8,), core=kind, core_size=6)
    net = make_actor_critic(config, Box((3,)), Discrete(2))
    assert isinstance(net, RecurrentNetwork)
    return net, net.init(jax.random.key(0), jnp.zeros(3))


@pytest.mark.parametrize("kind", ["gru", "lstm", "mingru"])
def test_unroll_across_resets_equals_each_episode_unrolled_from_zero(kind):
    net, params = _network(kind)
    t, b = 10, 3
    obs = jax.random.normal(jax.random.key(1), (t, b, 3))
    reset = np.zeros((t, b), bool)
    reset[[3, 7], 0] = True  # env 0: three episodes
    reset[1, 1] = True  # env 1: two; env 2: one, continuing the start state
    start = jax.tree.map(
        lambda z: jax.random.normal(jax.random.key(2), z.shape), net.initial_state(b)
    )
    _, (policy, value) = net.unroll(params, start, obs, jnp.asarray(reset))
    for env in range(b):
        bounds = [0, *np.flatnonzero(reset[:, env]), t]
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            if lo == 0:  # the first piece continues the stored state
                state = jax.tree.map(lambda s, e=env: s[e : e + 1], start)
            else:  # an episode that starts inside the unroll: from zero
                state = net.initial_state(1)
            never = jnp.zeros((hi - lo, 1), bool)
            _, (p, v) = net.unroll(params, state, obs[lo:hi, env : env + 1], never)
            np.testing.assert_allclose(policy[lo:hi, env], p[:, 0], atol=1e-6)
            np.testing.assert_allclose(value[lo:hi, env], v[:, 0], atol=1e-6)


@pytest.mark.parametrize("kind", ["gru", "lstm", "mingru"])
def test_unroll_final_is_unroll_and_final_outputs_with_no_gradient_through_final(
    kind,
):
    net, params = _network(kind)
    t, b = 6, 3
    keys = jax.random.split(jax.random.key(3), 3)
    obs = jax.random.normal(keys[0], (t, b, 3))
    final_obs = jax.random.normal(keys[1], (t, b, 3))
    reset = jnp.asarray(np.random.default_rng(1).random((t, b)) < 0.3)
    start = jax.tree.map(
        lambda z: jax.random.normal(keys[2], z.shape), net.initial_state(b)
    )
    outputs, final = net.unroll_final(params, start, obs, reset, final_obs)
    expected = net.unroll(params, start, obs, reset)[1]
    expected_final = net.final_outputs(params, start, obs, reset, final_obs)
    jax.tree.map(
        lambda a, e: np.testing.assert_allclose(a, e, atol=1e-6),
        (outputs, final),
        (expected, expected_final),
    )

    def final_sum(p):
        return sum(
            x.sum() for x in net.unroll_final(p, start, obs, reset, final_obs)[1]
        )

    grads = jax.grad(final_sum)(params)
    assert all(not jnp.any(g) for g in jax.tree.leaves(grads))


def test_step_is_one_step_of_unroll():
    net, params = _network("gru")
    obs = jax.random.normal(jax.random.key(1), (4, 2, 3))
    reset = jnp.asarray([[False, False], [True, False], [False, True], [False, False]])
    state = net.initial_state(2)
    outputs = []
    for i in range(4):
        state, out = net.step(params, state, obs[i], reset[i])
        outputs.append(out)
    final, (policy, value) = net.unroll(params, net.initial_state(2), obs, reset)
    np.testing.assert_allclose(policy, jnp.stack([o[0] for o in outputs]), atol=1e-6)
    np.testing.assert_allclose(value, jnp.stack([o[1] for o in outputs]), atol=1e-6)
    np.testing.assert_allclose(final, state, atol=1e-6)


def test_head_layers_after_the_core():
    config = NetworkConfig(hidden_sizes=(8,), core="lstm", core_size=6, head_sizes=(5,))
    net = make_actor_critic(config, Box((3,)), Discrete(4))
    params = net.init(jax.random.key(0), jnp.zeros(3))["params"]
    assert params["policy_tower_0"]["kernel"].shape == (6, 5)
    assert params["value_tower_0"]["kernel"].shape == (6, 5)
    assert params["policy_head"]["kernel"].shape == (5, 4)
    state, (policy, value) = net.step(
        {"params": params}, net.initial_state(2), jnp.ones((2, 3)), jnp.zeros(2, bool)
    )
    assert policy.shape == (2, 4) and value.shape == (2,)
    assert jax.tree.map(jnp.shape, state) == ((2, 6), (2, 6))


@pytest.mark.parametrize("kind", ["gru", "lstm"])
def test_core_scan_values_and_gradients_equal_autodiff_of_the_step(kind):
    from purejaxdrl.networks.core_scan import core_scan

    t, b, h, d = 7, 3, 5, 4
    core = Core(kind, h)
    keys = jax.random.split(jax.random.key(0), 5)
    x_in = jax.random.normal(keys[0], (t, b, d))
    reset = jnp.asarray(np.random.default_rng(0).random((t, b)) < 0.3)
    state = jax.tree.map(
        lambda z: jax.random.normal(keys[1], z.shape), zero_state(kind, h, b)
    )

    def step_of(m, s, x, r):
        return m.step(s, m.project(x), r)

    params = core.init(keys[2], state, x_in[0], reset[0], method=step_of)
    if kind == "gru":  # a non-zero bias, so its gradient is tested
        params["params"]["recurrent_bias"] = jax.random.normal(keys[3], (h,))

    def autodiff(params, state, x_in):
        xp = core.apply(params, x_in, method="project")
        step = lambda s, xs: core.apply(params, s, *xs, method="step")  # noqa: E731
        return jax.lax.scan(step, state, (xp, reset))

    def by_hand(params, state, x_in):
        xp = core.apply(params, x_in, method="project")
        p = params["params"]
        bias = p.get("recurrent_bias", jnp.zeros(h))
        return core_scan(kind, p["recurrent"], bias, state, xp, reset)

    weights = jax.random.normal(keys[4], (t, b, h))

    def loss(f):
        def value(params, state, x_in):
            final, ys = f(params, state, x_in)
            leaves = jax.tree.leaves(final)
            return (ys * weights).sum() + sum(jnp.sin(s).sum() for s in leaves)

        return jax.grad(value, argnums=(0, 1, 2))

    jax.tree.map(
        lambda a, e: np.testing.assert_allclose(a, e, atol=1e-6),
        by_hand(params, state, x_in),
        autodiff(params, state, x_in),
    )
    jax.tree.map(
        lambda a, e: np.testing.assert_allclose(a, e, atol=1e-5, rtol=1e-5),
        loss(by_hand)(params, state, x_in),
        loss(autodiff)(params, state, x_in),
    )


@pytest.mark.parametrize("reverse", [False, True])
def test_prefetch_scan_equals_lax_scan_bit_for_bit(reverse):
    from purejaxdrl.scans import prefetch_scan

    keys = jax.random.split(jax.random.key(0), 3)
    xs = {"a": jax.random.normal(keys[0], (6, 3, 4)), "b": jnp.arange(6.0)}
    u = jax.random.normal(keys[1], (4, 4))

    def step(h, x):  # a stateful step with transcendentals, two outputs
        h = jnp.tanh(x["a"] + h @ u) * jax.nn.sigmoid(x["b"])
        return h, (h, x["b"] * 2)

    h0 = jax.random.normal(keys[2], (3, 4))
    expected = jax.lax.scan(step, h0, xs, reverse=reverse)
    got = jax.jit(lambda h, x: prefetch_scan(step, h, x, reverse=reverse))(h0, xs)
    jax.tree.map(np.testing.assert_array_equal, got, expected)


def _mingru_reference(h, x, reset):
    """minGRU by its paper's equations (Feng et al., 2024), step by step in NumPy."""
    size = h.shape[-1]
    outputs = []
    for t in range(x.shape[0]):
        h = np.where(reset[t][:, None], 0.0, h)
        z = 1.0 / (1.0 + np.exp(-x[t][:, :size]))
        h = (1.0 - z) * h + z * x[t][:, size:]
        outputs.append(h)
    return h, np.stack(outputs)


@pytest.mark.parametrize("linear_scan", ["parallel", "sequential"])
def test_mingru_scans_equal_its_equations_step_by_step(linear_scan, monkeypatch):
    from purejaxdrl.networks import mingru
    from purejaxdrl.networks.mingru import mingru_scan, mingru_step

    # Tests run on CPU, whose programs take the loop: the accelerators'
    # parallel scan is tested by putting it in the loop's place.
    scan_fn = getattr(mingru, f"{linear_scan}_linear_scan")
    monkeypatch.setattr(mingru, "sequential_linear_scan", scan_fn)
    t, b, h = 13, 3, 5  # not a power of two: the parallel scan's uneven levels
    keys = jax.random.split(jax.random.key(0), 3)
    x = jax.random.normal(keys[0], (t, b, 2 * h))
    start = jax.random.normal(keys[1], (b, h))
    reset = np.random.default_rng(0).random((t, b)) < 0.3
    reset[0, 0] = True  # a reset at the first step drops the start state
    final, outputs = mingru_scan(start, x, jnp.asarray(reset))
    want_final, want = _mingru_reference(np.asarray(start), np.asarray(x), reset)
    np.testing.assert_allclose(outputs, want, atol=1e-6)
    np.testing.assert_allclose(final, want_final, atol=1e-6)

    # Its gradient (autodiff of the scan) equals autodiff of the step in a loop.
    weights = jax.random.normal(keys[2], (t, b, h))

    def loop(start, x):
        def step(state, xs):
            return mingru_step(state, *xs)

        return jax.lax.scan(step, start, (x, jnp.asarray(reset)))

    def loss(f):
        def value(start, x):
            final, ys = f(start, x)
            return (ys * weights).sum() + jnp.sin(final).sum()

        return jax.grad(value, argnums=(0, 1))(start, x)

    scan = functools.partial(mingru_scan, reset=jnp.asarray(reset))
    jax.tree.map(
        lambda a, e: np.testing.assert_allclose(a, e, atol=1e-5, rtol=1e-5),
        loss(scan),
        loss(loop),
    )
