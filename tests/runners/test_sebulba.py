"""The actor-learner runner on host environments: learning, determinism, faults."""

import itertools
import re

import jax
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.runners.placement import HostConfig, split_devices
from purejaxdrl.runners.sebulba import HostEnvError

pytest.importorskip("envpool")
gym = pytest.importorskip("gymnasium")


def _config(env_id, algo="impala", **overrides):
    config = pjd.load_preset("cartpole_envpool", algo).config
    return pjd.apply_overrides(
        config, {"env": {"id": env_id}, "devices": 1, "num_logs": 5, **overrides}
    )


def _assert_lag_bounded(record, deterministic=False):
    # Actors act behind the learner by at most what the queue allows: one
    # batch queued, one being built, and its first step acted at the end of
    # the batch before (with that batch's version). Deterministic: batch k
    # acts with version k - 1, its first step with k - 2's at most.
    most = 2 if deterministic else 3
    assert 0 <= record["lag/mean"] <= record["lag/max"] <= most, record


# Each algorithm on each library; on 2 fake devices (actors on one, the
# learner on the other) each algorithm once more, on the other library (IMPALA
# on gymnasium learns there in two processes: test_host_multiprocess.py, and
# its one-process placement is checked below on a short run). The case the
# suite runs learns in deterministic mode: free-running actors lag by what
# the machine's load allows, and under a CI machine's load one run in many
# scored 413; the deterministic path is an idle machine's (lag 1.3 on
# average, at most 2) and fails alike every time. The slow cases, the lag
# bound below and test_host_multiprocess.py learn free-running.
@pytest.mark.parametrize(
    ("algo", "env_id", "devices"),
    [
        ("impala", "envpool:CartPole-v1", 1),
        pytest.param("impala", "gymnasium:CartPole-v1", 1, marks=pytest.mark.slow),
        pytest.param("ppo", "envpool:CartPole-v1", 1, marks=pytest.mark.slow),
        pytest.param("ppo", "gymnasium:CartPole-v1", 1, marks=pytest.mark.slow),
        pytest.param("impala", "gymnasium:CartPole-v1", 2, marks=pytest.mark.slow),
        pytest.param("ppo", "envpool:CartPole-v1", 2, marks=pytest.mark.slow),
    ],
)
def test_learns_cartpole_on_host_environments(algo, env_id, devices, request):
    slow = request.node.get_closest_marker("slow") is not None
    host = {} if slow else {"host": {"deterministic": True}}
    result = pjd.train(_config(env_id, algo, devices=devices, **host))
    # Every chunk's return: a late dip tells apart from a failure to learn.
    returns = [round(r.get("episode/mean_return", float("nan")), 1)
               for r in result.history]  # fmt: skip
    assert result.mean_return >= 475, (returns, result.history[-1])
    assert result.num_devices == 1  # the learner's
    _assert_lag_bounded(result.history[-1], deterministic=not slow)


def test_free_running_actors_on_their_own_device_stay_within_the_queue():
    # Actors on device 0, the learner on device 1, in one process: parameters
    # cross devices to the actors after every update, or the lag grows past
    # the queue's bound. 40 updates in 5 chunks; learning is the cases above.
    result = pjd.train(
        _config("gymnasium:CartPole-v1", devices=2, total_steps=32 * 16 * 40)
    )
    assert result.num_devices == 1  # the learner's
    assert result.updates == 40
    for record in result.history:
        _assert_lag_bounded(record)


def _params(result):
    return jax.tree.leaves(jax.device_get(result.state.agent.params))


def test_deterministic_mode_repeats_exactly_and_on_a_separate_learner_device():
    overrides = {"total_steps": 32 * 16 * 12, "host": {"deterministic": True}}
    one = pjd.train(_config("envpool:CartPole-v1", **overrides))
    again = pjd.train(_config("envpool:CartPole-v1", **overrides))
    # 2 devices: actor on one, learner on the other.
    two = pjd.train(_config("envpool:CartPole-v1", devices=2, **overrides))
    for a, b, c in zip(_params(one), _params(again), _params(two), strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    # Batch k's new steps acted with version k - 1; the transitions columns
    # carried over (acted while environments that had reset steps caught up)
    # are older: with T=16, over 12 updates, by one batch at most.
    for record in one.history[1:]:
        assert 1.0 < record["lag/mean"] < 1.5 and record["lag/max"] == 2.0
    assert one.num_devices == 1 and two.num_devices == 1  # the learner's


class Exploding(gym.Env):
    """CartPole's spaces; raises on its 100th step."""

    def __init__(self):
        inner = gym.make("CartPole-v1")
        self.observation_space, self.action_space = (
            inner.observation_space,
            inner.action_space,
        )
        self.steps = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(4, np.float32), {}

    def step(self, action):
        self.steps += 1
        if self.steps == 100:
            raise RuntimeError("simulator lost its licence server")
        return np.zeros(4, np.float32), 1.0, False, False, {}


def test_an_environment_that_raises_stops_the_run_with_its_error(tmp_path):
    gym.register("purejaxdrl-test/Exploding-v0", entry_point=Exploding)
    config = _config(
        "gymnasium:purejaxdrl-test/Exploding-v0",
        total_steps=32 * 16 * 10,
        num_logs=10,
        run_dir=str(tmp_path),
    )
    with pytest.raises(HostEnvError) as raised:
        pjd.train(config, write_files=True)
    # Its step 100 is in the 7th batch: checkpoints of updates 1-5 or 6 exist.
    message = str(raised.value)
    assert "actor 0's environments raised RuntimeError: simulator lost its" in message
    assert re.search(r"the last good checkpoint is update [56] in \S+", message)
    assert "purejaxdrl train --resume" in message


def test_a_policy_that_raises_is_named_as_the_policy(monkeypatch):
    # Not blamed on the environments: a user's network, say, raised.
    from purejaxdrl.runners import sebulba

    real = sebulba.make_policy

    def failing(agent, platform):
        policy, calls = real(agent, platform), itertools.count()

        def call(*args):
            if next(calls) == 20:
                raise FloatingPointError("a network of the user's")
            return policy(*args)

        return call

    monkeypatch.setattr(sebulba, "make_policy", failing)
    config = _config("gymnasium:CartPole-v1", total_steps=32 * 16 * 4)
    with pytest.raises(HostEnvError, match="actor 0's policy raised FloatingPointE"):
        pjd.train(config)


def test_device_split_defaults_and_errors():
    devices = jax.local_devices()
    one = devices[:1]
    assert split_devices(one, HostConfig()) == (one, one)
    assert split_devices(devices[:4], HostConfig()) == (devices[:1], devices[1:4])
    config = HostConfig(actor_devices=2, learner_devices=1)
    assert split_devices(devices[:4], config) == (devices[:2], devices[2:3])
    with pytest.raises(ValueError, match="do not fit 2 local devices"):
        split_devices(devices[:2], HostConfig(actor_devices=2))


def test_replay_algorithms_are_refused_with_the_ones_that_run():
    config = pjd.load_preset("cartpole", "dqn").config
    config = pjd.apply_overrides(
        config, {"env": {"id": "envpool:CartPole-v1"}, "devices": 1}
    )
    with pytest.raises(ValueError, match=r"keeps none \(ppo, impala"):
        pjd.train(config)


def test_the_learners_compile_counts_as_compilation_not_training():
    # The update compiles on the first batch (its shapes come from the
    # actors): timed as compilation, once, so steps/s leaves it out.
    config = _config("envpool:CartPole-v1", total_steps=32 * 16 * 3)
    exp = pjd.training.make_experiment(config)
    key = jax.random.key(0)
    state = exp.runner.init(key)
    try:
        with exp.runner.session(state, key, 0):
            state, _ = exp.runner.chunk(1)(state)
            first = exp.runner.late_compile_seconds
            exp.runner.chunk(2)(state)
    finally:
        exp.runner.close()
    assert first > 0 and exp.runner.late_compile_seconds == first


def test_the_progress_line_says_the_learner_compiles_on_its_first_batch(capsys):
    # Not "compiling… / training… (compiling took 0s)" before a first chunk
    # that compiles the learner: the run's compile time is mostly there.
    config = _config("envpool:CartPole-v1", total_steps=32 * 16 * 2, num_logs=2)
    pjd.train(config, console=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "impala envpool:CartPole-v1: preparing…", lines
    assert lines[1].startswith(
        "impala envpool:CartPole-v1: training, the learner compiling on its "
        "first batch… (preparing took "
    ), lines
