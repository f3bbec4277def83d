"""Gymnasium's async pools: an environment that raises never hangs the close."""

import sys
import time
import warnings

import numpy as np
import pytest

from purejaxdrl.env.host import make_host_env

pytest.importorskip("gymnasium")

MODULE = """
import gymnasium as gym
from gymnasium.envs.classic_control.cartpole import CartPoleEnv


class Raising(CartPoleEnv):
    steps = 0

    def step(self, action):
        Raising.steps += 1
        if Raising.steps > 5:
            raise RuntimeError({message!r})
        return super().step(action)


gym.register("{name}", entry_point=Raising)
"""


# A `%` in a worker's traceback breaks Gymnasium's own error report (its
# logger formats the traceback with `%`), which leaves the pool mid-step: a
# plain close then read the dead workers' pipes.
@pytest.mark.timeout(120)
@pytest.mark.parametrize("message", ["simulator lost", "simulator 100% lost"])
def test_an_async_pool_whose_environment_raises_closes_promptly(
    message, tmp_path, monkeypatch
):
    name = f"Raising{len(message)}-v0"
    module = f"raising_env_{len(message)}"
    (tmp_path / f"{module}.py").write_text(MODULE.format(message=message, name=name))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    env = make_host_env(f"gymnasium:{module}:{name}", 3, 0, vectorization_mode="async")
    env.reset()
    with pytest.raises(Exception) as raised:
        for _ in range(20):
            env.step(np.zeros(3, np.int64))
    # Its own error, "%" or not (hr17 #1: purejaxdrl reports workers' errors).
    assert raised.type is RuntimeError and str(raised.value) == message
    start = time.monotonic()
    env.close()
    assert time.monotonic() - start < 10  # it hung forever before
    assert not any(p.is_alive() for p in env.vec.unwrapped.processes)


# After a worker's error the pool is no longer mid-step (as Gymnasium's own
# `_raise_if_errors` leaves it): its close waits on no pending step, with no
# "pending call" warning, and closes each live worker by its pipe.
pytest.importorskip("gymnasium")


@pytest.mark.timeout(120)
def test_a_pool_whose_worker_raised_is_not_left_mid_step(tmp_path, monkeypatch):
    name, module = "RaisingIdle-v0", "raising_env_idle"
    (tmp_path / f"{module}.py").write_text(MODULE.format(message="lost", name=name))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    env = make_host_env(f"gymnasium:{module}:{name}", 3, 0, vectorization_mode="async")
    env.reset()
    with pytest.raises(RuntimeError, match="^lost$"):
        for _ in range(20):
            env.step(np.zeros(3, np.int64))
    assert env.vec.unwrapped._state.name == "DEFAULT"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        start = time.monotonic()
        env.close()
    assert time.monotonic() - start < 10
    assert not [w for w in seen if "pending call" in str(w.message)], seen
