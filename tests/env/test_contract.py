"""A user's environment is checked against its specs before it trains."""

import dataclasses
import functools
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import env as envs
from purejaxdrl.cli import main
from purejaxdrl.env.contract import check_user_env
from purejaxdrl.training.run_env import make_env
from purejaxdrl.types import TimeStep


@dataclasses.dataclass
class Flawed(envs.Env):
    """A one-state env whose outputs can break its contract one way at a time."""

    obs_shape: tuple = (2,)  # what the observations are; the spec says (2,)
    obs_dtype: type = jnp.float32
    reward_shape: tuple = ()
    reward_dtype: type = jnp.float32
    extra_state: bool = False  # step returns one more state leaf than reset
    truncated_dtype: type = jnp.bool_
    action: object = dataclasses.field(default_factory=lambda: envs.Discrete(2))

    @property
    def default_params(self):
        return ()

    def observation_spec(self, params):
        return envs.Box([2])  # a list, as users write it: kept as (2,)

    def action_spec(self, params):
        return self.action

    def reset(self, key, params):
        return (jnp.int32(0),), envs.restart(jnp.zeros(self.obs_shape, self.obs_dtype))

    def step(self, key, state, action, params):
        obs = jnp.zeros(self.obs_shape, self.obs_dtype)
        state = (*state, jnp.int32(1)) if self.extra_state else state
        return state, TimeStep(
            observation=obs,
            reward=jnp.ones(self.reward_shape, self.reward_dtype),
            discount=jnp.float32(1.0),
            truncated=jnp.asarray(False, self.truncated_dtype),
            final_observation=obs,
            info={},
        )


def _config(env_id: str):
    """The cartpole preset's run on the registered environment `env_id`."""
    return pjd.apply_overrides(
        pjd.load_preset("cartpole").config, {"env": {"id": env_id}}
    )


def _refusal(env_id: str, factory, error=pjd.ConfigError) -> Exception:
    """What building `env_id`, registered from `factory`, raises: an `error`."""
    envs.register(env_id, factory)
    with pytest.raises(error) as caught:
        make_env(_config(env_id))
    return caught.value


def gymnax_discrete(n):
    from gymnax.environments import spaces

    return spaces.Discrete(n)


def test_a_box_keeps_its_shape_as_a_tuple_of_ints():
    assert envs.Box(4) == envs.Box([4]) == envs.Box((4,))
    assert hash(envs.Box([2, 3])) == hash(envs.Box((2, 3)))
    with pytest.raises(pjd.ConfigError, match="must be a tuple of ints"):
        envs.Box("four")


@pytest.mark.parametrize(
    "flaw, message",
    [
        ({}, None),
        ({"obs_shape": (1,)}, "Flawed-v0: reset's observation is float32[1], but "
         "observation_spec says Box(shape=(2,)) (float32[2]); make observation_spec "
         "and the observations agree."),
        # Integer observations under a float Box (mut26 CT2: only a wrong
        # shape was tried, so the dtype half of the check could go unseen).
        ({"obs_dtype": jnp.int32}, "Flawed-v0: reset's observation is int32[2], "
         "but observation_spec says Box(shape=(2,)) (float32[2]); make "
         "observation_spec and the observations agree."),
        ({"reward_dtype": jnp.int32}, "Flawed-v0: step's reward is int32[], not "
         "float32[]; return one float32 scalar per environment"),
        # A reward of shape [1], not a scalar, is named by its shape (mut26 CT1:
        # otherwise only a vaguer reset-against-step check caught it).
        ({"reward_shape": (1,)}, "Flawed-v0: step's reward is float32[1], not "
         "float32[]; return one float32 scalar per environment"),
        ({"truncated_dtype": jnp.float32}, "Flawed-v0: step's truncated is "
         "float32[], not bool[]"),
        ({"extra_state": True}, "Flawed-v0: step's state has another structure "
         "than reset's"),
        ({"action": envs.Box((2, 3))}, "Flawed-v0: action_spec(params)=Box(shape="
         "(2, 3)) is not a purejaxdrl.env.Discrete or a 1-D purejaxdrl.env.Box; "
         "use purejaxdrl.env.Discrete(num_actions), or a 1-D"),
        ({"action": gymnax_discrete(2)}, "Flawed-v0: action_spec(params)=Discrete"
         "(2, dtype=int32) (a gymnax.environments.spaces.Discrete) is not a "
         "purejaxdrl.env.Discrete or a 1-D purejaxdrl.env.Box; use "
         "purejaxdrl.env.Discrete(2)."),
    ],
)  # fmt: skip
def test_a_users_env_that_breaks_its_specs_is_named_in_one_line(flaw, message):
    if message is None:  # the contract kept: the env is built
        envs.register("Flawed-v0", lambda: Flawed(**flaw))
        env, _ = make_env(_config("Flawed-v0"))
        assert env.observation_spec(()) == envs.Box((2,))
        return
    error = _refusal("Flawed-v0", lambda: Flawed(**flaw))
    assert str(error).startswith(message)


class MethodParams(Flawed):
    """default_params written as a plain method, the @property forgotten."""

    def default_params(self):
        return ()


class AssignedParams(Flawed):
    """default_params assigned in __init__, over Env's read-only property."""

    def __init__(self):
        self.default_params = ()


@pytest.mark.parametrize(
    "kind, message",
    [
        (MethodParams, "Method-v0: MethodParams.default_params is a method; make "
         "it a @property returning the params pytree (put @property above its "
         "def), as every purejaxdrl.env.Env does."),
        (AssignedParams, "Assigned-v0: its factory assigns default_params "
         "(property 'default_params' of 'AssignedParams' object has no setter); "
         "make it a @property returning the params pytree (e.g. store them as "
         "self._params and return those), as every purejaxdrl.env.Env does."),
    ],
)  # fmt: skip
def test_default_params_that_is_not_a_property_is_one_line(kind, message):
    assert str(_refusal(message.split(":")[0], kind)) == message


class RaisesTracing(Flawed):
    """Its step reads an attribute its state lacks; its reset traces."""

    def step(self, key, state, action, params):
        return super().step(key, state, action, params)[0].position, None


def test_an_error_tracing_reset_or_step_is_one_line_naming_env_and_where():
    error = _refusal("Raises-v0", RaisesTracing)
    message = str(error)
    assert message.startswith(
        "Raises-v0: tracing its step (jax.eval_shape, nothing run) raised "
        "AttributeError: 'tuple' object has no attribute 'position' (at "
    )
    assert "test_contract.py:" in message
    # The line of the user's code (here, this file's) it came from.
    assert (
        "return super().step(key, state, action, params)[0].position, None); "
        "fix that in the environment's step"
    ) in message
    assert "\n" not in message
    assert isinstance(error.__cause__, AttributeError)  # its traceback


class KeyInState(Flawed):
    """Keeps a typed key in its state; `step` keeps it wrongly one of two ways.

    `split`: `jax.random.split(key)`, key[2] where reset kept key[].
    `default_impl`: a key remade with `wrap_key_data` without `impl=`, of
    JAX's default implementation where the run's key is of its own.
    """

    def __init__(self, flaw: str):
        super().__init__()
        self.flaw = flaw

    def reset(self, key, params):
        return (jnp.int32(0), key), envs.restart(jnp.zeros(2, jnp.float32))

    def step(self, key, state, action, params):
        t, kept = state
        if self.flaw == "split":
            kept = jax.random.split(key)
        else:
            data = jnp.where(t > 2, jax.random.key_data(key), jax.random.key_data(kept))
            kept = jax.random.wrap_key_data(data)
        _, ts = super().step(key, (), action, params)
        return (t + 1, kept), ts


def test_a_key_in_the_state_of_another_shape_after_step_is_one_line():
    # The message's dtype was a TypeError of its own (jnp.dtype of a key).
    with pytest.raises(pjd.ConfigError) as error:
        check_user_env(KeyInState("split"), "Split-v0")
    assert re.match(
        r"Split-v0: state\[1\] is key<\w+>\[\] after reset and key<\w+>\[2\] after "
        r"step; return the same shapes and dtypes from both \(step was traced "
        r"with action int32\[\], from action_spec Discrete\(2\)\)\.$",
        str(error.value),
    )


def test_the_contract_traces_with_the_runs_key_implementation():
    # The run's keys are fused_threefry's (the default rng_impl): a key the env
    # remakes of JAX's default implementation passed the check, then failed
    # in the run's scan with a carry type traceback.
    error = _refusal("KeyImpl-v0", lambda: KeyInState("default_impl"))
    message = str(error)
    assert message.startswith(
        "KeyImpl-v0: state[1] is key<fthreefry>[] after reset and key<fry>[] "
        "after step; return the same shapes and dtypes from both (keys of one "
        "implementation: derive them from the key given"
    )
    assert "impl=jax.random.key_impl(key)" in message
    # Of JAX's default implementation, the run's keys agree with the env's.
    make_env(dataclasses.replace(_config("KeyImpl-v0"), rng_impl="threefry2x32"))


class Returns(Flawed):
    """reset and step returning what gymnax's, or a slip, would return."""

    def __init__(self, flaw: str):
        super().__init__()
        self.flaw = flaw

    def reset(self, key, params):
        state, ts = super().reset(key, params)
        if self.flaw == "reset (obs, state)":  # gymnax's order
            return ts.observation, state
        if self.flaw == "reset TimeStep":  # `return envs.restart(obs)`
            return ts
        return state, ts

    def step(self, key, state, action, params):
        state, ts = super().step(key, state, action, params)
        if self.flaw == "step (TimeStep, state)":
            return ts, state
        if self.flaw == "step 5-tuple":  # gymnax's
            return ts.observation, state, ts.reward, ts.discount == 0, {}
        return state, ts


@pytest.mark.parametrize(
    "flaw, message",
    [
        ("reset (obs, state)", "Returns-v0: reset returned a pair of (float32[2], "
         "(int32[],)), with no TimeStep (gymnax's (obs, state)?); return (state, "
         "TimeStep), state first (envs.restart(obs) makes the TimeStep)."),
        ("reset TimeStep", "Returns-v0: reset returned a TimeStep alone, without "
         "the state; return (state, TimeStep), state first (envs.restart(obs) "
         "makes the TimeStep)."),
        ("step (TimeStep, state)", "Returns-v0: step returned (TimeStep, state), "
         "the pair swapped; return (state, TimeStep), state first "
         "(purejaxdrl.types.TimeStep(...) makes the TimeStep) (step was traced "
         "with action int32[], from action_spec Discrete(2))."),
        ("step 5-tuple", "Returns-v0: step returned 5 values (float32[2], "
         "(int32[],), float32[], bool[], {}), gymnax's (obs, state, reward, done, "
         "info); return (state, TimeStep), state first "
         "(purejaxdrl.types.TimeStep(...) makes the TimeStep) (step was traced "
         "with action int32[], from action_spec Discrete(2))."),
    ],
)  # fmt: skip
def test_reset_or_step_not_returning_state_then_timestep_is_one_line(flaw, message):
    # Each was an AttributeError traceback, or "too many values to unpack".
    assert str(_refusal("Returns-v0", lambda: Returns(flaw))) == message


def test_a_discrete_keeps_its_count_as_an_int():
    assert envs.Discrete(np.int64(3)) == envs.Discrete(3)
    assert type(envs.Discrete(np.int32(3)).num_values) is int
    assert envs.Discrete(1).num_values == 1  # one action: the heads handle A = 1
    for bad in (2.5, "2", True, None):
        with pytest.raises(pjd.ConfigError, match="must be an integer >= 1"):
            envs.Discrete(bad)


class CountedActions(Flawed):
    """Its action_spec makes a Discrete of `count` actions."""

    def __init__(self, count):
        super().__init__()
        self.count = count

    def action_spec(self, params):
        return envs.Discrete(self.count)


@pytest.mark.parametrize(
    "count, message",
    [
        (2.0, "Counted-v0: its action_spec made Discrete(num_values=2.0): the "
         "number of actions must be an integer >= 1 (a Python or numpy int); pass "
         "an int: Discrete(2)."),
        (0, "Counted-v0: its action_spec made Discrete(num_values=0): the number "
         "of actions must be an integer >= 1 (a Python or numpy int); pass an "
         "int: e.g. Discrete(2)."),
    ],
)  # fmt: skip
def test_a_discrete_of_a_float_or_no_actions_is_one_line(count, message, capsys):
    # Each ended in ~40 frames through flax (a TypeError of jax.random's
    # orthogonal, or an argmax of an empty sequence) and exit 1.
    assert str(_refusal("Counted-v0", lambda: CountedActions(count))) == message
    argv = ["train", "--env", "cartpole", "--env.id", "Counted-v0", "--no-files"]
    assert main([*argv, "--devices", "1", "--total-steps", "2048"]) == 2
    assert capsys.readouterr().err == f"purejaxdrl: error: {message}\n"
    envs.register("Counted-v0", lambda: CountedActions(np.int64(2)))
    env, _ = make_env(_config("Counted-v0"))  # a numpy count is taken, as an int
    assert env.action_spec(()).num_values == 2


class WordShape(Flawed):
    """Its observation_spec makes a Box of a word's shape."""

    def observation_spec(self, params):
        return envs.Box("four")


def test_a_bad_observation_spec_is_named_with_the_environment():
    assert str(_refusal("WordShape-v0", WordShape)).startswith(
        "WordShape-v0: its observation_spec made Box('four'): the shape must be"
    )


class ActionInObservation(Flawed):
    """Its step adds the action to the observation, as a position index would."""

    def step(self, key, state, action, params):
        state, ts = super().step(key, state, action, params)
        obs = ts.observation + jnp.asarray(action, jnp.float32)[..., None]
        return state, ts._replace(observation=obs, final_observation=obs)


def test_a_step_that_breaks_the_contract_names_the_action_it_was_traced_with():
    # A Box action used as an index broadcast into the observation: the line
    # named only the observation's shape, and its fix pointed at the spec.
    box_action = functools.partial(ActionInObservation, action=envs.Box((1,)))
    assert str(_refusal("BoxIndex-v0", box_action)) == (
        "BoxIndex-v0: step's observation is float32[1, 2], but observation_spec "
        "says Box(shape=(2,)) (float32[2]); make observation_spec and the "
        "observations agree (step was traced with action float32[1], from "
        "action_spec Box(shape=(1,)); a Discrete action is int32[])."
    )
    envs.register("BoxIndex-v0", ActionInObservation)  # Discrete(2): it fits
    make_env(_config("BoxIndex-v0"))
