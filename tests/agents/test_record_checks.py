"""A user's record whose functions take other arguments is refused when registered."""

import dataclasses

import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import ppo, registry
from purejaxdrl.agents.record_checks import SIGNATURES, check_signatures


def make_kw(config, network, obs_example, *, shape, num_updates, axis_name):
    """DESIGN.md's older factory signature: keywords the library does not pass."""


def make_three(config, network, run):
    """A factory without the observation example."""


def validate_one(config):
    """A validator without the run's shape."""


@pytest.fixture
def registry_copy():
    with registry.registered():  # what a test registers is gone after it
        yield


@pytest.mark.parametrize(
    ("field", "function", "said"),
    [
        (
            "make_agent",
            make_kw,
            "make_agent is called as make_agent(config, network, obs_example, run) "
            "(agents.base.AgentFactory), but make_kw(config, network, obs_example, "
            "*, shape, num_updates, axis_name) cannot take those 4 arguments",
        ),
        (
            "make_agent",
            make_three,
            "but make_three(config, network, run) cannot take those 4 arguments",
        ),
        (
            "make_networks",
            lambda config, net: None,
            "make_networks is called as make_networks(config, network_config, "
            "observation_spec, action_spec), but <lambda>(config, net) cannot",
        ),
        (
            "validate",
            validate_one,
            "validate is called as validate(config, shape) (shape: a RunShape or "
            "None), but validate_one(config) cannot take those 2 arguments",
        ),
        ("env_multiple", lambda config: 4, "env_multiple is called as env_multiple"),
        ("host_refusal", lambda c, env_id, x: None, "host_refusal is called as"),
        ("validate", None, "validate must be a function taking (config, shape)"),
        (
            "policy_extras",
            lambda config, shape: {},
            "policy_extras is called as policy_extras(config, shape, updates) "
            "(shape: a RunShape), but <lambda>(config, shape) cannot",
        ),
        (
            "exported_sampler",
            lambda config, dist: None,
            "exported_sampler is called as exported_sampler(config, spec, "
            "distribution), but",
        ),
    ],
)
def test_a_function_of_the_wrong_signature_is_one_line_naming_the_field(
    field, function, said, registry_copy
):
    record = dataclasses.replace(
        registry.algorithm("ppo"), name="mine", **{field: function}
    )
    with pytest.raises(pjd.ConfigError) as e:
        registry.register(record)
    message = str(e.value)
    assert message.startswith("Algorithm 'mine': ")
    assert said in message and "\n" not in message
    assert "mine" not in registry.names()  # nothing registered


def test_functions_that_take_the_arguments_otherwise_are_registered(registry_copy):
    # Defaults, *args and a partial all take the library's positional call.
    def make_agent(config, network, obs_example, run, extra=1):
        return ppo.make_ppo(config, network, obs_example, run)

    record = dataclasses.replace(
        registry.algorithm("ppo"),
        name="mine",
        make_agent=make_agent,
        validate=lambda *args: None,
        keeps_replay=len,  # a builtin: one argument, by position
    )
    registry.register(record)
    assert registry.algorithm("mine").make_agent is make_agent


def test_every_built_in_record_passes():
    for record in registry.algorithms():
        check_signatures(record)
    fields = {f.name for f in dataclasses.fields(registry.algorithm("ppo"))}
    assert set(SIGNATURES) <= fields
    # Every callable field of a record is checked.
    callables = {
        f.name
        for f in dataclasses.fields(registry.algorithm("ppo"))
        if callable(getattr(registry.algorithm("ppo"), f.name))
        and not isinstance(getattr(registry.algorithm("ppo"), f.name), type)
    }
    assert callables <= set(SIGNATURES), callables - set(SIGNATURES)
