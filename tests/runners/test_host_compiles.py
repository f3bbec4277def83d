"""A host run's steps/s times no compile but those it takes out (finding HE11-4).

The learner's update compiles on its first batch and each actor's policy on its
first call: both are timed and taken out (`late_compile_seconds`). Anything
else that compiles inside the session (the keys' eager split and fold_in, the
actors' first carries) would be counted as training time.
"""

import contextlib
import logging
import re

import jax
import pytest

import purejaxdrl as pjd
from purejaxdrl.runners.sebulba import SebulbaRunner

pytest.importorskip("gymnasium")
pytestmark = pytest.mark.timeout(300)

COMPILING = re.compile(r"Compiling (jit\([^)]*\)|[\w.<>]+)")


class _Compiles(logging.Handler):
    """JAX's compile log lines while `timed`, as (thread name, program name)."""

    def __init__(self):
        super().__init__(logging.WARNING)  # jax.log_compiles's level
        self.timed, self.seen = False, []

    def emit(self, record):
        found = COMPILING.match(record.getMessage())
        if found and self.timed:
            self.seen.append((record.threadName, found[1]))


@pytest.mark.parametrize("core", ["none", "gru"])
def test_the_timed_session_compiles_only_the_update_and_the_policies(core, monkeypatch):
    config = pjd.load_preset("cartpole_envpool", "ppo").config
    config = pjd.apply_overrides(
        config,
        {
            "devices": 1,
            "env": {"id": "gymnasium:CartPole-v1"},
            "num_envs": 4,
            "total_steps": 4 * 16 * 3,
            "unroll_length": 16,
            "eval": {"episodes": 0},
            "network": {"core": core},
        },
    )
    compiles = _Compiles()
    real = SebulbaRunner.session

    def timed_session(self, *args):
        # The chunk loop's clock starts before the session: all of it is timed.
        compiles.timed = True
        try:
            with real(self, *args):
                yield
        finally:
            compiles.timed = False

    monkeypatch.setattr(
        SebulbaRunner, "session", contextlib.contextmanager(timed_session)
    )
    logger = logging.getLogger("jax")
    logger.addHandler(compiles)
    try:
        with jax.log_compiles(True):
            result = pjd.train(config, write_files=False, console=False)
    finally:
        logger.removeHandler(compiles)
    assert result.updates == 3
    main = [name for thread, name in compiles.seen if thread == "MainThread"]
    actors = {name for thread, name in compiles.seen if thread != "MainThread"}
    # The update once; in the actor threads, at most the policy.
    assert main == ["jit(update)"], compiles.seen
    assert actors <= {"jit(policy)"}, compiles.seen
