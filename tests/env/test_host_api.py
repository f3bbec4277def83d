"""A user's Gymnasium environment that breaks Gymnasium's API, or returns NaN.

Each mistake ends in one line naming `gymnasium:<id>`, the method, the rule and
the fix (`env/host/api_check.py`), not as an error from inside Gymnasium's
vector code; a bug in the environment's own code keeps its traceback; a NaN
observation or reward names the environment when it is returned, not updates
later as a learner metric.
"""

import os
import pathlib
import warnings

import gymnasium
import numpy
import numpy as np
import pytest

from purejaxdrl.cli import raised_here
from purejaxdrl.config import ConfigError
from purejaxdrl.env.host import make_host_env
from purejaxdrl.env.host.api_check import _innermost_is_gymnasium
from purejaxdrl.env.host.base import NonFiniteStepError

gym = pytest.importorskip("gymnasium")
GUIDE = pathlib.Path(__file__).parents[2] / "docs" / "guide" / "environments.md"


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
        late = self.t >= 2
        if self.mode == "bug":
            raise KeyError("a bug in the environment's own step")
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
    "bug",
]
for _mode in MODES:
    gym.register(f"ApiProbe-{_mode}-v0", entry_point=Broken, kwargs={"mode": _mode})


class OldGymReset(Broken):
    """reset written as old Gym tutorials write it: no seed=, no options=."""

    def reset(self):
        return np.zeros(1, np.float32), {}


class SeededReset(Broken):
    """reset whose seed defaults to 0, which Gymnasium's checker warns about."""

    def reset(self, *, seed=0, options=None):
        return super().reset(seed=seed, options=options)


class NoActionStep(Broken):
    """step written without its action."""

    def step(self):
        return super().step(0)


class PairResetObsOnly(Broken):
    """reset returning a 2-entry observation alone: it unpacks as (obs, info)."""

    observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32)


gym.register("ApiProbe-old_reset-v0", entry_point=OldGymReset)
gym.register("ApiProbe-pair_reset_obs_only-v0", entry_point=PairResetObsOnly)
gym.register("ApiProbe-no_action_step-v0", entry_point=NoActionStep)
gym.register("ApiProbe-seeded_reset-v0", entry_point=SeededReset)


RESET = r"Gymnasium's reset returns \(obs, info\), info a dict"
STEP = r"Gymnasium's step returns the 5 values \(obs, reward, terminated, trunc"


@pytest.mark.parametrize(
    ("mode", "method", "error", "rule"),
    [
        ("reset_obs_only", "reset", "ValueError: not enough values to unpack", RESET),
        ("reset_info_list", "reset", "AssertionError: The second element", RESET),
        # Its 2 entries unpack as (obs, info): an info without .items (was a
        # 51-line traceback from Gymnasium's vector code).
        ("pair_reset_obs_only", "reset", "AttributeError: 'numpy.float32'", RESET),
        ("shape", "step", "ValueError: Output array is the wrong shape", STEP),
        ("late_shape", "step", "ValueError: Output array is the wrong shape", STEP),
        ("reward_array", "step", "ValueError: setting an array element", STEP),
        ("four_values", "step", r"ValueError: not enough values to unp", STEP),
    ],
)  # fmt: skip
def test_api_mistakes_are_one_line_naming_the_method_and_its_rule(
    mode, method, error, rule
):
    with pytest.raises(ConfigError) as e:
        env = make_host_env(f"gymnasium:ApiProbe-{mode}-v0", 2, 0)
        for _ in range(3):  # late_shape breaks on its second step
            env.step(np.zeros(2, np.int32))
    assert len(str(e.value).splitlines()) == 1
    assert str(e.value).startswith(
        f"gymnasium:ApiProbe-{mode}-v0: Gymnasium could not take what its "
        f"{method} returned ("
    )
    assert e.match(error) and e.match(rule) and e.match("observation_space Box")


@pytest.mark.parametrize(
    "mode", ["reset_obs_only", "shape", "reward_array", "four_values"]
)
def test_a_refused_reset_or_step_shows_no_passive_checker_warnings(mode):
    # Gymnasium's checker warned 2-4 lines (raw ANSI escapes) before the line.
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(ConfigError):
            env = make_host_env(f"gymnasium:ApiProbe-{mode}-v0", 2, 0)
            env.step(np.zeros(2, np.int32))
    assert [str(w.message) for w in seen if "WARN" in str(w.message)] == []


def test_a_reset_gymnasium_cannot_call_names_the_signature_it_calls():
    # It was the return-value rule ("check what reset returns"), after four
    # lines of Gymnasium's warnings about reset's signature in ANSI colours.
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(ConfigError) as e:
            make_host_env("gymnasium:ApiProbe-old_reset-v0", 2, 0)
    assert str(e.value) == (
        "gymnasium:ApiProbe-old_reset-v0: Gymnasium could not call its reset "
        "(TypeError: OldGymReset.reset() got an unexpected keyword argument "
        "'seed'); Gymnasium calls reset(seed=..., options=...): define it as "
        "def reset(self, *, seed=None, options=None) and call "
        "super().reset(seed=seed) in it."
    )
    assert not [w for w in seen if "Env.reset` can be passed" in str(w.message)]
    # Only those warnings are kept out: the checker's others still show.
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        make_host_env("gymnasium:ApiProbe-seeded_reset-v0", 1, 0).close()
    assert [w for w in seen if "default seed argument" in str(w.message)]
    env = make_host_env("gymnasium:ApiProbe-no_action_step-v0", 1, 0)
    with pytest.raises(ConfigError) as e:
        env.step(np.zeros(1, np.int32))
    assert str(e.value) == (
        "gymnasium:ApiProbe-no_action_step-v0: Gymnasium could not call its step "
        "(TypeError: NoActionStep.step() takes 1 positional argument but 2 were "
        "given); Gymnasium calls step(action): define it as def step(self, "
        "action)."
    )
    env.close()


def test_a_bug_in_the_environments_own_code_keeps_its_traceback():
    env = make_host_env("gymnasium:ApiProbe-bug-v0", 2, 0)
    with pytest.raises(KeyError, match="a bug in the environment's own step") as e:
        env.step(np.zeros(2, np.int32))
    assert e.traceback[-1].frame.code.name == "step"  # the user's line
    assert not raised_here(e.value)
    env.close()


def test_what_gymnasium_itself_accepts_is_accepted():
    # A terminated flag as a 1-element array: Gymnasium's vector env takes it,
    # so purejaxdrl does too (no check stricter than Gymnasium's).
    env = make_host_env("gymnasium:ApiProbe-done_array-v0", 2, 0)
    assert env.step(np.zeros(2, np.int32)).terminated.tolist() == [False, False]
    env.close()


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


def test_the_host_guide_names_the_algorithms_that_clip_rewards():
    # The guide says which host-runner algorithms take `--<algo>.reward-clip`;
    # naming one without the field sends users to an unknown-option error.
    import dataclasses
    import re

    from purejaxdrl.agents import registry

    clipping = sorted(
        record.name.upper()
        for record in registry.algorithms()
        if record.name in registry.without_replay()
        and "reward_clip" in {f.name for f in dataclasses.fields(record.config_type)}
    )
    guide = GUIDE.read_text().replace("\n", " ")
    named = re.search(r"reward-clip 1` \(([^)]*) have it", guide)
    assert named, "the guide no longer names the algorithms with reward_clip"
    assert sorted(re.findall(r"[A-Z][A-Z0-9]+", named.group(1))) == clipping


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("mode", "method", "error", "rule"),
    [
        ("late_shape", "step", r"ValueError: could not broadcast input array from "
         r"shape \(2,\) into shape \(1,\)", STEP),
        ("four_values", "step", "ValueError: not enough values to unpack", STEP),
        ("reset_obs_only", "reset", "ValueError: not enough values to unpack", RESET),
    ],
)  # fmt: skip
def test_an_async_pools_api_mistake_is_the_same_one_line(mode, method, error, rule):
    # hr17 #1: a worker's break was Gymnasium's re-raise, after its traceback
    # warned in ANSI colours: 39 lines, exit 1, no id and no rule.
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(ConfigError) as e:
            env = make_host_env(
                f"gymnasium:ApiProbe-{mode}-v0", 2, 0, vectorization_mode="async"
            )
            try:
                for _ in range(3):  # late_shape breaks on its second step
                    env.step(np.zeros(2, np.int32))
            finally:
                env.close()
    assert len(str(e.value).splitlines()) == 1
    assert str(e.value).startswith(
        f"gymnasium:ApiProbe-{mode}-v0: Gymnasium could not take what its "
        f"{method} returned ("
    )
    assert e.match(error) and e.match(rule) and e.match("observation_space Box")
    assert not [w for w in seen if "ERROR" in str(w.message)]


@pytest.mark.timeout(120)
def test_an_async_pools_own_bug_keeps_its_error_and_worker_traceback():
    env = make_host_env("gymnasium:ApiProbe-bug-v0", 2, 0, vectorization_mode="async")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(KeyError, match="a bug in the environment's own step"):
            env.step(np.zeros(2, np.int32))
    env.close()
    said = "\n".join(str(w.message) for w in seen)
    assert "in step\n" in said and "Traceback" in said  # where the worker raised


# A worker's traceback whose innermost frames are numpy's (Gymnasium's
# shared-memory copy calling into numpy) is judged by the frame past them:
# Gymnasium's is an API break, the environment's own is its bug.
def _trace(*paths):
    frames = "".join(f'  File "{p}", line 1, in f\n    x\n' for p in paths)
    return "Traceback (most recent call last):\n" + frames + "ValueError: no\n"


def test_numpy_frames_are_passed_over_to_the_frame_that_called_them():
    gym = os.path.join(os.path.dirname(gymnasium.__file__), "vector", "utils.py")
    np_file = os.path.join(os.path.dirname(numpy.__file__), "core", "shape_base.py")
    own = "/home/user/my_env.py"
    assert _innermost_is_gymnasium(_trace(own, gym, np_file))
    assert not _innermost_is_gymnasium(_trace(gym, own, np_file))
    assert not _innermost_is_gymnasium(_trace(np_file))
