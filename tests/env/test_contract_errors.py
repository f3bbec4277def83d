"""Every break of the environment contract is a ConfigError, as a notebook catches it.

An int32 reward raised a plain ValueError while gymnax's `(obs, state)` reset
raised a ConfigError: a cell catching `pjd.ConfigError`, the type the docs
present for bad input, caught one and not the other.
"""

import dataclasses

import jax.numpy as jnp
import pytest

import purejaxdrl as pjd
from purejaxdrl import env as envs
from purejaxdrl.env.contract import check_user_env
from tests.env.test_contract import Flawed

METRICS = envs.base.METRICS


@dataclasses.dataclass
class Broken(Flawed):
    """`Flawed`, with the breaks it cannot make: specs, info, dict observations."""

    flaw: str = ""

    def observation_spec(self, params):
        if self.flaw == "observation_spec":
            return (2,)
        if self.flaw == "dict keys":
            return {"a": envs.Box((2,)), "b": envs.Box((2,))}
        return super().observation_spec(params)

    def reset(self, key, params):
        state, ts = super().reset(key, params)
        if self.flaw == "reset (obs, state)":
            return ts.observation, state
        if self.flaw == "dict keys":
            ts = ts._replace(observation={"a": ts.observation})
        return state, ts._replace(info=self._info(0))

    def step(self, key, state, action, params):
        if self.flaw == "step raises":
            raise KeyError("no such field")
        state, ts = super().step(key, state, action, params)
        if self.flaw == "state dtype":
            state = (jnp.float32(1),)
        return state, ts._replace(info=self._info(1))

    def _info(self, t):
        if self.flaw == "metrics not a dict":
            return {METRICS: jnp.float32(0)}
        if self.flaw == "metric int32":
            return {METRICS: {"m": jnp.int32(0)}}
        if self.flaw == "metric names differ":
            return {METRICS: {"m": jnp.float32(0)}} if t else {METRICS: {}}
        return {}


class NotAnEnv:
    """What a factory made instead of an Env."""


CASES = {
    "not an Env": NotAnEnv,
    "observation_spec": lambda: Broken(flaw="observation_spec"),
    "action_spec": lambda: Broken(action=(2,)),
    "observation shape": lambda: Broken(obs_shape=(3,)),
    "dict keys": lambda: Broken(flaw="dict keys"),
    "reward int32": lambda: Broken(reward_dtype=jnp.int32),
    "truncated float32": lambda: Broken(truncated_dtype=jnp.float32),
    "metrics not a dict": lambda: Broken(flaw="metrics not a dict"),
    "metric int32": lambda: Broken(flaw="metric int32"),
    "metric names differ": lambda: Broken(flaw="metric names differ"),
    "state structure": lambda: Broken(extra_state=True),
    "state dtype": lambda: Broken(flaw="state dtype"),
    "reset (obs, state)": lambda: Broken(flaw="reset (obs, state)"),
    "step raises": lambda: Broken(flaw="step raises"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_cell_catching_config_error_catches_every_contract_break(case):
    caught = None
    try:
        check_user_env(CASES[case](), "Broken-v0")
    except pjd.ConfigError as error:  # what a notebook cell catches
        caught = error
    assert caught is not None
    message = str(caught)
    assert message.startswith("Broken-v0: ") and "\n" not in message, message


def test_the_unbroken_env_passes():
    check_user_env(Broken(), "Broken-v0")
