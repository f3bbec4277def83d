import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import (
    A2CConfig,
    IMPALAConfig,
    IMPALAState,
    PPOConfig,
    RunShape,
    make_agent,
)
from tests.agents.helpers import setup


@pytest.mark.parametrize(
    "algo, config",
    [("ppo", PPOConfig()), ("impala", IMPALAConfig()), ("a2c", A2CConfig())],
)
def test_dispatches_on_the_algorithm_name(algo, config):
    _, network, obs = setup()
    agent = make_agent(
        algo, config, network, obs, RunShape(num_updates=5, axis_name="data")
    )
    assert agent.axis_name == "data"
    assert isinstance(agent, pjd.agents.Agent)


def test_impala_state_has_the_agent_state_fields():
    # Code that reads state.agent.params / .opt_state / .step works for all.
    assert IMPALAState._fields[:3] == pjd.agents.AgentState._fields


def test_rejects_unknown_algorithms_and_mismatched_configs():
    _, network, obs = setup()
    with pytest.raises(ValueError, match="algo='muzero' is not a known algorithm"):
        make_agent("muzero", PPOConfig(), network, obs, RunShape())
    with pytest.raises(ValueError, match="type IMPALAConfig, got PPOConfig"):
        make_agent("impala", PPOConfig(), network, obs, RunShape())
