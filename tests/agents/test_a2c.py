import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl.agents import A2CConfig, AgentState, RunShape, make_a2c
from tests.agents.helpers import (
    assert_update_is_the_same_on_two_devices,
    batch,
    flat,
    learner,
    numpy_lambda_returns,
    setup,
)

# SGD without clipping or annealing: one update is exactly params - lr * grad.
PLAIN_SGD = {
    "optimizer": "sgd",
    "anneal_lr": False,
    "learning_rate": 0.1,
    "max_grad_norm": 1e9,
}


@pytest.mark.parametrize("lam", [1.0, 0.9])
def test_update_is_one_sgd_step_on_the_a3c_loss(lam):
    _, network, _ = setup()
    _, init, update = learner("a2c")
    config = A2CConfig(
        **PLAIN_SGD, gamma=0.9, gae_lambda=lam, entropy_cost=0.01, value_cost=0.5
    )
    state = init(config, jax.random.key(0))
    # On-policy data: the actors act with the learner's parameters.
    traj = batch(state.params, seed=3)
    assert (traj.discount == 0).any()
    assert traj.discount[5, 1] == 1.0
    traj = traj._replace(truncated=traj.truncated.at[5, 1].set(True))
    new_state, metrics = update(config, state, traj, jax.random.key(2))

    arrays = [
        np.asarray(x, np.float64)
        for x in (traj.reward, traj.discount, traj.value, traj.bootstrap_value)
    ]
    r, discount, v, v_next = arrays
    returns = numpy_lambda_returns(
        r, 0.9 * discount, np.asarray(traj.truncated), v, v_next, lam
    )
    target = jnp.asarray(returns, jnp.float32)
    adv = jnp.asarray(returns - v, jnp.float32)
    dist = network.distribution

    def loss(params):
        policy, v = network.apply(params, traj.observation)
        log_prob = dist.log_prob(policy, traj.action)
        pg = -jnp.mean(log_prob * adv)
        value = 0.5 * jnp.mean(jnp.square(v - target))
        entropy = jnp.mean(dist.entropy(policy, None))
        return pg + 0.5 * value - 0.01 * entropy

    grad = jax.jit(jax.grad(loss))(state.params)
    expected = flat(state.params) - 0.1 * flat(grad)
    np.testing.assert_allclose(flat(new_state.params), expected, atol=2e-6)
    np.testing.assert_allclose(metrics["loss/total"], loss(state.params), rtol=1e-5)


def test_acts_on_policy_and_does_not_retrace():
    config = A2CConfig(**PLAIN_SGD)
    build, init, update = learner("a2c")
    state = init(config, jax.random.key(0))
    assert isinstance(state, AgentState)
    assert build(config).acting_params(state) is state.params
    traj = batch(state.params)
    state, _ = update(config, state, traj, jax.random.key(0))
    traces = update._cache_size()
    for n in range(3):
        state, metrics = update(config, state, traj, jax.random.key(n))
        assert np.isfinite(metrics["loss/total"])
    assert update._cache_size() == traces
    assert int(state.step) == 4


def test_data_parallel_update_equals_one_device():
    # Gradients, metrics and the advantage normalisation statistics are all
    # global over the `data` axis: the same update as on one device.
    config = A2CConfig(**PLAIN_SGD, normalize_advantages=True)
    _, init, _ = learner("a2c")
    # The flag changes no state: start from that of the plain config.
    state = init(A2CConfig(**PLAIN_SGD), jax.random.key(0))
    traj = batch(state.params)
    # With standardised advantages the policy loss is a mean of terms that
    # nearly cancel (~1e-4): float32 summation order shows at ~1e-7 (atol 1e-6).
    assert_update_is_the_same_on_two_devices(
        "a2c", config, state, traj, jax.random.key(1)
    )


def test_factory_validates_eagerly():
    _, network, obs = setup()
    with pytest.raises(ValueError, match="a2c.optimizer='lamb' is not one of"):
        make_a2c(A2CConfig(optimizer="lamb"), network, obs, RunShape())
    with pytest.raises(ValueError, match="num_updates=0"):
        make_a2c(A2CConfig(), network, obs, RunShape(num_updates=0))
