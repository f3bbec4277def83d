"""Host actors give the agent run-wide environment indices (Ape-X's ε_i)."""

import jax
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.rl.exploration import actor_epsilons
from purejaxdrl.runners import sebulba

pytest.importorskip("envpool")
pytestmark = pytest.mark.timeout(300)


def test_every_pool_acts_with_its_own_share_of_the_runs_epsilons(monkeypatch):
    # 8 environments over 2 actor threads: pools of 4. The agent must see
    # the run's indices 0..7, pool after pool (as the device runner numbers
    # them device after device), so environment i explores with Ape-X's
    # ε_i = 0.4^(1 + 7 i / 7); the pools' own indices (0..3 in both) left
    # ε_4..ε_7 unused and the logged ε (the mean of all 8) not the one acted.
    calls = []
    real = sebulba.make_policy

    def spying(agent, platform):
        step = agent.acting.step

        def recorded(params, carry, obs, reset, keys, env_ids):
            jax.debug.callback(lambda ids: calls.append(set(np.ravel(ids))), env_ids)
            return step(params, carry, obs, reset, keys, env_ids)

        acting = agent.acting._replace(step=recorded)
        return real(agent._replace(acting=acting), platform)

    monkeypatch.setattr(sebulba, "make_policy", spying)
    config = pjd.load_preset("cartpole", "pqn").config
    config = pjd.apply_overrides(
        config,
        {
            "env": {"id": "envpool:CartPole-v1"},
            "devices": 1,
            "num_envs": 8,
            "unroll_length": 4,
            "total_steps": 8 * 4 * 2,
            "num_logs": 1,
            "pqn": {"per_actor_epsilon": True, "epsilon": 0.4, "epsilon_alpha": 7.0},
            "host": {"actor_threads": 2},
        },
    )
    result = pjd.train(config)
    # Each call is one pool's: a synchronous pool steps all its environments.
    assert {frozenset(ids) for ids in calls} == {
        frozenset(range(4)),
        frozenset(range(4, 8)),
    }
    # The logged ε is the mean of the ε_i that act.
    acted = set().union(*calls)
    eps = np.asarray(actor_epsilons(0.4, 7.0, np.array(sorted(acted)), 8))
    np.testing.assert_allclose(result.history[-1]["epsilon"], eps.mean(), rtol=1e-6)
