"""What the Q-learners share: warnings about ε fields that do nothing."""

import warnings

import pytest

from purejaxdrl.agents import PQNConfig, dqn_config, pqn, r2d2
from purejaxdrl.agents.apex import default_config as apex_config
from purejaxdrl.agents.q_learning import warn_once


@pytest.fixture(autouse=True)
def _fresh_warnings():
    warn_once.cache_clear()  # each test sees its warnings, whatever ran before


def test_per_actor_fields_set_without_per_actor_epsilon_warn_once():
    config = PQNConfig(epsilon=0.01, epsilon_alpha=3.0)
    with pytest.warns(UserWarning) as record:
        pqn.validate(config)
        pqn.validate(config)  # each check of a run validates again: still once
    assert len(record) == 1
    message = str(record[0].message)
    assert "pqn.epsilon=0.01, pqn.epsilon_alpha=3.0 have no effect" in message
    assert "--pqn.per-actor-epsilon" in message


def test_annealed_fields_set_with_per_actor_epsilon_warn():
    with pytest.warns(UserWarning, match=r"^r2d2.epsilon_fraction=0.3 has no effect"):
        r2d2.validate(r2d2.R2D2Config(epsilon_fraction=0.3))  # per-actor by default
    with pytest.warns(UserWarning, match=r"apex.epsilon_end=0.2 has no effect.*false"):
        config = dqn_config.DQNConfig(per_actor_epsilon=True, epsilon_end=0.2)
        dqn_config.validate(config, name="apex")


def test_the_fields_of_the_mode_in_use_and_defaults_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pqn.validate(PQNConfig(epsilon_end=0.2, epsilon_fraction=0.3))
        pqn.validate(PQNConfig(per_actor_epsilon=True, epsilon=0.1))
        dqn_config.validate(apex_config(), name="apex")
        r2d2.validate(r2d2.R2D2Config(per_actor_epsilon=False, epsilon_end=0.01))
