"""Environment options that reached gymnax, brax or JAX unchecked, one line now.

Array parameters (Acrobot-v1's `available_torque`), integers past int32, an id
not in gymnax's registry given to `GymnaxEnv` itself, and MNISTBandit-bsuite's
download offline: each ended in a traceback.
"""

import urllib.error

import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import env as envs
from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import check_option_types


def test_a_list_for_an_array_parameter_becomes_its_array_and_steps():
    env = envs.make("Acrobot-v1", available_torque=[-2, 0, 2])
    params = env.default_params
    assert params.available_torque.dtype == jnp.float32
    # The reference: gymnax's own Acrobot, its parameter set to the array.
    gym_env, gym_params = gymnax.make("Acrobot-v1")
    torque = jnp.array([-2.0, 0.0, 2.0], jnp.float32)
    gym_params = gym_params.replace(available_torque=torque)
    key = jax.random.key(0)
    state, _ = jax.jit(env.reset)(key, params)
    _, gym_state = gym_env.reset(key, gym_params)
    seen = []
    for action in (2, 0, 2):  # torque +2, -2, +2
        state, ts = jax.jit(env.step)(key, state, jnp.int32(action), params)
        obs, gym_state, *_ = gym_env.step(key, gym_state, action, gym_params)
        np.testing.assert_allclose(ts.observation, obs, rtol=1e-6)
        seen.append(ts.observation)
    default = envs.make("Acrobot-v1")  # torque +1: another first step
    state, _ = default.reset(key, default.default_params)
    _, ts = default.step(key, state, jnp.int32(2), default.default_params)
    assert not np.allclose(ts.observation, seen[0])
    chain = envs.make("DiscountingChain-bsuite", reward_timestep=[1, 2, 3, 4, 5.0])
    assert chain.default_params.reward_timestep.tolist() == [1, 2, 3, 4, 5]
    assert chain.default_params.reward_timestep.dtype == jnp.int32


@pytest.mark.parametrize(
    "env_id, options, message",
    [
        ("Acrobot-v1", {"available_torque": "abc"}, "env.options "
         "available_torque='abc' must be a list of 3 numbers (Acrobot-v1's "
         "default: [-1.0, 0.0, 1.0]); pass e.g. --env.option "
         "available_torque=[-1.0,0.0,1.0] (env.options={'available_torque': "
         "[-1.0, 0.0, 1.0]} in Python)."),
        ("Acrobot-v1", {"available_torque": [1, 2]}, "available_torque=[1, 2] "
         "must be a list of 3 numbers"),
        ("Acrobot-v1", {"available_torque": [1, 2, True]}, "must be a list of 3 "
         "numbers"),
        ("Acrobot-v1", {"available_torque": [[1, 2], [3]]}, "must be a list of 3"),
        ("DiscountingChain-bsuite", {"reward_timestep": [1, 2, 3, 4, 5.5]},
         "must be a list of 5 integers (DiscountingChain-bsuite's default: "
         "[1, 3, 10, 30, 100])"),
        ("DiscountingChain-bsuite", {"reward_timestep": [1, 2, 3, 4, 2**31]},
         "must be a list of 5 integers"),
    ],
)  # fmt: skip
def test_an_array_parameter_of_another_kind_or_length_is_one_line(
    env_id, options, message
):
    with pytest.raises(ConfigError) as error:
        envs.make(env_id, **options)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_a_users_array_default_takes_what_the_factory_takes():
    # A user's factory may take another length (a network's sizes, say).
    default = {"sizes": np.array([64, 64])}
    options = check_option_types("Mine-v0", {"sizes": [8]}, default, user=True)
    assert options == {"sizes": [8]}


@pytest.mark.parametrize("value", [2**31, 3e9, -(2**31) - 1])
def test_an_integer_option_past_int32_is_one_line(value):
    with pytest.raises(ConfigError) as error:
        envs.make("CartPole-v1", max_steps_in_episode=value)
    assert str(error.value).startswith(
        f"env.options max_steps_in_episode={value!r} must be in [-2**31, 2**31): "
        "the environment keeps its integers as int32"
    )
    assert str(error.value).endswith(
        "e.g. --env.option max_steps_in_episode=500 "
        "(env.options={'max_steps_in_episode': 500} in Python)."
    )
    env = envs.make("CartPole-v1", max_steps_in_episode=2**31 - 1)
    assert env.default_params.max_steps_in_episode == 2**31 - 1
    # Gymnasium's options stay Python ints: no range.
    wide = check_option_types("g", {"n": 2**40}, {"n": 5}, int32=False)
    assert wide == {"n": 2**40}


def test_an_id_gymnax_lacks_given_to_gymnax_env_is_one_line():
    with pytest.raises(envs.UnknownEnvironmentError) as error:
        envs.GymnaxEnv("CartPol-v1")
    assert isinstance(error.value, KeyError)  # as before, for who caught that
    assert str(error.value) == (
        "'CartPol-v1' is not in gymnax's registry (did you mean 'CartPole-v1'?); "
        "pass one of gymnax.registered_envs, or, for a gymnax Environment of "
        "your own, use GymnaxEnv.wrap(env)."
    )


def test_mnist_bandit_offline_is_one_line_naming_the_files(tmp_path, monkeypatch):
    from gymnax.utils import load_mnist

    def offline(url, filename):
        raise urllib.error.URLError("[Errno -2] Name or service not known")

    monkeypatch.setattr(load_mnist, "urlretrieve", offline)
    monkeypatch.setattr(load_mnist.load_mnist, "__defaults__", (str(tmp_path),))
    with pytest.raises(ConfigError) as error:
        envs.make("MNISTBandit-bsuite")
    message = str(error.value)
    assert message.startswith(
        "MNISTBandit-bsuite: gymnax reads MNIST from /tmp/mnist when it is made, "
        "downloading the files missing there, and that failed (URLError: "
    )
    assert "t10k-labels-idx1-ubyte.gz in /tmp/mnist." in message
    assert "\n" not in message
