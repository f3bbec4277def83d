"""Recurrent IMPALA and A2C: the learner's re-unroll and bootstrap values match
what the actors computed, and V-trace sees no lag at policy lag 0."""

import jax
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents.actor_critic import (
    learner_bootstrap,
    learner_outputs,
    learner_outputs_and_bootstrap,
)
from purejaxdrl.parallel import make_mesh
from purejaxdrl.runners.rollout import unroll
from tests.helpers import tiny_config, trained

pytestmark = pytest.mark.timeout(300)

SMALL = {
    "num_envs": 8,
    "unroll_length": 16,
    "total_steps": 8 * 16 * 4,
    "network": {"core": "gru", "core_size": 16, "hidden_sizes": [16]},
    # A time limit of 30 steps: episodes are cut short inside every unroll.
    "env": {"hide_observations": [1, 3], "options": {"max_steps_in_episode": 30}},
}


def _trained(algo: str, core: str = "gru"):
    network = {**SMALL["network"], "core": core}
    config = tiny_config({**SMALL, "algo": algo, "network": network})
    return trained(config, 1, 4)[:3]


@pytest.mark.parametrize("algo, core", [("impala", "gru"), ("a2c", "lstm")])
def test_learner_outputs_and_bootstraps_are_the_actors(algo, core):
    exp, state, _ = _trained(algo, core)
    params = state.agent.params

    @jax.jit
    def act(actor, key):
        return unroll(exp.env, state.env_params, exp.agent, params, actor, key, 200)

    _, traj = act(state.actor, jax.random.key(1))
    # Episodes end inside the unroll, by termination and by the time limit.
    assert (traj.discount == 0).any() and traj.truncated.any()
    net = exp.network
    policy, value = jax.jit(learner_outputs, static_argnums=0)(net, params, traj)
    log_prob = net.distribution.log_prob(policy, traj.action)
    np.testing.assert_allclose(log_prob, traj.log_prob, atol=1e-6, rtol=0)
    np.testing.assert_allclose(value, traj.value, atol=1e-5, rtol=0)
    # The learner's bootstrap values (final observations stepped from the
    # state after each step) are the actors' (the next step's value, or the
    # final observation's where the episode was cut short).
    bootstrap = jax.jit(learner_bootstrap, static_argnums=0)(net, params, traj, value)
    np.testing.assert_allclose(bootstrap, traj.bootstrap_value, atol=1e-5, rtol=0)
    # The same from one unroll (IMPALA's learner).
    combined = jax.jit(learner_outputs_and_bootstrap, static_argnums=0)
    policy, value, bootstrap = combined(net, params, traj)
    log_prob = net.distribution.log_prob(policy, traj.action)
    np.testing.assert_allclose(log_prob, traj.log_prob, atol=1e-6, rtol=0)
    np.testing.assert_allclose(value, traj.value, atol=1e-5, rtol=0)
    np.testing.assert_allclose(bootstrap, traj.bootstrap_value, atol=1e-5, rtol=0)


def test_recurrent_impala_at_lag_0_has_importance_ratios_of_1():
    _, _, metrics = _trained("impala")
    # The learner re-unrolls each trajectory with the actors' parameters: π = μ.
    np.testing.assert_allclose(metrics["vtrace/rho_mean"], 1.0, atol=1e-5)
    np.testing.assert_allclose(metrics["approx_kl"], 0.0, atol=1e-6)


def test_recurrent_impala_replays_each_trajectory_from_its_own_start_state():
    replay = {"replay_ratio": 0.5, "replay_size": 64, "learning_rate": 1e-2}
    learn = pjd.apply_overrides(
        pjd.TrainConfig(),
        {**SMALL, "algo": "impala", "impala": replay, "total_steps": 8 * 16 * 40},
    )
    exp = pjd.training.make_experiment(learn, make_mesh(1))
    state, _ = exp.runner.chunk(30)(exp.runner.init(jax.random.key(0)))
    # Then with a negligible learning rate, until every stored trajectory
    # (64 = 8 updates x 8 envs) was acted with the parameters the learner
    # now holds: replayed ones are then on-policy too.
    frozen = pjd.apply_overrides(learn, {"impala": {"learning_rate": 1e-10}})
    exp = pjd.training.make_experiment(frozen, make_mesh(1))
    state, metrics = exp.runner.chunk(10)(state)
    state = jax.device_get(state)
    steps, starts = state.agent.buffer.items
    assert steps.observation.shape[:2] == (64, 16)
    # Each stored trajectory re-unrolled from its stored start state gives the
    # log-probabilities its actor sampled with.
    traj = jax.tree.map(lambda x: np.swapaxes(x, 0, 1), steps)._replace(
        core_state=starts
    )
    net = exp.network
    policy, _ = jax.jit(learner_outputs, static_argnums=0)(
        net, state.agent.params, traj
    )
    log_prob = net.distribution.log_prob(policy, traj.action)
    np.testing.assert_allclose(log_prob, traj.log_prob, atol=1e-5, rtol=0)
    assert np.abs(traj.log_prob - np.log(0.5)).max() > 0.05  # a policy, not a coin
    np.testing.assert_allclose(metrics["vtrace/rho_mean"][-1], 1.0, atol=1e-4)
