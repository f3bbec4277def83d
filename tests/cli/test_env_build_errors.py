"""An environment that raises while its pools are made: its traceback, one line.

A bug in a user's Gymnasium constructor or first `reset` is said as the same
bug in its `step` is (tests/cli/test_train_errors.py): the environment's
traceback, then one `purejaxdrl: error:` line, exit status 1 (hr15 #1).
"""

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.runners.sebulba import HostEnvError
from tests.cli.test_train_errors import TINY, errors

gym = pytest.importorskip("gymnasium")


class Broken(gym.Env):
    """Raises in its constructor or its reset, as `where` says."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, where="reset"):
        if where == "init":
            raise ValueError("cannot build")
        self.where = where

    def reset(self, *, seed=None, options=None):
        raise RuntimeError("boom in reset")

    def step(self, action):  # pragma: no cover - never reached
        raise AssertionError


gym.register("BuildErrors-Reset-v0", entry_point=Broken)
gym.register("BuildErrors-Init-v0", entry_point=Broken, kwargs={"where": "init"})


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "env_id, error, frame",
    [
        ("gymnasium:BuildErrors-Reset-v0", "RuntimeError: boom in reset", "reset"),
        ("gymnasium:BuildErrors-Init-v0", "ValueError: cannot build", "__init__"),
    ],
)
def test_an_env_raising_as_it_is_made_shows_its_traceback_then_one_line(
    capsys, env_id, error, frame
):
    assert cli.main(["train", *TINY, "--env.id", env_id]) == 1
    err = capsys.readouterr().err
    # The environment's frames, not the command's own.
    assert f", in {frame}\n" in err and "cli/train.py" not in err
    (line,) = errors(err)
    assert line == (
        f"purejaxdrl: error: {env_id}'s environments raised {error}; while being "
        "made (their constructor or first reset), before training"
    )
    assert err.rstrip("\n").splitlines()[-1] == line


@pytest.mark.timeout(300)
def test_from_python_it_is_the_env_error_caused_by_the_envs_own():
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole_envpool").config,
        {"env": {"id": "gymnasium:BuildErrors-Reset-v0"}, "num_envs": 4},
    )
    with pytest.raises(HostEnvError, match="boom in reset") as raised:
        pjd.train(config, console=False)
    assert isinstance(raised.value.__cause__, RuntimeError)
