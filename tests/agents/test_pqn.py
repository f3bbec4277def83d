"""PQN: one update against a reference written from the paper, and on 2 devices."""

import dataclasses
import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

import purejaxdrl as pjd
from purejaxdrl import env as envs
from purejaxdrl.agents import PQNConfig, RunShape, make_agent
from purejaxdrl.agents.pqn import pqn_networks
from purejaxdrl.setup_warnings import forget_warnings
from purejaxdrl.types import Transition
from tests.agents.helpers import flat
from tests.helpers import tiny_config, trained
from tests.rl.test_q_lambda import numpy_q_lambda

NET = pjd.NetworkConfig(hidden_sizes=(8, 8), activation="relu", norm="layer_norm")


@functools.cache
def _network(net=NET):
    env = envs.make("CartPole-v1")
    params = env.default_params
    spec, action_spec = env.observation_spec(params), env.action_spec(params)
    network, _ = pqn_networks(PQNConfig(), net, spec, action_spec)
    return network, np.zeros(spec.shape, np.float32)


def _transitions(length, num_envs, seed=0):
    """Random [T, B] transitions with terminations and truncations."""
    rng = np.random.default_rng(seed)
    shape = (length, num_envs)
    terminated = rng.random(shape) < 0.15
    truncated = (rng.random(shape) < 0.15) & ~terminated
    discount = 1.0 - terminated.astype(np.float32)
    max_q = rng.normal(size=shape).astype(np.float32)
    return Transition(
        observation=rng.normal(size=(*shape, 4)).astype(np.float32),
        action=rng.integers(0, 2, shape).astype(np.int32),
        reward=rng.normal(size=shape).astype(np.float32),
        discount=discount,
        truncated=truncated,
        log_prob=np.zeros(shape, np.float32),
        value=rng.normal(size=shape).astype(np.float32),
        bootstrap_value=max_q * discount,
        final_observation=rng.normal(size=(*shape, 4)).astype(np.float32),
        info={},
    )


def _q_reference(params, obs):
    """The Q-network by hand: (Dense -> LayerNorm -> relu) x 2 -> Dense."""
    x = obs
    for i in range(2):
        dense = params["torso"][f"Dense_{i}"]
        norm = params["torso"][f"LayerNorm_{i}"]
        x = x @ dense["kernel"] + dense["bias"]
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        x = (x - mean) / jnp.sqrt(var + 1e-6) * norm["scale"] + norm["bias"]
        x = jnp.maximum(x, 0.0)
    head = params["Dense_0"]
    return x @ head["kernel"] + head["bias"]


def _radam_steps(params, grad_fn, steps, lr, max_norm):
    """RAdam (Liu et al., 2020, Algorithm 2) after global-norm clipping, in NumPy.

    β1 0.9, β2 0.999, ε 1e-8; the rectified step once ρ_t > 5 (optax's
    threshold), else the bias-corrected momentum alone. On one flat vector.
    """
    b1, b2, eps = 0.9, 0.999, 1e-8
    rho_inf = 2.0 / (1.0 - b2) - 1.0
    theta, unravel = ravel_pytree(params)
    theta = np.asarray(theta, np.float64)
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    losses = []
    for t in range(1, steps + 1):
        loss, grads = grad_fn(unravel(jnp.asarray(theta, jnp.float32)))
        losses.append(float(loss))
        g = np.asarray(ravel_pytree(grads)[0], np.float64)
        g = g * min(1.0, max_norm / np.linalg.norm(g))
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1**t)
        rho = rho_inf - 2.0 * t * b2**t / (1.0 - b2**t)
        if rho > 5.0:
            r = np.sqrt(
                (rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho)
            )
            theta = theta - lr * r * m_hat / (np.sqrt(v / (1 - b2**t)) + eps)
        else:
            theta = theta - lr * m_hat
    return theta, losses


def test_one_update_matches_the_papers_algorithm_written_out():
    # Gallici et al. (2025), Algorithm 1 without minibatch shuffling: Q(λ)
    # targets from the unroll's max-Q values, then epochs of RAdam steps on
    # 0.5 (Q(s, a) - G)² with the gradients' global norm clipped.
    network, obs = _network()
    epochs, gamma, lam, scale, lr, max_norm = 8, 0.9, 0.65, 0.5, 1e-2, 0.5
    config = PQNConfig(
        num_epochs=epochs, num_minibatches=1, learning_rate=lr, anneal_lr=False,
        max_grad_norm=max_norm, gamma=gamma, q_lambda=lam, reward_scale=scale,
    )  # fmt: skip
    agent = make_agent("pqn", config, network, obs, RunShape(num_updates=10))
    traj = _transitions(6, 4)
    state = agent.init(jax.random.key(0))
    new, metrics = jax.jit(agent.update)(state, traj, jax.random.key(1))

    target = numpy_q_lambda(
        traj.reward * scale, traj.discount, traj.truncated,
        traj.bootstrap_value, gamma, lam,
    ).astype(np.float32)  # fmt: skip

    def loss(params):
        q = _q_reference(params["params"], traj.observation)
        q_taken = jnp.take_along_axis(q, traj.action[..., None], -1)[..., 0]
        return 0.5 * jnp.mean((q_taken - target) ** 2)

    start = jax.tree.map(np.asarray, state.params)
    want, losses = _radam_steps(start, jax.value_and_grad(loss), epochs, lr, max_norm)
    # Clipping binds on these steps and the rectified branch runs from t = 6.
    np.testing.assert_allclose(flat(new.params), want, rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(metrics["loss/total"], np.mean(losses), rtol=1e-4)
    assert not np.allclose(flat(new.params), flat(start), atol=1e-3)
    assert int(new.step) == 1


def test_each_epoch_deals_its_minibatches_anew():
    # Two epochs of two one-step minibatches (T = 2): RAdam steps in one of
    # four orders. Each epoch shuffles with a key of its own, so for this key
    # the second epoch takes the steps in the other order; a split shared by
    # the epochs (every order repeated) ends elsewhere.
    network, obs = _network()
    gamma, lam, lr, max_norm = 0.9, 0.65, 1e-2, 0.5
    config = PQNConfig(
        num_epochs=2, num_minibatches=2, learning_rate=lr, anneal_lr=False,
        max_grad_norm=max_norm, gamma=gamma, q_lambda=lam,
    )  # fmt: skip
    agent = make_agent("pqn", config, network, obs, RunShape(num_updates=10))
    traj = _transitions(2, 8, seed=2)
    state = agent.init(jax.random.key(0))
    new, _ = jax.jit(agent.update)(state, traj, jax.random.key(1))
    target = numpy_q_lambda(
        traj.reward, traj.discount, traj.truncated, traj.bootstrap_value, gamma, lam
    ).astype(np.float32)

    def loss(params, t):
        q = _q_reference(params["params"], traj.observation[t])
        q_taken = jnp.take_along_axis(q, traj.action[t][..., None], -1)[..., 0]
        return 0.5 * jnp.mean((q_taken - target[t]) ** 2)

    def reference(order):
        steps = iter(order)
        grad = lambda p: jax.value_and_grad(loss)(p, next(steps))  # noqa: E731
        start = jax.tree.map(np.asarray, state.params)
        return _radam_steps(start, grad, len(order), lr, max_norm)[0]

    errors = {
        a + b: np.abs(flat(new.params) - reference(a + b)).max()
        for a in ((0, 1), (1, 0))
        for b in ((0, 1), (1, 0))
    }
    order = min(errors, key=errors.get)
    assert errors[order] < 2e-5, errors
    assert order[:2] != order[2:], errors
    assert min(errors[o] for o in errors if o[:2] == o[2:]) > 1e-4, errors


def test_the_annealed_rate_of_the_second_update_is_nine_tenths_at_every_step():
    # As PPO's: 10 updates annealed to 0; the second update's 4 RAdam steps
    # (2 epochs x 2 minibatches) all at 0.9 of the rate, as a constant-rate
    # update at 0.9 takes them from the same state.
    network, obs = _network()
    on = PQNConfig(num_epochs=2, num_minibatches=2, learning_rate=1e-2)
    assert on.anneal_lr  # the default

    def update(config, state, key):
        agent = make_agent("pqn", config, network, obs, RunShape(num_updates=10))
        return jax.jit(agent.update)(state, _transitions(2, 8, seed=2), key)

    agent = make_agent("pqn", on, network, obs, RunShape(num_updates=10))
    first, metrics = update(on, agent.init(jax.random.key(0)), jax.random.key(1))
    second, later = update(on, first, jax.random.key(2))
    off = dataclasses.replace(on, anneal_lr=False, learning_rate=0.9 * 1e-2)
    constant, _ = update(off, first, jax.random.key(2))
    np.testing.assert_array_equal(flat(second.params), flat(constant.params))
    assert np.abs(flat(second.params) - flat(first.params)).max() > 1e-4
    np.testing.assert_allclose(
        [metrics["learning_rate"], later["learning_rate"]], [1e-2, 0.9e-2]
    )


def test_the_network_norm_option_adds_one_layer_norm_per_hidden_layer():
    network, obs = _network()
    params = network.init(jax.random.key(0), obs)["params"]
    assert set(params["torso"]) == {"Dense_0", "Dense_1", "LayerNorm_0", "LayerNorm_1"}
    x = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    np.testing.assert_allclose(
        network.apply({"params": params}, x)[0], _q_reference(params, x), rtol=1e-5
    )
    plain, _ = _network(pjd.NetworkConfig(hidden_sizes=(8, 8), activation="relu"))
    assert set(plain.init(jax.random.key(0), obs)["params"]["torso"]) == {
        "Dense_0",
        "Dense_1",
    }
    with pytest.raises(ValueError, match="network.norm='batch'"):
        _network(pjd.NetworkConfig(norm="batch"))


def test_a_q_network_without_layer_norm_warns_and_builds():
    env = envs.make("CartPole-v1")
    specs = (env.observation_spec(env.default_params), env.action_spec(None))
    plain = pjd.NetworkConfig(hidden_sizes=(8,), norm="none")
    forget_warnings()  # another test may have built one already
    with pytest.warns(UserWarning) as warned:
        pqn_networks(PQNConfig(), plain, *specs)
    (said,) = [str(w.message) for w in warned]
    # Both spellings (pq18 #3): a Python caller sets the field, not the flag.
    assert said.startswith("pqn with network.norm='none': ") and said.endswith(
        "without --network.norm layer_norm (network.norm='layer_norm' in Python) "
        "it may diverge."
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pqn_networks(PQNConfig(), NET, *specs)


def test_update_is_the_same_on_one_and_two_devices():
    network, obs = _network()
    config = PQNConfig(num_epochs=2, num_minibatches=4, learning_rate=1e-3)
    traj = _transitions(8, 8, seed=1)
    key = jax.random.key(2)

    def build(axis_name):
        run = RunShape(num_updates=10, axis_name=axis_name)
        return make_agent("pqn", config, network, obs, run)

    state = build(None).init(jax.random.key(0))
    one, m_one = jax.jit(build(None).update)(state, traj, key)
    mesh = Mesh(np.array(jax.devices()[:2]), ("data",))
    two, m_two = jax.jit(
        jax.shard_map(
            build("data").update,
            mesh=mesh,
            in_specs=(P(), P(None, "data"), P()),
            out_specs=P(),
        )
    )(state, traj, key)
    np.testing.assert_allclose(flat(two.params), flat(one.params), atol=1e-6)
    for name, value in m_one.items():
        np.testing.assert_allclose(m_two[name], value, rtol=1e-5, atol=1e-6)
    assert not np.allclose(flat(one.params), flat(state.params))


def test_actors_explore_with_the_annealed_epsilon():
    network, obs = _network()
    config = PQNConfig(epsilon_start=1.0, epsilon_end=0.0, epsilon_fraction=0.5)
    agent = make_agent("pqn", config, network, obs, RunShape(num_updates=10))
    state = agent.init(jax.random.key(0))
    batch = 512
    observations = jnp.asarray(
        np.random.default_rng(0).normal(size=(batch, 4)), jnp.float32
    )
    keys = jax.random.split(jax.random.key(1), batch)
    ids = jnp.arange(batch, dtype=jnp.int32)
    greedy = network.apply(state.params, observations)[0].argmax(-1)

    def actions(step):
        acting = agent.acting_params(state._replace(step=jnp.int32(step)))
        reset = jnp.ones(batch, bool)
        return agent.acting.step(acting, (), observations, reset, keys, ids)[1]

    # ε 1 at the start: half the random actions differ from the greedy one;
    # ε 0 from half of training on: all are greedy.
    assert 0.4 < float(jnp.mean(actions(0) != greedy)) < 0.6
    np.testing.assert_array_equal(actions(5), greedy)
    np.testing.assert_array_equal(actions(9), greedy)


def test_a_minibatch_count_that_does_not_split_the_envs_is_refused():
    # 8 minibatches of a 2-step unroll: 2 time blocks x 4 groups of envs.
    validate = pjd.agents.algorithm("pqn").validate
    validate(PQNConfig(num_minibatches=8), pjd.agents.RunShape(8, 2))
    with pytest.raises(pjd.ConfigError, match="pqn.num_minibatches=8"):
        validate(PQNConfig(num_minibatches=8), pjd.agents.RunShape(6, 2))
    with pytest.raises(pjd.ConfigError, match="pqn.q_lambda=1.5"):
        validate(PQNConfig(q_lambda=1.5), None)


def test_a_reward_scale_of_zero_is_one_line_and_exit_2(capsys):
    # As for the other learners: 0 would train on all-zero rewards, learning
    # nothing while the logged episode returns stay real.
    from purejaxdrl import cli

    argv = ["train", "--no-files", "--algo", "pqn", "--env", "cartpole"]
    assert cli.main([*argv, "--pqn.reward-scale", "0"]) == 2
    assert capsys.readouterr().err == (
        "purejaxdrl: error: pqn.reward_scale=0.0 must be > 0 and finite; pass a "
        "positive number, e.g. --pqn.reward-scale 1.0 (pqn.reward_scale=1.0 in "
        "Python).\n"
    )


SMALL = {
    "algo": "pqn",
    "num_envs": 8,
    "unroll_length": 8,
    "total_steps": 8 * 8 * 4,
    "pqn": {"num_epochs": 2, "num_minibatches": 2, "learning_rate": 1e-3},
    "network": {"hidden_sizes": [16], "norm": "layer_norm", "activation": "relu"},
}
GRU = {
    "network": {"core": "gru", "core_size": 8, "hidden_sizes": [16]},
    "env": {"hide_observations": [1, 3]},
}


@pytest.mark.parametrize("core", ["none", pytest.param("gru", marks=pytest.mark.slow)])
def test_runs_train_the_same_parameters_on_1_and_2_devices(core):
    # The whole run: rollout, targets, minibatches (whole sequences with a
    # core, re-unrolled from their stored start states), ε, all-reduces.
    config = tiny_config(SMALL)
    if core == "gru":
        config = tiny_config(GRU, config)
    exp, one, metrics = trained(config, 1, 4)[:3]
    _, two, _ = trained(config, 2, 4)[:3]
    init = exp.runner.init(jax.random.key(0))
    assert np.abs(flat(one.agent.params) - flat(init.agent.params)).max() > 1e-4
    np.testing.assert_allclose(
        flat(two.agent.params), flat(one.agent.params), atol=1e-5, rtol=0
    )
    assert metrics["epsilon"][0] == 1.0 and metrics["epsilon"][-1] < 1.0


def test_q_lambdas_help_says_the_return_stops_at_an_episodes_end():
    # λ = 1 is not "to the end of the unroll" across an episode end: the
    # return stops there (max-Q of the final observation at a time limit).
    from purejaxdrl.config_docs import field_docs

    help_text = " ".join(field_docs(PQNConfig)["q_lambda"].split())
    assert "to the end of the unroll or the episode, plus max-Q there" in help_text
    assert "final observation at a time limit; none at a termination" in help_text
