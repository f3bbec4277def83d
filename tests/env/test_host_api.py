"""A user's Gymnasium environment that breaks Gymnasium's API, or returns NaN.

Each mistake ends in one line naming `gymnasium:<id>`, the method, the rule and
the fix, when the environment is built (`env/host/api_check.py`), not as an
error from inside Gymnasium's vector code; a NaN observation or reward names
the environment when it is returned, not updates later as a learner metric.
"""

import numpy as np
import pytest

from purejaxdrl.cli import raised_here
from purejaxdrl.config import ConfigError
from purejaxdrl.env.host import make_host_env
from purejaxdrl.env.host.base import NonFiniteStepError

gym = pytest.importorskip("gymnasium")


class Broken(gym.Env):
    """A Box(1) environment that makes the mistake `mode` names."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, mode="ok"):
        self.mode, self.t = mode, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        obs = np.zeros(1, np.float32)
        if self.mode == "reset_obs_only":
            return obs
        if self.mode == "reset_info_list":
            return obs, []
        return obs, {}

    def step(self, action):
        self.t += 1
        obs, reward = np.zeros(1, np.float32), 1.0
        late = self.t >= 2  # after the step the API check takes
        if self.mode == "shape" or (self.mode == "late_shape" and late):
            obs = np.zeros(2, np.float32)
        if self.mode == "nan_obs" and late:
            obs = np.full(1, np.nan, np.float32)
        if self.mode == "inf_reward" and late:
            reward = np.inf
        if self.mode == "reward_array":
            reward = np.array([1.0])
        if self.mode == "four_values":
            return obs, reward, False, {}
        if self.mode == "done_array":
            return obs, reward, np.array([False]), False, {}
        return obs, reward, False, False, {}


MODES = [
    "ok",
    "reset_obs_only",
    "reset_info_list",
    "shape",
    "late_shape",
    "nan_obs",
    "inf_reward",
    "reward_array",
    "four_values",
    "done_array",
]
for _mode in MODES:
    gym.register(f"ApiProbe-{_mode}-v0", entry_point=Broken, kwargs={"mode": _mode})


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("reset_obs_only", r"reset returned an array of shape \(1,\) .*, not \(obs, "
         r"info\); Gymnasium's reset must return both: `return obs, \{\}`"),
        ("reset_info_list", r"reset's info is a list of 0 values, not a dict"),
        ("shape", r"step's observation has shape \(2,\), but its observation_space "
         r"Box\(0.0, 1.0, \(1,\), float32\) has shape \(1,\); return observations"),
        ("reward_array", r"step's reward is an array of shape \(1,\) \(float64\), "
         r"not a number; return one number per step, e.g. `float\(reward\)`"),
        ("four_values", r"step returned 4 values, Gym's old \(obs, reward, done, "
         r"info\); Gymnasium's step returns 5"),
        ("done_array", r"step's terminated is an array of shape \(1,\) \(bool\), "
         r"not a bool"),
    ],
)  # fmt: skip
def test_api_mistakes_are_one_line_when_the_environment_is_built(mode, message):
    with pytest.raises(ConfigError, match=rf"^gymnasium:ApiProbe-{mode}-v0: ") as e:
        make_host_env(f"gymnasium:ApiProbe-{mode}-v0", 2, 0)
    assert len(str(e.value).splitlines()) == 1
    assert e.match(message)


def test_a_well_made_environment_passes_and_its_first_reset_is_the_pools():
    env = make_host_env("gymnasium:ApiProbe-ok-v0", 2, 0)
    step = env.step(np.zeros(2, np.int32))
    assert step.reward.tolist() == [1.0, 1.0]
    env.close()


@pytest.mark.parametrize(
    ("mode", "what"), [("nan_obs", "observation (nan)"), ("inf_reward", "reward (inf)")]
)
def test_a_non_finite_step_names_the_environment(mode, what):
    env = make_host_env(f"gymnasium:ApiProbe-{mode}-v0", 3, 0)
    env.reset()
    env.step(np.zeros(3, np.int32))  # its step 1 is finite
    with pytest.raises(NonFiniteStepError) as e:
        env.step(np.zeros(3, np.int32))
    assert str(e.value).startswith(
        f"gymnasium:ApiProbe-{mode}-v0 returned a non-finite {what} in environment "
        "0 (3 of the batch's 3); "
    )
    assert raised_here(e.value)  # purejaxdrl's check: one line, no traceback
    env.close()


def test_a_libraries_error_from_a_users_bug_is_not_taken_for_purejaxdrls_check():
    # A shape that changes after the API check's step fails in Gymnasium's
    # vector code, called by purejaxdrl's adapter: the library raised it, so
    # the command shows where rather than one line as if purejaxdrl checked.
    env = make_host_env("gymnasium:ApiProbe-late_shape-v0", 2, 0)
    env.reset()
    env.step(np.zeros(2, np.int32))
    with pytest.raises(ValueError) as e:
        env.step(np.zeros(2, np.int32))
    assert not raised_here(e.value)
    env.close()
