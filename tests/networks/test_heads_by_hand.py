"""Feed-forward heads and torsos against NumPy forward passes written by hand.

Every parameter is drawn at random (biases and LayerNorm's scale too), so a
dropped, reordered or misplaced term shows.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.networks import (
    NetworkConfig,
    make_actor_critic,
    make_q_network,
    make_sac_networks,
)
from tests.helpers import randomised


def _dense(p, x):
    return x @ np.asarray(p["kernel"], np.float64) + np.asarray(p["bias"], np.float64)


def _np(params):
    return jax.tree.map(lambda a: np.asarray(a, np.float64), params["params"])


@pytest.mark.parametrize("dueling", [False, True])
def test_q_network_is_dueling_by_its_definition(dueling):
    config = NetworkConfig(hidden_sizes=(6,))
    net = make_q_network(config, Box((3,)), Discrete(4), dueling=dueling)
    params = randomised(net.init(jax.random.key(0), jnp.zeros(3)), jax.random.key(1))
    obs = np.asarray(jax.random.normal(jax.random.key(2), (5, 3)))
    q, max_q = net.apply(params, jnp.asarray(obs))

    p = _np(params)
    x = np.tanh(_dense(p["torso"]["Dense_0"], obs))
    heads = {p[k]["kernel"].shape[-1]: p[k] for k in p if k != "torso"}
    if dueling:  # Wang et al. (2016): Q = V + A - mean_a A
        adv = _dense(heads[4], x)
        want = _dense(heads[1], x) + adv - adv.mean(-1, keepdims=True)
    else:
        assert set(heads) == {4}
        want = _dense(heads[4], x)
    np.testing.assert_allclose(q, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(max_q, want.max(-1), rtol=1e-5, atol=1e-5)


def test_layer_norm_comes_before_each_dense_layers_activation():
    # PQN's torso (Gallici et al., 2025): dense -> LayerNorm -> relu, per layer.
    config = NetworkConfig(hidden_sizes=(6, 5), norm="layer_norm", activation="relu")
    net = make_actor_critic(config, Box((3,)), Discrete(3))
    params = randomised(net.init(jax.random.key(0), jnp.zeros(3)), jax.random.key(1))
    obs = np.asarray(jax.random.normal(jax.random.key(2), (4, 3)))
    policy, _ = net.apply(params, jnp.asarray(obs))

    torso = _np(params)["actor_torso"]
    x = obs
    for i in range(2):
        x = _dense(torso[f"Dense_{i}"], x)
        ln = torso[f"LayerNorm_{i}"]
        x = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-6)
        x = np.maximum(x * ln["scale"] + ln["bias"], 0.0)
    heads = _np(params)
    head = next(
        heads[k] for k in heads if heads[k].get("kernel", np.zeros(1)).shape == (5, 3)
    )
    np.testing.assert_allclose(policy, _dense(head, x), rtol=1e-4, atol=1e-4)


def _conv_same_relu(x, kernel, bias):
    """3x3 'SAME' cross-correlation, then relu, by loops over the output pixels."""
    n, h, w, _ = x.shape
    k = kernel.shape[0]
    padded = np.pad(x, ((0, 0), (k // 2, k // 2), (k // 2, k // 2), (0, 0)))
    out = np.zeros((n, h, w, kernel.shape[-1]))
    for i in range(h):
        for j in range(w):
            patch = padded[:, i : i + k, j : j + k, :]
            out[:, i, j] = np.einsum("nabc,abcf->nf", patch, kernel) + bias
    return np.maximum(out, 0.0)


def test_cnn_torso_is_a_relu_conv_then_the_dense_layers():
    config = NetworkConfig(hidden_sizes=(6,), torso="cnn", conv_features=3)
    net = make_actor_critic(config, Box((5, 5, 2)), Discrete(3))
    params = randomised(
        net.init(jax.random.key(0), jnp.zeros((5, 5, 2))), jax.random.key(1)
    )
    obs = np.asarray(jax.random.normal(jax.random.key(2), (2, 5, 5, 2)))
    _, value = net.apply(params, jnp.asarray(obs))

    p = _np(params)
    conv = p["critic_torso"]["_Conv_0"]
    x = _conv_same_relu(obs, conv["kernel"], conv["bias"]).reshape(2, -1)
    x = np.tanh(_dense(p["critic_torso"]["Dense_0"], x))
    head = next(p[k] for k in p if p[k].get("kernel", np.zeros(1)).shape == (6, 1))
    np.testing.assert_allclose(value, _dense(head, x)[:, 0], rtol=1e-4, atol=1e-4)


def test_sac_critics_put_the_action_beside_the_torsos_features_before_dense_layers():
    # Each critic: its own conv torso (no dense layers of its own), then the
    # dense layers of hidden_sizes over [conv features, action], then Q.
    config = NetworkConfig(hidden_sizes=(6,), torso="cnn", conv_features=3)
    nets = make_sac_networks(config, Box((5, 5, 2)), Box((2,)))
    params = randomised(
        nets.policy.init(jax.random.key(0), jnp.zeros((5, 5, 2))), jax.random.key(1)
    )["critic"]
    obs = np.asarray(jax.random.normal(jax.random.key(2), (3, 5, 5, 2)))
    action = np.asarray(jax.random.normal(jax.random.key(3), (3, 2)))
    q = nets.critic(params, jnp.asarray(obs), jnp.asarray(action))

    p = _np({"params": params["params"]})
    want = []
    for i in range(2):
        assert set(p[f"q{i}_obs"]) == {"_Conv_0"}
        conv = p[f"q{i}_obs"]["_Conv_0"]
        x = _conv_same_relu(obs, conv["kernel"], conv["bias"]).reshape(3, -1)
        x = np.tanh(_dense(p[f"q{i}"]["Dense_0"], np.concatenate([x, action], -1)))
        want.append(_dense(p[f"Dense_{i}"], x)[:, 0])
    np.testing.assert_allclose(q, np.stack(want, -1), rtol=1e-4, atol=1e-4)


def test_nature_torso_takes_frames_of_exactly_its_smallest_size():
    # 36x36: (36 - 8) / 4 + 1 = 8, (8 - 4) / 2 + 1 = 3, 3 - 3 + 1 = 1 pixel.
    config = NetworkConfig(hidden_sizes=(4,), torso="nature")
    net = make_actor_critic(config, Box((36, 36, 4)), Discrete(2))
    # Shapes only (no compile): the conv stack leaves 1x1x64 features.
    params = jax.eval_shape(net.init, jax.random.key(0), jnp.zeros((36, 36, 4)))
    assert params["params"]["actor_torso"]["Dense_0"]["kernel"].shape == (64, 4)


def test_a_critic_entry_of_other_rank_than_the_policys_is_read_whole():
    # The policy reads a vector, the critic a [2, 2] entry: each torso takes
    # its own entry's rank, so the critic flattens 4 features per observation.
    config = NetworkConfig(
        hidden_sizes=(6,), policy_obs_key="state", value_obs_key="privileged_state"
    )
    spec = {"state": Box((3,)), "privileged_state": Box((2, 2))}
    net = make_actor_critic(config, spec, Discrete(2))
    one = {"state": jnp.zeros(3), "privileged_state": jnp.zeros((2, 2))}
    params = randomised(net.init(jax.random.key(0), one), jax.random.key(1))
    privileged = np.asarray(jax.random.normal(jax.random.key(2), (5, 2, 2)))
    obs = {"state": jnp.ones((5, 3)), "privileged_state": jnp.asarray(privileged)}
    _, value = net.apply(params, obs)

    p = _np(params)
    x = np.tanh(_dense(p["critic_torso"]["Dense_0"], privileged.reshape(5, 4)))
    head = next(p[k] for k in p if p[k].get("kernel", np.zeros(1)).shape == (6, 1))
    np.testing.assert_allclose(value, _dense(head, x)[:, 0], rtol=1e-4, atol=1e-4)


def _legal(obs):
    return obs[..., :3] > 0.0  # action a is legal where feature a is positive


@pytest.mark.parametrize("core", ["none", "gru"])
def test_a_masked_q_networks_max_q_is_over_the_legal_actions(core):
    # Action 2's Q raised far above the others: where it is illegal, max Q must
    # be the best legal action's, not its (a target would bootstrap from it).
    config = NetworkConfig(hidden_sizes=(6,), core=core, core_size=4)
    masked = make_q_network(config, Box((3,)), Discrete(3, _legal), dueling=False)
    plain = make_q_network(config, Box((3,)), Discrete(3), dueling=False)
    params = randomised(masked.init(jax.random.key(0), jnp.zeros(3)), jax.random.key(1))
    head = "Dense_0" if core == "none" else "advantage_head"
    bias = params["params"][head]["bias"].at[2].add(100.0)
    params["params"][head] = {**params["params"][head], "bias": bias}
    obs = jax.random.normal(jax.random.key(2), (8, 3)).at[:, 0].set(1.0)
    if core == "none":
        q, max_q = masked.apply(params, obs)
        raw = np.asarray(plain.apply(params, obs)[0])
    else:  # one step from the zero state, and the final outputs of a 1-step unroll
        state, reset = masked.initial_state(8), jnp.ones(8, bool)
        q, max_q = masked.step(params, state, obs, reset)[1]
        raw = np.asarray(plain.step(params, state, obs, reset)[1][0])
        final_q, final_max = masked.final_outputs(
            params, state, obs[None], reset[None], obs[None]
        )
        assert np.all(np.isneginf(np.asarray(final_q)[0][~np.asarray(_legal(obs))]))
        raw_final = plain.final_outputs(
            params, state, obs[None], reset[None], obs[None]
        )
        legal = np.asarray(_legal(obs))
        want_final = np.where(legal, np.asarray(raw_final[0])[0], -np.inf).max(-1)
        np.testing.assert_allclose(final_max[0], want_final, rtol=1e-6)
    legal = np.asarray(_legal(obs))
    assert legal[:, 2].any() and not legal[:, 2].all()
    np.testing.assert_array_equal(np.asarray(q)[~legal], -np.inf)
    np.testing.assert_allclose(max_q, np.where(legal, raw, -np.inf).max(-1), rtol=1e-6)
