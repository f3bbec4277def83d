"""Each acting factory says, statically, whether its policy gives values as it acts."""

import jax
import jax.numpy as jnp
import pytest

import purejaxdrl as pjd
from purejaxdrl.parallel import make_mesh
from purejaxdrl.runners.rollout import reset_actors, unroll

# (preset, algo, network.core) -> whether the policy values while it acts: a
# recurrent actor-critic's core does; R2D2's acting steps its Q-network as a
# core even without one (`stateless`), so it does too; feed-forward
# actor-critics and ε-greedy DQN leave the values to after the unroll.
CASES = [
    ("cartpole", "ppo", "none", False),
    ("cartpole", "ppo", "gru", True),
    ("cartpole", "dqn", "none", False),
    ("cartpole_masked", "r2d2", "none", True),
    ("cartpole_masked", "r2d2", "gru", True),
]


@pytest.mark.parametrize(("preset", "algo", "core", "expected"), CASES)
def test_values_while_acting_is_set_by_the_factory_and_decides_the_rollout(
    preset, algo, core, expected
):
    config = pjd.apply_overrides(
        pjd.load_preset(preset, algo).config,
        {"num_envs": 4, "network": {"core": core}},
    )
    exp = pjd.training.make_experiment(config, make_mesh(1))
    acting = exp.agent.acting
    assert acting.values_while_acting is expected

    def run(key):
        params = exp.agent.acting_params(exp.agent.init(key))
        actor = reset_actors(exp.env, exp.env_params, key, jnp.arange(4))
        actor = actor._replace(core=acting.initial_state(4))
        return unroll(exp.env, exp.env_params, exp.agent, params, actor, key, 3)[1]

    traj = jax.eval_shape(run, jax.random.key(0))  # traced, nothing runs
    assert (traj.reset is not None) is expected
    if expected:
        assert traj.reset.shape == (3, 4)
