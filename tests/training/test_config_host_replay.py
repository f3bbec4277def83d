"""The host-env runner's refusal of replay: the field that turns it on, if one does."""

import types

import pytest
from jax.sharding import PartitionSpec as P

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError
from purejaxdrl.runners.sebulba import SebulbaRunner
from purejaxdrl.training.config import validate


def _host_config(algo: str, **section):
    preset = pjd.load_preset("cartpole_envpool", "ppo").config
    overrides = {"algo": algo, algo: section} if section else {"algo": algo}
    return pjd.apply_overrides(preset, overrides)


def test_impala_with_replay_is_told_to_set_the_ratio_to_zero():
    config = _host_config("impala", replay_ratio=0.5)
    with pytest.raises(ConfigError) as error:
        validate(config)
    message = str(error.value)
    assert message.startswith("impala.replay_ratio=0.5 keeps a replay buffer")
    # IMPALA itself runs there without replay: the fix is the field, and the
    # list of algorithms to use instead leaves it out.
    assert (
        "pass --impala.replay-ratio 0.0 (impala.replay_ratio=0.0 in Python), the "
        "default (no replay)" in message
    )
    assert "use ppo, a2c, pqn (discrete actions), or a device environment." in message
    validate(_host_config("impala", replay_ratio=0.0))


def test_an_algorithm_that_always_replays_is_named():
    use = (
        r"use one that keeps none \(ppo, impala, a2c, pqn \(discrete actions\)\), "
        r"e\.g\. --algo ppo \(algo='ppo' in Python\), or a device"
    )
    with pytest.raises(ConfigError, match=rf"^algo='dqn' keeps a replay .*{use}"):
        validate(_host_config("dqn"))


def test_the_runner_refuses_with_the_same_message():
    # Built past `validate` (as a user's code might), the runner's own check
    # says the same; it runs before anything else is read.
    config = _host_config("impala", replay_ratio=0.5)
    with pytest.raises(ConfigError) as expected:
        validate(config)
    agent = types.SimpleNamespace(state_spec=(P(), P("data")))
    with pytest.raises(ConfigError) as error:
        SebulbaRunner(None, agent, [], None, config, [])
    assert str(error.value) == str(expected.value)


def test_the_two_host_refusals_never_suggest_each_others_algorithms():
    # Continuous actions on a host env (hr15 #2): the acting refusal names no
    # replay algorithm (sac), the replay refusal says pqn acts in discrete ones.
    from purejaxdrl.agents.registry import acting_refusal
    from purejaxdrl.env.base import Box

    line = acting_refusal("pqn", Box(1), "gymnasium:Pendulum-v1")
    assert line.endswith("or another that acts in them (impala, a2c), or an --env "
                         "with discrete actions")  # fmt: skip
    assert "sac" not in line
    # A device env keeps every algorithm that acts in them.
    assert "(impala, a2c, sac)" in acting_refusal("pqn", Box(1), "Pendulum-v1")
