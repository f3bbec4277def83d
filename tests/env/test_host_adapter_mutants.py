"""Gaps a mutation run found in the host-environment adapters (mutants6_M6B).

Each test's expected values are worked out by hand from the definitions in
`env/host/base.py`'s `HostStep`: float32 rewards, `truncated` never with
`terminated`, `first` on the step after an episode ended.
"""

import types

import numpy as np
import pytest

from purejaxdrl.config import ConfigError
from purejaxdrl.env.host import make_host_env
from purejaxdrl.env.host.base import BoundaryTracker, space_spec
from purejaxdrl.env.host.envpool import EnvPoolEnv, env_seeds

gym = pytest.importorskip("gymnasium")


class Ends(gym.Env):
    """Terminates at step `length`; reward 0.5 a step; obs (t/10, size)."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, size: int = 3, length: int = 3):
        self.size, self.length, self.t = size, length, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        obs = np.array([self.t / 10, self.size / 10], np.float32)
        return obs, 0.5, self.t == self.length, False, {}


gym.register("M6BEnds-test", entry_point=Ends)


def test_a_gymnasium_termination_on_the_time_limits_step_is_no_truncation():
    # Gymnasium's TimeLimit flags `truncated` too when the episode terminates
    # on its last allowed step: termination wins (no bootstrap past it).
    env = make_host_env("gymnasium:M6BEnds-test", 2, 0, max_episode_steps=3)
    first = env.reset()
    steps = [env.step(np.zeros(2, np.int32)) for _ in range(4)]
    assert [s.terminated.tolist() for s in steps] == [[False] * 2] * 2 + [
        [True] * 2,
        [False] * 2,
    ]
    assert not any(s.truncated.any() for s in steps)
    assert steps[3].first.all() and not steps[2].first.any()
    # float32 rewards at the reset (0) and at steps (the env's 0.5, a float64
    # in Gymnasium's vector arrays).
    assert first.reward.dtype == np.float32 and first.reward.tolist() == [0.0, 0.0]
    assert steps[0].reward.dtype == np.float32 and steps[0].reward.tolist() == [0.5] * 2
    env.close()


def test_an_int_annotated_gymnasium_option_refuses_a_fraction():
    # `size: int = 3`: an integer parameter, so 2.5 is refused by name...
    with pytest.raises(ConfigError) as e:
        make_host_env("gymnasium:M6BEnds-test", 1, 0, size=2.5)
    assert str(e.value).startswith("env.options size=2.5 is not an integer")
    # ... and an integer is taken.
    env = make_host_env("gymnasium:M6BEnds-test", 1, 0, size=4)
    env.reset()
    assert env.step(np.zeros(1, np.int32)).observation[0, 1] == np.float32(0.4)
    env.close()


def test_an_option_the_environment_does_not_take_is_one_line():
    with pytest.raises(ConfigError) as e:
        make_host_env("gymnasium:M6BEnds-test", 1, 0, colour=1)
    # Gymnasium's nested TypeError named no keyword the class takes.
    assert str(e.value) == (
        "env.options 'colour' is not an option of gymnasium:M6BEnds-test: its "
        "options are disable_env_checker, length, max_episode_steps, size, "
        "vectorization_mode (sync|async); fix "
        "the name in --env.option KEY=VALUE (env.options={'KEY': VALUE} in "
        "Python, or the preset's env.options), or drop it."
    )
    with pytest.raises(ConfigError, match="did you mean 'length'[?] its options"):
        make_host_env("gymnasium:M6BEnds-test", 1, 0, lenght=6)


class BuggyInit(Ends):
    """Its own __init__ has a bug (int + str) whenever size is not 3."""

    def __init__(self, size: int = 3, length: int = 3):
        super().__init__(size, length)
        if size != 3:
            self.label = size + "x"


gym.register("M6BBuggyInit-test", entry_point=BuggyInit)


def test_an_environments_own_type_error_is_not_blamed_on_its_options():
    # An env made with options whose __init__ raises a TypeError of its own
    # (no "argument" in it) keeps it, traceback and all: turned into "env.options
    # ['size'] ... did not take them", it sent the user to fix good options and
    # hid the line of their own bug (mut26 GY8).
    make_host_env("gymnasium:M6BBuggyInit-test", 1, 0, size=3).close()
    with pytest.raises(TypeError, match="unsupported operand"):
        make_host_env("gymnasium:M6BBuggyInit-test", 1, 0, size=4)


class TakesAny(Ends):
    """Takes any keyword (**kwargs), as wrappers and generic creators do."""

    def __init__(self, **kwargs):
        super().__init__(size=kwargs.pop("difficulty", 3))


gym.register("M6BTakesAny-test", entry_point=TakesAny)


def test_a_creator_taking_any_keyword_gets_an_option_no_signature_names():
    # No name to check against: make_vec judges, and the option arrives.
    env = make_host_env("gymnasium:M6BTakesAny-test", 1, 0, difficulty=7)
    env.reset()
    assert env.step(np.zeros(1, np.int32)).observation[0, 1] == np.float32(0.7)
    env.close()


def _fake_pool_env(num_envs: int, action_space) -> EnvPoolEnv:
    """An EnvPoolEnv around a recording stand-in for EnvPool's pool."""
    env = object.__new__(EnvPoolEnv)
    env.name, env.num_envs, env.batch_size = "envpool:Fake", num_envs, 2
    env.episodic_life = False
    env.boundaries = BoundaryTracker(num_envs)
    sent = []
    env.pool = types.SimpleNamespace(
        action_space=action_space, send=lambda a, i: sent.append((a, i)), sent=sent
    )
    return env


def test_envpool_rows_keep_their_env_ids_float32_rewards_and_terminal_wins():
    env = _fake_pool_env(4, gym.spaces.Discrete(2))
    obs = np.zeros((2, 3), np.float32)
    step = env._host_step(
        obs,
        np.array([1.0, 2.0]),  # float64, as a reset's zeros are
        np.array([True, False]),
        np.array([True, True]),  # both flagged at a terminal step limit
        {"env_id": np.array([3, 1])},
    )
    assert step.env_id.dtype == np.int32 and step.env_id.tolist() == [3, 1]
    assert step.reward.dtype == np.float32 and step.reward.tolist() == [1.0, 2.0]
    assert step.terminated.tolist() == [True, False]
    assert step.truncated.tolist() == [False, True]
    assert step.first.tolist() == [True, True]  # nothing stepped them before
    # Both ended: their next rows are reset steps; row 0 never stepped.
    nxt = env._host_step(obs, np.zeros(2), None, None, {"env_id": np.array([1, 3])})
    assert nxt.first.tolist() == [True, True]
    again = env._host_step(obs, np.zeros(2), None, None, {"env_id": np.array([3, 1])})
    assert again.first.tolist() == [False, False]


def test_envpool_async_actions_are_rescaled_before_they_are_sent():
    env = _fake_pool_env(4, gym.spaces.Box(-2.0, 2.0, (1,), np.float32))
    env.send(np.array([[0.5], [3.0]], np.float32), np.array([2, 0]))
    ((action, env_id),) = env.pool.sent
    # low + (clip(a) + 1) / 2 * (high - low): 0.5 -> 1.0, 3.0 -> 1 -> 2.0.
    np.testing.assert_allclose(action, [[1.0], [2.0]])
    assert env_id.dtype == np.int32 and env_id.tolist() == [2, 0]


def test_envpool_batch_size_equal_to_the_pool_is_synchronous():
    pytest.importorskip("envpool")
    env = make_host_env("envpool:CartPole-v1", 2, 0, batch_size=2)
    assert env.batch_size == 2
    assert env.reset().env_id.tolist() == [0, 1]
    assert env.step(np.zeros(2, np.int32)).env_id.tolist() == [0, 1]
    env.close()
    with pytest.raises(ConfigError, match=r"batch_size=3 must be in \[0, 2\]"):
        make_host_env("envpool:CartPole-v1", 2, 0, batch_size=3)


def test_environment_i_is_seeded_from_the_run_seed_and_i_alone():
    # A pool of 5 seeds its first 3 environments as a pool of 3 does (an
    # evaluation pool repeats training's first environments' seeds).
    assert env_seeds(7, 5)[:3] == env_seeds(7, 3)
    assert len(set(env_seeds(7, 5))) == 5
    assert all(0 <= s < 2**31 for s in env_seeds(7, 5))  # a C++ int's range


def test_an_action_box_with_one_infinite_bound_is_refused():
    space = gym.spaces.Box(
        np.array([-1.0, -1.0], np.float32), np.array([1.0, np.inf], np.float32)
    )
    with pytest.raises(ConfigError, match="bounds that are not finite"):
        space_spec(space, "gymnasium:X")


class _Worker:
    """A stand-in subprocess of an async pool: alive or not; records calls."""

    def __init__(self, alive: bool):
        self.alive, self.calls = alive, []

    def is_alive(self):
        return self.alive

    def kill(self):
        self.calls.append("kill")
        self.alive = False

    def join(self, timeout):
        self.calls.append(("join", timeout))


def test_an_async_pool_whose_close_fails_kills_its_live_workers():
    # Gymnasium's close raised (EOFError reading a dead worker's pipe): the
    # live workers are killed (SIGKILL: a worker may ignore SIGTERM), every
    # worker joined, pipes closed, and the pool marked closed so that its
    # __del__ does not retry.
    from purejaxdrl.env.host.gymnasium import GymnasiumEnv
    from purejaxdrl.env.host.gymnasium_workers import CLOSE_TIMEOUT_S

    live, dead = _Worker(alive=True), _Worker(alive=False)
    pipe = types.SimpleNamespace(closed=False)
    pipe.close = lambda: setattr(pipe, "closed", True)
    pool = types.SimpleNamespace(
        processes=[live, dead], parent_pipes=[pipe, None], closed=False
    )

    def close(timeout):
        assert timeout == CLOSE_TIMEOUT_S
        raise EOFError

    env = object.__new__(GymnasiumEnv)
    env.sync = False
    env.vec = types.SimpleNamespace(close=close, unwrapped=pool)
    env.close()
    assert live.calls == ["kill", ("join", CLOSE_TIMEOUT_S)]
    assert dead.calls == [("join", CLOSE_TIMEOUT_S)]
    assert pipe.closed and pool.closed
