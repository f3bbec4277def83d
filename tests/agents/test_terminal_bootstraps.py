"""n-step Q targets never bootstrap past a termination, whatever the final
observation there holds: DQN / Ape-X and R2D2 mask the bootstrap value where
`rl.n_step_targets` gives γ_boot = 0 (0 * inf is NaN), and SAC its soft
target where the discount is 0."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl.agents import dqn
from purejaxdrl.agents.r2d2 import R2D2Config
from purejaxdrl.types import Transition
from tests.agents.test_r2d2 import BURN, OBS, _network, _sequences, _td
from tests.helpers import flat


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_dqn_td_errors_ignore_non_finite_final_observations_at_terminations(bad):
    # Step 1 terminates: n-step targets from steps 0 and 1 do not bootstrap,
    # so its final observation (here inf or NaN) must not reach any TD error,
    # its loss or its gradient (0 * inf would be NaN).
    T, D, A = 4, 3, 2
    disc = jnp.array([[1.0], [0.0], [1.0], [1.0]])
    z = jnp.zeros((T, 1))

    def replayed(final_1):
        final = jnp.ones((T, 1, D)).at[1].set(final_1)
        traj = Transition(
            observation=jnp.ones((T, 1, D)), action=jnp.zeros((T, 1), jnp.int32),
            reward=jnp.ones((T, 1)), discount=disc,
            truncated=jnp.zeros((T, 1), bool), log_prob=z, value=z,
            bootstrap_value=z, final_observation=final, info={},
        )  # fmt: skip
        return dqn.to_replay(traj, 3, 0.9)

    def q_values(params, obs):
        return obs @ params

    online = jnp.arange(D * A, dtype=jnp.float32).reshape(D, A) / 10
    target = online + 0.5
    bad_item, finite_item = replayed(bad), replayed(5.0)
    np.testing.assert_array_equal(bad_item.discount[:2], 0.0)
    td = dqn.td_errors(q_values, online, target, bad_item)
    assert np.isfinite(td).all()
    np.testing.assert_allclose(td, dqn.td_errors(q_values, online, target, finite_item))
    initial = dqn.initial_td_errors(q_values, online, bad_item)
    assert np.isfinite(initial).all()
    np.testing.assert_allclose(
        initial, dqn.initial_td_errors(q_values, online, finite_item)
    )
    weights, config = jnp.ones(T), dqn.DQNConfig()

    def grad(item):
        def objective(p):
            return dqn.loss(p, target, item, weights, apply=q_values, config=config)[0]

        return jax.grad(objective)(online)

    np.testing.assert_allclose(grad(bad_item), grad(finite_item))


@pytest.mark.parametrize("rescaled", [True, False])
@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_r2d2_td_errors_ignore_non_finite_final_observations_at_terminations(
    bad, rescaled
):
    # Sequence 0 terminates at step 5, sequence 2 at step 4: targets from there
    # do not bootstrap, so those final observations (here inf or NaN) must not
    # reach a TD error or its gradient (0 * inf would be NaN).
    config = R2D2Config(burn_in=BURN, n_step=3, gamma=0.9, value_rescaling=rescaled)
    net = _network()
    params = net.init(jax.random.key(0), jnp.zeros(OBS))
    target_params = net.init(jax.random.key(1), jnp.zeros(OBS))
    seq = _sequences()
    final = seq.final_observation.copy()
    final[5, 0] = final[4, 2] = bad
    bad_seq = seq._replace(final_observation=final)

    def sum_sq(p, s):
        return jnp.sum(jnp.square(_td(config, net, p, target_params, s)))

    td = _td(config, net, params, target_params, bad_seq)
    assert np.isfinite(td).all()
    np.testing.assert_allclose(td, _td(config, net, params, target_params, seq))
    grad = flat(jax.grad(sum_sq)(params, bad_seq))
    np.testing.assert_allclose(grad, flat(jax.grad(sum_sq)(params, seq)))


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_sac_soft_target_ignores_a_non_finite_final_observation_at_a_termination(
    bad,
):
    # Item 1 terminates (d = 0): its next observation (here inf or NaN) must not
    # reach its soft target, which is the scaled reward alone (0 * inf is NaN).
    from purejaxdrl.agents import sac
    from purejaxdrl.env.base import Box
    from purejaxdrl.networks import NetworkConfig, make_sac_networks

    nets = make_sac_networks(NetworkConfig(hidden_sizes=(8,)), Box((3,)), Box((2,)))
    obs = jax.random.normal(jax.random.key(0), (3, 3))
    actor = nets.init_actor(jax.random.key(1), obs)
    target = nets.init_critic(jax.random.key(2), obs, jnp.zeros((3, 2)))
    reward, discount = jnp.array([1.0, -2.0, 0.5]), jnp.array([1.0, 0.0, 1.0])

    def soft_target(next_1):
        next_obs = obs.at[1].set(next_1)
        item = sac.Stored(obs, jnp.zeros((3, 2)), reward, discount, next_obs)
        config = sac.SACConfig(gamma=0.9, reward_scale=2.5)
        return sac.soft_q_target(
            nets, actor, target, item, jnp.float32(0.2), jax.random.key(3), config
        )

    bad_target, finite_target = soft_target(bad), soft_target(5.0)
    assert float(bad_target[1]) == 2.5 * -2.0
    np.testing.assert_array_equal(bad_target, finite_target)
