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


@pytest.mark.parametrize("lam, normalize", [(1.0, False), (0.9, False), (0.9, True)])
def test_update_is_one_sgd_step_on_the_a3c_loss(lam, normalize):
    _, network, _ = setup()
    _, init, update = learner("a2c")
    config = A2CConfig(
        **PLAIN_SGD,
        gamma=0.9,
        gae_lambda=lam,
        entropy_cost=0.01,
        value_cost=0.5,
        normalize_advantages=normalize,
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
    adv = returns - v
    if normalize:  # standardised over the whole batch, all T x B steps
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    adv = jnp.asarray(adv, jnp.float32)
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


def test_continuous_update_is_the_same_on_two_devices():
    # Pendulum's tanh-Gaussian entropy is a quadrature, not a draw over the
    # local batch: its bonus and metric are the same however B is split.
    # lr 0.01: Pendulum's large returns make lr 0.1 steps big enough that
    # float32 reduction order alone shows at 2e-6.
    config = A2CConfig(**(PLAIN_SGD | {"learning_rate": 0.01}), entropy_cost=0.01)
    _, init, _ = learner("a2c", "Pendulum-v1")
    state = init(config, jax.random.key(0))
    traj = batch(state.params, env_id="Pendulum-v1")
    assert_update_is_the_same_on_two_devices(
        "a2c", config, state, traj, jax.random.key(1), env_id="Pendulum-v1"
    )


def test_factory_validates_eagerly():
    _, network, obs = setup()
    with pytest.raises(ValueError, match="a2c.optimizer='lamb' is not one of"):
        make_a2c(A2CConfig(optimizer="lamb"), network, obs, RunShape())
    # At decay 1 RMSProp's squared-gradient average stays 0: SGD, 1/sqrt(eps)
    # times the step.
    for decay in (1.0, 1.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match=r"a2c.rms_decay=.* must be in \[0, 1\)"):
            make_a2c(A2CConfig(rms_decay=decay), network, obs, RunShape())
    make_a2c(A2CConfig(rms_decay=0.0), network, obs, RunShape())  # no memory: fine
    with pytest.raises(ValueError, match="num_updates=0"):
        make_a2c(A2CConfig(), network, obs, RunShape(num_updates=0))


def test_value_cost_is_twice_openai_baselines_vf_coef_on_any_shape():
    # OpenAI baselines' A2C minimises pg - ent_coef H + vf_coef mean((V - R)²);
    # value_cost weighs 0.5 mean((V - R)²), so vf_coef c is value_cost 2c (the
    # docstrings say so). [T, B] inputs, as A2C's: means over every element.
    from purejaxdrl.rl.losses import actor_critic_loss

    rng = np.random.default_rng(0)
    logp, adv, v, ret, ent = rng.normal(size=(5, 6, 4))
    vf_coef, ent_coef = 0.5, 0.01
    baselines = (
        -np.mean(logp * adv)
        - ent_coef * np.mean(ent)
        + vf_coef * np.mean((v - ret) ** 2)
    )
    total, _ = actor_critic_loss(
        *(jnp.asarray(x, jnp.float32) for x in (logp, adv, v, ret, ent)),
        value_cost=2 * vf_coef,
        entropy_cost=ent_coef,
    )
    np.testing.assert_allclose(total, baselines, rtol=1e-5)
    for doc in (A2CConfig.__doc__, actor_critic_loss.__doc__):
        assert "vf_coef c" in doc and "value_cost" in doc and "2c" in doc
