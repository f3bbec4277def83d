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
        "made (their constructor or first reset)"
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


class Stepping(gym.Env):
    """Resets fine; steps a NaN observation, or Gym's old 4 values."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, nan=False):
        self.nan = nan

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        if self.nan:
            return np.full(1, np.nan, np.float32), 1.0, False, False, {}
        return np.zeros(1, np.float32), 1.0, False, {}


gym.register("BuildErrors-NaN-v0", entry_point=Stepping, kwargs={"nan": True})
gym.register("BuildErrors-Old4-v0", entry_point=Stepping)


@pytest.mark.timeout(300)
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Gymnasium's, on 4 values
@pytest.mark.filterwarnings("ignore::UserWarning")  # Gymnasium's checker, on the NaN
@pytest.mark.parametrize(
    "name, public, status",
    [
        ("BuildErrors-NaN-v0", pjd.NonFiniteError, 1),
        ("BuildErrors-Old4-v0", pjd.ConfigError, 2),
    ],  # fmt: skip
)
def test_python_catches_a_host_envs_nan_and_api_break_as_a_device_envs(
    capsys, name, public, status
):
    # hr15 #8: `except pjd.NonFiniteError` / `except pjd.ConfigError` catch
    # them, and they are pjd.HostEnvErrors. The command's line names no class
    # of purejaxdrl's own (NonFiniteStepError): its words say what happened.
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole_envpool").config,
        {"env": {"id": f"gymnasium:{name}"}, "num_envs": 4, "unroll_length": 8,
         "total_steps": 32, "num_logs": 1, "devices": 1},
    )  # fmt: skip
    with pytest.raises(public) as raised:
        pjd.train(config, console=False)
    assert isinstance(raised.value, pjd.HostEnvError)
    assert str(raised.value).startswith("actor 0's environments raised ")
    assert cli.main(["train", *TINY, "--env.id", f"gymnasium:{name}"]) == status
    (line,) = errors(capsys.readouterr().err)
    if public is pjd.NonFiniteError:
        assert line.startswith(
            f"purejaxdrl: error: actor 0's environments: "
            f"gymnasium:{name} returned a non-finite observation (nan)"
        )
        assert "NonFiniteStepError" not in line, line
    else:
        assert line.startswith(f"purejaxdrl: error: gymnasium:{name}: Gymnasium ")


class Breaking(Broken):
    """Resets and steps fine until `BREAK` says to raise in its reset."""

    def reset(self, *, seed=None, options=None):
        if BREAK:
            raise RuntimeError("boom in reset")
        return np.zeros(1, np.float32), {}

    def step(self, action):
        return np.zeros(1, np.float32), 1.0, True, False, {}


BREAK: list[bool] = []
gym.register("BuildErrors-Later-v0", entry_point=Breaking, kwargs={"where": ""})


@pytest.mark.timeout(300)
def test_eval_and_evaluate_policy_say_it_as_train_does(capsys, tmp_path):
    # hr15 #1's form where a trained run's environments are made again: eval
    # of its folder and of its exported policy, and evaluate_policy.
    env_id = "gymnasium:BuildErrors-Later-v0"
    argv = [*TINY, "--env.id", env_id, "--run-dir", str(tmp_path / "runs")]
    assert cli.main(["train", *[a for a in argv if a != "--no-files"]]) == 0
    (run,) = (tmp_path / "runs").iterdir()
    assert cli.main(["export", str(run), "--out", str(tmp_path / "policy")]) == 0
    capsys.readouterr()
    BREAK.append(True)
    try:
        for folder in (run, tmp_path / "policy"):
            assert cli.main(["eval", str(folder)]) == 1
            err = capsys.readouterr().err
            assert ", in reset\n" in err and "cli/eval.py" not in err, err
            (line,) = errors(err)
            assert line == (
                f"purejaxdrl: error: {env_id}'s environments raised RuntimeError: "
                "boom in reset; while being made (their constructor or first reset)"
            )
            assert err.rstrip("\n").splitlines()[-1] == line
        with pytest.raises(HostEnvError, match="boom in reset") as raised:
            pjd.evaluate_policy(str(tmp_path / "policy"))
        assert isinstance(raised.value.__cause__, RuntimeError)
    finally:
        BREAK.clear()


class SecondBroken(Broken):
    """Builds for its first pool, then raises in every later constructor."""

    made = 0

    def __init__(self):
        SecondBroken.made += 1
        super().__init__("init" if SecondBroken.made > 1 else "")

    def reset(self, *, seed=None, options=None):
        super(Broken, self).reset(seed=seed)
        return np.zeros(1, np.float32), {}


gym.register("BuildErrors-Second-v0", entry_point=SecondBroken)


def _pools_closed(monkeypatch, env_id, threads):
    """The pools `make_host_envs` closed when one of `threads` raised as made."""
    from purejaxdrl.env.host.gymnasium import GymnasiumEnv
    from purejaxdrl.runners.placement import make_host_envs

    closed, close = [], GymnasiumEnv.close
    monkeypatch.setattr(GymnasiumEnv, "close", lambda s: closed.append(s) or close(s))
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole_envpool").config,
        {
            "env": {"id": env_id},
            "num_envs": threads,
            "host": {"actor_threads": threads},
        },
    )
    with pytest.raises(HostEnvError, match="while being made"):
        make_host_envs(config, threads, 0)
    return closed


def test_the_pools_made_before_a_constructor_raises_are_closed(monkeypatch):
    SecondBroken.made = 0
    # The first thread's pool was made (and reset fine); the second's raised.
    (pool,) = _pools_closed(monkeypatch, "gymnasium:BuildErrors-Second-v0", 2)
    assert pool.num_envs == 1 and SecondBroken.made == 2


def test_a_pool_whose_first_reset_raises_closes_itself(monkeypatch):
    # A RuntimeError of the user's, not a ConfigError: closed all the same.
    (pool,) = _pools_closed(monkeypatch, "gymnasium:BuildErrors-Reset-v0", 1)
    assert "BuildErrors-Reset-v0" in pool.name
