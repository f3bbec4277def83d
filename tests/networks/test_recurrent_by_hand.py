"""Recurrent networks against a NumPy forward pass written from the papers' equations.

Every parameter is drawn at random (biases included, the GRU's recurrent bias
too, which initialises to zero), so a dropped or misplaced term shows; the
initialisers are checked by tests of their own.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.networks import NetworkConfig, make_actor_critic, make_q_network
from purejaxdrl.networks.cores import zero_state
from tests.helpers import randomised


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _dense(p, x):
    return x @ np.asarray(p["kernel"], np.float64) + np.asarray(p["bias"], np.float64)


def _core_step(kind, p, state, x, reset):
    """One step of the core from its equations; state (c, h) or h, x the torso's."""
    xp = _dense(p["input"], x)
    if kind == "lstm":  # Hochreiter & Schmidhuber (1997), flax's gate order i f g o
        c, h = (np.where(reset[:, None], 0.0, s) for s in state)
        u = np.asarray(p["recurrent"], np.float64)
        i, f, g, o = np.split(xp + h @ u, 4, axis=-1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        return (c, h), h
    h = np.where(reset[:, None], 0.0, state)
    size = h.shape[-1]
    if kind == "mingru":  # Feng et al. (2024): z_t, h~_t from the input alone
        z = _sigmoid(xp[:, :size])
        h = (1.0 - z) * h + z * xp[:, size:]
        return h, h
    # GRU (Cho et al., 2014; flax / cuDNN): the reset gate scales U_n h + b_n.
    u = np.asarray(p["recurrent"], np.float64)
    u_r, u_z, u_n = np.split(u, 3, axis=-1)
    x_r, x_z, x_n = np.split(xp, 3, axis=-1)
    b_n = np.asarray(p["recurrent_bias"], np.float64)
    r = _sigmoid(x_r + h @ u_r)
    z = _sigmoid(x_z + h @ u_z)
    n = np.tanh(x_n + r * (h @ u_n + b_n))
    h = (1.0 - z) * n + z * h
    return h, h


def _heads(q_net, p, y):
    if q_net:  # Wang et al. (2016): Q = V + A - mean(A); the value is max Q
        t = np.tanh(_dense(p["tower_0"], y))
        adv = _dense(p["advantage_head"], t)
        q = _dense(p["value_head"], t) + adv - adv.mean(-1, keepdims=True)
        return q, q.max(-1)
    policy = _dense(p["policy_head"], np.tanh(_dense(p["policy_tower_0"], y)))
    value = _dense(p["value_head"], np.tanh(_dense(p["value_tower_0"], y)))[:, 0]
    return policy, value


def _reference(kind, q_net, p, state, obs, reset, final_obs):
    """(outputs [T], final outputs [T], final state): a loop over the steps."""
    outs, finals = [], []
    no_reset = np.zeros(obs.shape[1], bool)
    for t in range(obs.shape[0]):
        x = np.tanh(_dense(p["torso"]["Dense_0"], obs[t]))
        state, y = _core_step(kind, p["core"], state, x, reset[t])
        outs.append(_heads(q_net, p, y))
        # The bootstrap: the state after step t, stepped on its final observation.
        xf = np.tanh(_dense(p["torso"]["Dense_0"], final_obs[t]))
        finals.append(
            _heads(q_net, p, _core_step(kind, p["core"], state, xf, no_reset)[1])
        )
    stack = lambda pairs: tuple(np.stack(z) for z in zip(*pairs, strict=True))  # noqa: E731
    return stack(outs), stack(finals), state


@pytest.mark.parametrize("q_net", [False, True], ids=["actor_critic", "dueling_q"])
@pytest.mark.parametrize("kind", ["gru", "lstm", "mingru"])
def test_step_unroll_and_final_outputs_match_numpy(kind, q_net):
    config = NetworkConfig(hidden_sizes=(6,), core=kind, core_size=4, head_sizes=(5,))
    if q_net:
        net = make_q_network(config, Box((3,)), Discrete(3), dueling=True)
    else:
        net = make_actor_critic(config, Box((3,)), Discrete(3))
    keys = jax.random.split(jax.random.key(0), 5)
    params = randomised(net.init(keys[0], jnp.zeros(3)), keys[1])
    t, b = 4, 2
    obs = jax.random.normal(keys[2], (t, b, 3))
    final_obs = jax.random.normal(keys[3], (t, b, 3))
    reset = np.array([[False, False], [True, False], [False, True], [False, False]])
    start = jax.tree.map(
        lambda z: jax.random.normal(keys[4], z.shape), net.initial_state(b)
    )
    np_params = jax.tree.map(np.asarray, params["params"])
    np_start = jax.tree.map(lambda s: np.asarray(s, np.float64), start)
    want, want_final, want_state = _reference(
        kind, q_net, np_params, np_start, np.asarray(obs), reset, np.asarray(final_obs)
    )

    def close(got, expected):
        jax.tree.map(
            lambda a, e: np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5),
            got,
            expected,
        )

    state, stepped = start, []
    for i in range(t):
        state, out = net.step(params, state, obs[i], jnp.asarray(reset[i]))
        stepped.append(out)
    close(tuple(jnp.stack(z) for z in zip(*stepped, strict=True)), want)
    close(state, want_state)
    final_state, outputs = net.unroll(params, start, obs, jnp.asarray(reset))
    close(outputs, want)
    close(final_state, want_state)
    close(
        net.final_outputs(params, start, obs, jnp.asarray(reset), final_obs), want_final
    )
    both = net.unroll_final(params, start, obs, jnp.asarray(reset), final_obs)
    close(both, (want, want_final))


@pytest.mark.parametrize("kind", ["gru", "lstm"])
def test_recurrent_kernel_is_one_independent_orthogonal_block_per_gate(kind):
    # As flax's cells initialise each gate's U separately (orthogonal): each
    # [H, H] block has orthonormal columns, and no two blocks are equal.
    config = NetworkConfig(hidden_sizes=(6,), core=kind, core_size=5)
    net = make_actor_critic(config, Box((3,)), Discrete(2))
    u = np.asarray(
        net.init(jax.random.key(0), jnp.zeros(3))["params"]["core"]["recurrent"]
    )
    blocks = np.split(u, 4 if kind == "lstm" else 3, axis=-1)
    for block in blocks:
        np.testing.assert_allclose(block.T @ block, np.eye(5), atol=1e-5)
    for i in range(len(blocks)):
        for j in range(i):
            assert not np.allclose(blocks[i], blocks[j], atol=1e-3)


@pytest.mark.parametrize("kind", ["lstm", "gru", "mingru"])
def test_core_input_kernel_is_lecun_normal_and_its_biases_start_at_zero(kind):
    # The equations above are checked with random parameters, so the init is
    # not: a zero input kernel (an LSTM's g = tanh(0) keeps c and h at 0, the
    # core blind to its input until gradients move it) or a shifted GRU gate
    # would only learn slower (mut26 K02, K03). flax's cells: lecun_normal,
    # a normal of variance 1 / fan_in truncated at two of its untruncated
    # standard deviations (sqrt(1 / fan_in) / 0.8796), and zero biases.
    fan_in = 256
    config = NetworkConfig(hidden_sizes=(fan_in,), core=kind, core_size=64)
    net = make_actor_critic(config, Box((3,)), Discrete(2))
    core = net.init(jax.random.key(0), jnp.zeros(3))["params"]["core"]
    kernel = np.asarray(core["input"]["kernel"])
    assert kernel.shape[0] == fan_in
    np.testing.assert_allclose(kernel.std(), 1 / np.sqrt(fan_in), rtol=0.05)
    assert np.abs(kernel).max() <= 2 / 0.87962566 / np.sqrt(fan_in) + 1e-6
    np.testing.assert_array_equal(core["input"]["bias"], 0.0)
    if kind == "gru":
        np.testing.assert_array_equal(core["recurrent_bias"], 0.0)


@pytest.mark.parametrize("kind", ["gru", "lstm"])
def test_core_scan_gradient_of_replicated_weights_is_summed_over_devices(kind):
    # Inside shard_map, weights replicated over `data` (invariant) used on
    # each device's sequences: their gradient is the sum over devices, as
    # plain autodiff of a scan of the step over all sequences on one device.
    from jax.sharding import PartitionSpec as P

    from purejaxdrl.networks.core_scan import core_scan, core_step

    t, b, h = 3, 4, 3
    g = 4 if kind == "lstm" else 3
    keys = jax.random.split(jax.random.key(0), 5)
    u = jax.random.normal(keys[0], (h, g * h))
    bias = jax.random.normal(keys[1], (h,))
    x = jax.random.normal(keys[2], (t, b, g * h))
    reset = jnp.asarray([[False] * b, [True, False] * 2, [False] * b])
    start = jax.tree.map(
        lambda z: jax.random.normal(keys[3], z.shape), zero_state(kind, h, b)
    )

    def loss(scan):
        def value(u, bias, start, x, reset):
            _, ys = scan(u, bias, start, x, reset)
            return jnp.sin(ys).sum()

        return jax.grad(value, argnums=(0, 1))

    def plain(u, bias, start, x, reset):
        def step(s, xs):
            return core_step(kind, u, bias, s, *xs)

        return jax.lax.scan(step, start, (x, reset))

    mesh = jax.make_mesh((2,), ("data",))
    specs = (P(), P(), P("data"), P(None, "data"), P(None, "data"))
    sharded = jax.shard_map(
        loss(lambda *a: core_scan(kind, *a)),
        mesh=mesh,
        in_specs=specs,
        out_specs=P(),
        check_vma=True,
    )
    args = [
        jax.device_put(a, jax.NamedSharding(mesh, spec))
        for a, spec in zip((u, bias, start, x, reset), specs, strict=True)
    ]
    got = jax.jit(sharded)(*args)
    want = loss(plain)(u, bias, start, x, reset)
    jax.tree.map(
        lambda a, e: np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5), got, want
    )
