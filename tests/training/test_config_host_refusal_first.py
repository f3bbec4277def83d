"""A run the host-env runner cannot train is refused before advice on its sizes.

DQN and Ape-X on a host environment were first told to raise --total-steps
(their `min_replay`), and only then, doing so, refused as not runnable there.
"""

import pytest

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError
from purejaxdrl.training.config import validate


def _config(algo: str, env_id: str, total_steps: int):
    preset = pjd.load_preset("cartpole", algo).config
    overrides = {"env": {"id": env_id}, "total_steps": total_steps}
    return pjd.apply_overrides(preset, overrides)


@pytest.mark.parametrize("algo", ["dqn", "apex"])
def test_a_replay_learner_on_a_host_env_hears_only_that_it_does_not_run(algo):
    # On device, this budget gets the min_replay advice (so the order matters)...
    with pytest.raises(ConfigError, match=r"min_replay=.*at least --total-steps"):
        validate(_config(algo, "CartPole-v1", 2048))
    # ...which on a host env would send the user on to a second refusal.
    with pytest.raises(ConfigError) as refused:
        validate(_config(algo, "gymnasium:CartPole-v1", 2048))
    message = str(refused.value)
    assert message.startswith(f"algo={algo!r} keeps a replay buffer"), message
    assert "min_replay" not in message and "--total-steps" not in message


def test_a_budget_below_one_update_is_not_advised_first_either():
    config = _config("dqn", "gymnasium:CartPole-v1", 1)
    with pytest.raises(ConfigError, match=r"^algo='dqn' keeps a replay buffer"):
        validate(config)
