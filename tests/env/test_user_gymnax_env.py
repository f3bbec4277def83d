"""A gymnax environment of the user's own: adapted by GymnaxEnv.wrap, or refused."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import struct

import purejaxdrl as pjd
from purejaxdrl import env as envs
from purejaxdrl.training.run_env import make_env

environment = pytest.importorskip("gymnax.environments.environment")
spaces = pytest.importorskip("gymnax.environments.spaces")


@struct.dataclass
class CorridorState(environment.EnvState):
    position: jax.Array
    time: jax.Array


@struct.dataclass
class CorridorParams(environment.EnvParams):
    length: int = 3
    max_steps_in_episode: int = 12


class Corridor(environment.Environment):
    """Walk right (action 1) from 0 to `length`: reward 1 there, and the end."""

    @property
    def default_params(self):
        return CorridorParams()

    def step_env(self, key, state, action, params):
        position = jnp.maximum(state.position + 2 * action - 1, 0)
        state = CorridorState(position=position, time=state.time + 1)
        goal = position >= params.length
        return self._obs(state), state, goal.astype(jnp.float32), goal, {}

    def reset_env(self, key, params):
        state = CorridorState(position=jnp.int32(0), time=jnp.int32(0))
        return self._obs(state), state

    def _obs(self, state):
        return jnp.stack([state.position, state.time]).astype(jnp.float32)

    def action_space(self, params=None):
        return spaces.Discrete(2)

    def observation_space(self, params):
        return spaces.Box(0.0, 20.0, (2,), jnp.float32)


def _config(env_id, **overrides):
    return pjd.apply_overrides(
        pjd.load_preset("cartpole").config, {"env": {"id": env_id}, **overrides}
    )


def test_a_wrapped_gymnax_environment_keeps_its_episode_boundaries():
    env = envs.GymnaxEnv.wrap(Corridor(), CorridorParams(length=30))
    params = env.default_params
    state, ts = env.reset(jax.random.key(0), params)
    np.testing.assert_array_equal(ts.observation, [0.0, 0.0])
    for t in range(1, 13):  # always right: the time limit (12) ends it first
        state, ts = env.step(jax.random.key(t), state, jnp.int32(1), params)
    assert bool(ts.truncated) and float(ts.discount) == 1.0
    np.testing.assert_array_equal(ts.final_observation, [12.0, 12.0])
    np.testing.assert_array_equal(ts.observation, [0.0, 0.0])  # reset
    goal = envs.GymnaxEnv.wrap(Corridor())  # length 3: the goal first
    state, _ = goal.reset(jax.random.key(0), goal.default_params)
    for t in range(3):
        state, ts = goal.step(
            jax.random.key(t), state, jnp.int32(1), goal.default_params
        )
    assert float(ts.discount) == 0.0 and not bool(ts.truncated)
    assert float(ts.reward) == 1.0
    np.testing.assert_array_equal(ts.final_observation, [3.0, 3.0])


@pytest.mark.timeout(300)
def test_a_registered_wrapped_gymnax_environment_trains():
    envs.register("UserCorridor-v0", lambda: envs.GymnaxEnv.wrap(Corridor()))
    config = _config("UserCorridor-v0", total_steps=16 * 8 * 128, num_envs=16)
    result = pjd.train(config, console=False)
    # Three steps right reach the goal (return 1) before the time limit; a
    # random walk does in about two thirds of its episodes.
    assert result.mean_return >= 0.9, result.mean_return


def test_an_unwrapped_gymnax_environment_is_one_line_naming_the_wrap():
    envs.register("RawCorridor-v0", Corridor)
    with pytest.raises(pjd.ConfigError) as error:
        make_env(_config("RawCorridor-v0"))
    message = str(error.value)
    assert message.startswith("RawCorridor-v0: its factory made <")
    assert "not a purejaxdrl.env.Env" in message and "\n" not in message
    assert message.endswith(
        "or, for a gymnax Environment, register('RawCorridor-v0', lambda: "
        "purejaxdrl.env.GymnaxEnv.wrap(Corridor()))."
    )


class Incomplete(envs.Env):
    """An Env that forgot its specs."""

    @property
    def default_params(self):
        return ()

    def reset(self, key, params):
        return (), envs.restart(jnp.zeros(2))

    def step(self, key, state, action, params):
        raise AssertionError("not reached")


def test_an_env_missing_its_methods_is_one_line_naming_them():
    envs.register("Incomplete-v0", Incomplete)
    with pytest.raises(
        pjd.ConfigError,
        match=r"^Incomplete-v0: Incomplete must "
        r"define observation_spec, action_spec, as every",
    ):
        make_env(_config("Incomplete-v0"))


class Spaced(Corridor):
    """The corridor with an action or observation space given at construction."""

    def __init__(self, action_space=None, observation_space=None):
        super().__init__()
        self._action, self._observation = action_space, observation_space

    def action_space(self, params=None):
        return self._action or super().action_space(params)

    def observation_space(self, params):
        return self._observation or super().observation_space(params)

    def step_env(self, key, state, action, params):
        # The reward is the action the environment got, as it got it.
        obs, state, _, done, info = super().step_env(
            key, state, jnp.int32(action > 0), params
        )
        return obs, state, action, done, info


def test_a_scalar_box_action_is_a_vector_of_one_and_bounds_must_be_finite():
    env = envs.GymnaxEnv.wrap(Spaced(spaces.Box(-2.0, 2.0, ())))
    assert env.action_spec(env.default_params).shape == (1,)
    params = env.default_params
    state, _ = env.reset(jax.random.key(0), params)
    _, ts = env.step(jax.random.key(1), state, jnp.float32([0.5]), params)
    assert ts.reward.shape == () and float(ts.reward) == 1.0  # 0.5 of [-2, 2]
    with pytest.raises(pjd.ConfigError, match="bounds that are not finite"):
        envs.GymnaxEnv.wrap(Spaced(spaces.Box(-jnp.inf, jnp.inf, (1,))))
    odd = spaces.Dict({"a": spaces.Box(0.0, 1.0, (2,))})
    with pytest.raises(pjd.ConfigError, match="its observation space is a Dict"):
        envs.GymnaxEnv.wrap(Spaced(observation_space=odd))


class LegacyCorridor(Corridor):
    """gymnax < 1.0's template: the time limit in is_terminal, returned as done."""

    def is_terminal(self, state, params):
        time_out = state.time >= params.max_steps_in_episode
        return jnp.logical_or(state.position >= params.length, time_out)


def test_a_gymnax_environment_written_the_pre_1_0_way_is_warned_of_once():
    with pytest.warns(UserWarning, match="overrides is_terminal.*max_steps_in_episode"):
        envs.GymnaxEnv.wrap(LegacyCorridor())
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        envs.GymnaxEnv.wrap(Corridor())  # the gymnax >= 1.0 way: no warning
        envs.make("CartPole-v1")  # gymnax's own: no warning


@struct.dataclass
class UnlimitedParams(environment.EnvParams):
    """The corridor's params without `max_steps_in_episode`: gymnax's 1."""

    length: int = 3


class Unlimited(Corridor):
    @property
    def default_params(self):
        return UnlimitedParams()


def test_a_time_limit_left_at_gymnax_s_default_of_one_step_is_one_line():
    # gymnax truncates when time >= max_steps_in_episode: with the base
    # class's 1, every episode would end after its first step.
    env, params = Unlimited(), UnlimitedParams()
    _, state = env.reset(jax.random.key(0), params)
    *_, truncated, _ = env.step(jax.random.key(1), state, 1, params)
    assert bool(truncated)  # the silent failure the check prevents
    with pytest.raises(pjd.ConfigError) as error:
        envs.GymnaxEnv.wrap(env)
    assert str(error.value) == (
        "Unlimited: params.max_steps_in_episode is 1 (gymnax's EnvParams "
        "default where a params class does not declare it): every episode "
        "would be truncated after one step; declare `max_steps_in_episode: int "
        "= N` (the time limit, N > 1) in UnlimitedParams, or pass a larger one "
        "through your factory's options (--env.option); a one-step task "
        "terminates in step_env."
    )
    with pytest.raises(pjd.ConfigError, match=r"max_steps_in_episode is 1 .*Corr"):
        envs.GymnaxEnv.wrap(Corridor(), CorridorParams(max_steps_in_episode=1))
    envs.GymnaxEnv.wrap(Corridor(), CorridorParams(max_steps_in_episode=2))


class DiscountingCorridor(LegacyCorridor):
    """gymnax < 1.0's template whole: step_env's info has self.discount."""

    def step_env(self, key, state, action, params):
        obs, state, reward, _, info = super().step_env(key, state, action, params)
        done = self.is_terminal(state, params)
        return obs, state, reward, done, {"discount": self.discount(state, params)}


def test_a_pre_1_0_class_calling_self_discount_is_one_line_naming_the_fix():
    # gymnax >= 1.0's discount calls is_terminated, which the class lacks: a
    # bare NotImplementedError from deep in gymnax without this check.
    with pytest.raises(pjd.ConfigError) as error:
        envs.GymnaxEnv.wrap(DiscountingCorridor())
    assert str(error.value) == (
        "DiscountingCorridor: step_env calls self.discount, which under gymnax "
        ">= 1.0 calls is_terminated, which DiscountingCorridor does not define "
        "(gymnax's Environment raises NotImplementedError); implement "
        "is_terminated(state, params), returning natural termination only (not "
        'the time limit), or drop "discount" from step_env\'s info.'
    )
    assert isinstance(error.value.__cause__, NotImplementedError)

    class Fixed(DiscountingCorridor):
        def is_terminated(self, state, params):
            return state.position >= params.length

    envs.GymnaxEnv.wrap(Fixed())  # defined: it traces


@struct.dataclass
class TimelessState:
    position: jax.Array


class Timeless(Corridor):
    """A state of its own, without gymnax's `time`."""

    def step_env(self, key, state, action, params):
        state = TimelessState(state.position + action)
        return self._obs(state), state, jnp.float32(0), state.position > 3, {}

    def reset_env(self, key, params):
        state = TimelessState(jnp.int32(0))
        return self._obs(state), state

    def _obs(self, state):
        return jnp.stack([state.position, state.position]).astype(jnp.float32)


class Reshaped(Corridor):
    """Observations of another shape than the space's: (1, 2) or (3,), not (2,)."""

    def __init__(self, shape):
        super().__init__()
        self.shape = shape

    def _obs(self, state):
        return jnp.zeros(self.shape, jnp.float32) + state.position


def test_a_state_without_time_or_an_observation_of_another_shape_is_one_line():
    with pytest.raises(pjd.ConfigError) as error:
        envs.GymnaxEnv.wrap(Timeless())
    assert str(error.value).startswith(
        "Timeless: its state (TimelessState) has no `time`, which gymnax >= "
        "1.0's step reads for the time limit (params.max_steps_in_episode); "
        "subclass gymnax's EnvState"
    )
    # (3,): the adapter's reshape to (2,) would fail; (1, 2): it would pass,
    # silently, on observations laid out otherwise than the space says.
    for shape in [(3,), (1, 2)]:
        with pytest.raises(pjd.ConfigError) as error:
            envs.GymnaxEnv.wrap(Reshaped(shape))
        assert str(error.value) == (
            f"Reshaped: reset_env's observation is float32{list(shape)}, but its "
            "observation_space is a Box of shape (2,); make them agree (get_obs's "
            "array, or the space's shape)."
        )
    envs.GymnaxEnv.wrap(Reshaped((2,)))  # the space's shape


class OtherStepShape(Corridor):
    """reset_env's observation has the space's shape, step_env's does not."""

    def step_env(self, key, state, action, params):
        obs, state, reward, done, info = super().step_env(key, state, action, params)
        return obs[:1], state, reward, done, info


def test_an_error_tracing_a_wrapped_class_is_one_line_naming_where():
    with pytest.raises(pjd.ConfigError) as error:
        envs.GymnaxEnv.wrap(OtherStepShape())
    message = str(error.value)
    assert message.startswith(
        "OtherStepShape: tracing its step_env (jax.eval_shape, nothing run) raised "
    )
    assert "\n" not in message and error.value.__cause__ is not None


def test_the_page_s_factory_takes_options_and_the_bare_one_says_how():
    # The page registered only `lambda: GymnaxEnv.wrap(MyTask())`, whose
    # refusal of `--env.option goal=0.5` said "it takes no options; pass only
    # those": a dead end. The page's factory taking a keyword, run with the
    # corridor's `length` for its `goal`, sets that field of the params.
    import pathlib
    import re

    from tests.helpers import env_registrations_undone

    page = pathlib.Path(__file__).parents[2] / "docs/guide/bring-your-own-env.md"
    (block,) = re.findall(
        r"```python\n(env\.register\(\n    \"MyTask-v0\",.*?)```",
        page.read_text(),
        re.DOTALL,
    )
    with env_registrations_undone():
        exec(block.replace("goal", "length"), {"env": envs, "MyTask": Corridor})
        assert envs.make("MyTask-v0", length=5).default_params.length == 5
        envs.register("BareCorridor-v0", lambda: envs.GymnaxEnv.wrap(Corridor()))
        with pytest.raises(pjd.ConfigError) as error:
            envs.make("BareCorridor-v0", length=5)
    assert str(error.value).endswith(
        "its factory takes no keywords; give it some to take options, e.g. "
        "lambda goal=0.8: ... (docs: Bring your own environment)."
    )
