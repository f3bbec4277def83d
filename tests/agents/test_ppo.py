import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from purejaxdrl.agents import PPOConfig, RunShape, ppo, pqn
from tests.agents.helpers import (
    assert_update_is_the_same_on_two_devices,
    batch,
    flat,
    learner,
    numpy_lambda_returns,
    setup,
)

# One epoch of two minibatches over an unroll of two steps: minibatch_split cuts
# the shuffled time steps into two blocks, so each minibatch is one time step of
# every environment, in an order the update's key picks. ε is small so that the
# second minibatch's ratios and values reach their clips.
CONFIG = PPOConfig(
    num_epochs=1,
    num_minibatches=2,
    anneal_lr=False,
    learning_rate=0.01,
    max_grad_norm=1e9,
    gamma=0.9,
    gae_lambda=0.8,
    clip_eps=0.02,
    entropy_cost=0.01,
    value_cost=0.5,
)


def reference_update(network, params, traj, order):
    """PPO's update by its definition (Schulman et al., 2017): Adam steps on
    the clipped surrogate, clipped value loss and entropy bonus of each
    minibatch in `order`, advantages standardised within the minibatch.

    Returns (flat parameters after the update, the minibatches' total losses).
    """
    c = CONFIG
    r, discount, v_old, v_next = (
        np.asarray(x, np.float64)
        for x in (traj.reward, traj.discount, traj.value, traj.bootstrap_value)
    )
    returns = numpy_lambda_returns(
        r, c.gamma * discount, np.asarray(traj.truncated), v_old, v_next, c.gae_lambda
    )
    # GAE(λ) advantages are λ-returns minus the value baseline.
    advantages = returns - v_old
    dist = network.distribution
    x, unravel = ravel_pytree(params)
    x = np.asarray(x, np.float64)
    m = np.zeros_like(x)
    s = np.zeros_like(x)
    losses = []
    for k, t in enumerate(order, start=1):
        a = advantages[t]
        adv = jnp.asarray((a - a.mean()) / (a.std() + 1e-8), jnp.float32)
        target = jnp.asarray(returns[t], jnp.float32)
        old_v = jnp.asarray(v_old[t], jnp.float32)

        def loss(p, t=t, adv=adv, target=target, old_v=old_v):
            policy, v = network.apply(p, traj.observation[t])
            ratio = jnp.exp(dist.log_prob(policy, traj.action[t]) - traj.log_prob[t])
            clipped = jnp.clip(ratio, 1 - c.clip_eps, 1 + c.clip_eps)
            surrogate = -jnp.mean(jnp.minimum(ratio * adv, clipped * adv))
            v_clipped = old_v + jnp.clip(v - old_v, -c.clip_eps, c.clip_eps)
            value = 0.5 * jnp.mean(
                jnp.maximum(jnp.square(v - target), jnp.square(v_clipped - target))
            )
            entropy = jnp.mean(dist.entropy(policy, None))
            return surrogate + c.value_cost * value - c.entropy_cost * entropy

        p = unravel(jnp.asarray(x, jnp.float32))
        losses.append(float(loss(p)))
        g = np.asarray(ravel_pytree(jax.grad(loss)(p))[0], np.float64)
        # Adam (Kingma & Ba, 2015) with bias correction; ε outside the root.
        m = 0.9 * m + 0.1 * g
        s = 0.999 * s + 0.001 * g * g
        m_hat, s_hat = m / (1 - 0.9**k), s / (1 - 0.999**k)
        x = x - c.learning_rate * m_hat / (np.sqrt(s_hat) + c.eps)
    return x, losses


def test_update_is_adam_on_the_clipped_objective_of_each_minibatch():
    _, network, _ = setup()
    _, init, update = learner("ppo")
    state = init(CONFIG, jax.random.key(0))
    # On-policy data, with a truncation that cuts the λ-return at step 0.
    traj = batch(state.params, length=2, num_envs=16, seed=3)
    assert traj.discount[0, 1] == 1.0
    traj = traj._replace(truncated=traj.truncated.at[0, 1].set(True))
    new_state, metrics = update(CONFIG, state, traj, jax.random.key(2))

    got = flat(new_state.params)
    candidates = {
        order: reference_update(network, state.params, traj, order)
        for order in ((0, 1), (1, 0))
    }
    errors = {order: np.abs(got - x).max() for order, (x, _) in candidates.items()}
    order = min(errors, key=errors.get)
    x, losses = candidates[order]
    # The update moved the parameters, and by the second minibatch's gradient at
    # the first's result: the two orders end far apart, and one matches.
    assert np.abs(got - flat(state.params)).max() > 1e-3
    assert errors[order[::-1]] > 1e-4
    np.testing.assert_allclose(got, x, atol=1e-6)
    np.testing.assert_allclose(metrics["loss/total"], np.mean(losses), rtol=1e-4)
    # ε is small enough that the second minibatch's ratios reach the clip.
    assert metrics["clip_fraction"] > 0.1


def test_each_epoch_deals_its_minibatches_anew():
    # Two epochs of the two one-step minibatches: Adam steps in one of four
    # orders. Each epoch shuffles with a key of its own, so for this key the
    # second epoch takes the steps in the other order; a split shared by the
    # epochs (every order repeated) ends elsewhere.
    _, network, _ = setup()
    config = dataclasses.replace(CONFIG, num_epochs=2)
    _, init, update = learner("ppo")
    state = init(config, jax.random.key(0))
    traj = batch(state.params, length=2, num_envs=16, seed=3)
    new_state, _ = update(config, state, traj, jax.random.key(4))
    got = flat(new_state.params)
    errors = {
        first + second: np.abs(
            got - reference_update(network, state.params, traj, first + second)[0]
        ).max()
        for first in ((0, 1), (1, 0))
        for second in ((0, 1), (1, 0))
    }
    order = min(errors, key=errors.get)
    assert errors[order] < 1e-6, errors
    assert order[:2] != order[2:], errors
    assert min(errors[o] for o in errors if o[:2] == o[2:]) > 1e-4, errors


def test_the_annealed_rate_of_the_second_update_is_nine_tenths_at_every_step():
    # A run of 10 updates (the helper's RunShape) anneals linearly to 0. Its
    # first update steps at the full rate, so it equals the constant-rate
    # update; its second takes all 4 steps (2 epochs x 2 minibatches) at 0.9
    # of it, as a constant-rate update at 0.9 does from the same state (Adam's
    # moments do not depend on the rate). Steps per update miscounted, or a
    # schedule ending elsewhere than 0, change the rate within the update.
    _, init, update = learner("ppo")
    on = dataclasses.replace(CONFIG, anneal_lr=True, num_epochs=2)
    state = init(on, jax.random.key(0))
    traj = batch(state.params, length=2, num_envs=16, seed=3)
    first, metrics = update(on, state, traj, jax.random.key(1))
    second, later = update(on, first, traj, jax.random.key(2))
    rate = on.learning_rate
    off = dataclasses.replace(on, anneal_lr=False, learning_rate=0.9 * rate)
    constant, _ = update(off, first, traj, jax.random.key(2))
    np.testing.assert_array_equal(flat(second.params), flat(constant.params))
    assert np.abs(flat(second.params) - flat(first.params)).max() > 1e-3
    np.testing.assert_allclose(
        [metrics["learning_rate"], later["learning_rate"]], [rate, 0.9 * rate]
    )


def test_advantages_are_standardised_within_each_global_minibatch():
    # Data-parallel: each device holds half of every minibatch; standardising
    # over a device's half alone would change the update.
    _, init, _ = learner("ppo")
    state = init(CONFIG, jax.random.key(0))
    traj = batch(state.params, length=2, num_envs=16, seed=3)
    assert_update_is_the_same_on_two_devices(
        "ppo", CONFIG, state, traj, jax.random.key(2)
    )


def test_continuous_update_is_the_same_on_two_devices():
    # Pendulum's tanh-Gaussian entropy is a quadrature, not a draw over the
    # local batch: its bonus and metric are the same however B is split.
    config = dataclasses.replace(CONFIG, num_minibatches=1)
    _, init, _ = learner("ppo", "Pendulum-v1")
    state = init(config, jax.random.key(0))
    traj = batch(state.params, env_id="Pendulum-v1")
    assert_update_is_the_same_on_two_devices(
        "ppo", config, state, traj, jax.random.key(1), env_id="Pendulum-v1"
    )


def test_dealt_environment_groups_are_the_same_on_two_devices():
    # Four minibatches over two steps: each time step's environments are
    # dealt into Me = 2 groups, block by global block, so each device (8
    # environments) holds its share of the same global minibatches.
    config = dataclasses.replace(CONFIG, num_minibatches=4, num_epochs=2)
    _, init, _ = learner("ppo")
    state = init(config, jax.random.key(0))
    traj = batch(state.params, length=2, num_envs=16, seed=3)
    assert_update_is_the_same_on_two_devices(
        "ppo", config, state, traj, jax.random.key(2)
    )


@pytest.mark.parametrize("normalize", [True, False])
def test_first_minibatch_policy_loss_is_minus_the_mean_advantage(normalize):
    # At the acting parameters every ratio is 1, so the surrogate is -mean(Â):
    # 0 once standardised. One minibatch, one epoch: the metric is that loss.
    config = PPOConfig(num_epochs=1, num_minibatches=1, normalize_advantages=normalize)
    _, init, update = learner("ppo")
    state = init(config, jax.random.key(0))
    traj = batch(state.params, length=8, num_envs=4, seed=1)
    _, metrics = update(config, state, traj, jax.random.key(0))
    r, discount, v, v_next = (
        np.asarray(x, np.float64)
        for x in (traj.reward, traj.discount, traj.value, traj.bootstrap_value)
    )
    returns = numpy_lambda_returns(
        r, 0.99 * discount, np.asarray(traj.truncated), v, v_next, 0.95
    )
    raw = -np.mean(returns - v)
    assert abs(raw) > 0.1  # far from the standardised 0
    expected = 0.0 if normalize else raw
    np.testing.assert_allclose(metrics["loss/policy"], expected, atol=1e-5)


@pytest.mark.parametrize("name", ["ppo", "pqn"])
def test_per_device_minibatch_message_names_the_run_and_each_device(name):
    # A device's update checks its own environments (1 of 4 here), but says
    # so with the run's num_envs and a fix that fits the devices.
    module, kind = (ppo, ppo.PPOConfig) if name == "ppo" else (pqn, pqn.PQNConfig)
    shape = RunShape(4, 16, num_devices=4)
    with pytest.raises(ValueError) as error:
        module.validate(kind(num_minibatches=32), shape)
    assert str(error.value) == (
        f"{name}.num_minibatches=32 with unroll_length=16 needs each device's "
        "environments to be a multiple of 2, got num_envs=4 over 4 devices = 1 "
        "each; pass --num-envs 8 (num_envs=8 in Python) or --devices 2 (devices=2 "
        "in Python), or make "
        "num_minibatches a divisor of unroll_length, e.g. "
        f"--{name}.num-minibatches 16 ({name}.num_minibatches=16 in Python)."
    )
    module.validate(kind(num_minibatches=32), shape._replace(num_envs=8))


def test_whole_sequence_minibatches_also_offer_fewer_minibatches():
    # rec19 #1: with a core, 16 minibatches of 4 envs; 4 of them fit as well.
    shape = RunShape(4, 16, recurrent=True)
    with pytest.raises(ValueError) as error:
        pqn.validate(pqn.PQNConfig(num_minibatches=16), shape)
    assert str(error.value) == (
        "pqn.num_minibatches=16 with a recurrent core (minibatches of whole "
        "sequences) needs num_envs divisible by 16, got num_envs=4; make "
        "num_envs a multiple of 16, e.g. --num-envs 16 (num_envs=16 in Python), "
        "or lower num_minibatches to a divisor of each device's 4 envs, e.g. "
        "--pqn.num-minibatches 4 (pqn.num_minibatches=4 in Python)."
    )
    pqn.validate(pqn.PQNConfig(num_minibatches=4), shape)
    # On 2 devices, 2 each: 3 minibatches divide neither them nor all 4 on one
    # device (no --devices fix, which once raised IndexError); 2 divide them.
    two = RunShape(4, 16, recurrent=True, num_devices=2)
    with pytest.raises(ValueError) as error:
        ppo.validate(PPOConfig(num_minibatches=3), two)
    assert str(error.value).endswith(
        "pass --num-envs 6 (num_envs=6 in Python), or lower num_minibatches to a "
        "divisor of each device's 2 envs, e.g. --ppo.num-minibatches 2 "
        "(ppo.num_minibatches=2 in Python)."
    )
    ppo.validate(PPOConfig(num_minibatches=2), two)


def test_advantages_normalised_over_one_sample_are_refused():
    # One sample's standardised advantage is 0: the policy would never learn
    # (approx_kl 0 all run), silently. 1 env x 4 steps in 4 minibatches.
    from purejaxdrl.agents import a2c

    with pytest.raises(ValueError) as error:
        ppo.validate(PPOConfig(num_minibatches=4), RunShape(1, 4))
    assert str(error.value) == (
        "ppo.normalize_advantages=true over 1 sample per minibatch (num_envs x "
        "unroll_length / num_minibatches) makes every advantage 0: the policy "
        "would not learn; raise --num-envs or --unroll-length, lower "
        "--ppo.num-minibatches, or pass --ppo.normalize-advantages false."
    )
    ppo.validate(PPOConfig(num_minibatches=2), RunShape(1, 4))  # 2 each: fine
    ppo.validate(
        PPOConfig(num_minibatches=4, normalize_advantages=False), RunShape(1, 4)
    )
    with pytest.raises(ValueError, match=r"^a2c.normalize_advantages=true over 1 "
                       r"sample per batch .* or pass --a2c.normalize-advantages "
                       r"false.$"):  # fmt: skip
        a2c.validate(a2c.A2CConfig(normalize_advantages=True), RunShape(1, 1))
    a2c.validate(a2c.A2CConfig(), RunShape(1, 1))  # not normalised: fine
