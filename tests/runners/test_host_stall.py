"""A host environment that blocks: said in one line, and a stop still stops.

HE11 findings 1 and 2: the learner waited for a batch without looking at the
stop request (SIGINT / SIGTERM printed their line and nothing followed), and
a second Ctrl-C on an async pool waited for ever on Gymnasium's close.
"""

import importlib
import json
import os
import queue
import signal
import sys
import threading
import time
import types

import pytest

import purejaxdrl as pjd
from purejaxdrl.runners import host_waits, sebulba

pytest.importorskip("gymnasium")
pytestmark = pytest.mark.timeout(300)

UPDATES, ENVS, T = 8, 4, 8

# CartPole that blocks in `step` once its process has taken AT steps (every
# environment of a pool counts), touching "blocked.PID" beside this file.
MODULE = """
import os, pathlib, time
import gymnasium as gym
from gymnasium.envs.classic_control.cartpole import CartPoleEnv

AT = {at}
STEPS = [0]
HERE = pathlib.Path(__file__).parent


class Blocking(CartPoleEnv):
    def step(self, action):
        STEPS[0] += 1
        if STEPS[0] >= AT:
            (HERE / f"blocked.{{os.getpid()}}").touch()
            time.sleep(600)
        return super().step(action)


gym.register("{name}", entry_point=Blocking)
"""


def _config(tmp_path, monkeypatch, at, mode, num_logs):
    module = f"blocking_{tmp_path.name.replace('-', '_')}"
    name = f"Blocking{abs(hash(module))}-v0"
    (tmp_path / f"{module}.py").write_text(MODULE.format(at=at, name=name))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    config = pjd.load_preset("cartpole_envpool", "ppo").config
    return pjd.apply_overrides(
        config,
        {
            "devices": 1,
            "env": {
                "id": f"gymnasium:{module}:{name}",
                "options": {"vectorization_mode": mode},
            },
            "num_envs": ENVS,
            "unroll_length": T,
            "total_steps": ENVS * T * UPDATES,
            "num_logs": num_logs,
            "eval": {"episodes": 0},
            "run_dir": str(tmp_path / "runs"),
        },
    )


def _signal_when_blocked(tmp_path, monkeypatch, signals):
    """SIGINT once the stall notice is said while an environment blocks.

    Then again `signals - 1` times, half a second apart. Returns the lines
    said, and the times the signals were sent.
    """
    said, sent = [], []
    monkeypatch.setattr(host_waits, "STALL_NOTICE_S", 1.0)

    def send(left):
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)
        if left > 1:
            threading.Timer(0.5, send, (left - 1,)).start()

    def say(line):
        said.append(line)
        blocked = list(tmp_path.glob("blocked.*"))
        if line.startswith("no batch from actor") and blocked and not sent:
            send(signals)

    monkeypatch.setattr(host_waits, "say", say)
    return said, sent


# Chunks of one update: the stall is the first update of a chunk, which ends
# with none; one chunk: it ends with the updates it finished.
@pytest.mark.parametrize("num_logs", [UPDATES, 1])
def test_a_stop_while_an_environment_blocks_saves_the_updates_done(
    num_logs, tmp_path, monkeypatch
):
    # Blocks in batch 3 (the first two and resets take fewer steps).
    config = _config(tmp_path, monkeypatch, 2 * ENVS * T + 2, "sync", num_logs)
    monkeypatch.setattr(host_waits, "STOP_WAIT_S", 1.0)
    said, _ = _signal_when_blocked(tmp_path, monkeypatch, 1)
    result = pjd.train(config, write_files=True, console=False)
    assert result.stopped_by == "SIGINT"
    assert 0 < result.updates < UPDATES
    done = result.updates
    name = config.env.id
    # (A notice may come first, while the actor's policy compiles.)
    notice, stopping = said[-2:]
    assert notice == (
        f"no batch from actor 0 for 1 s: it is in {name}'s step; {name} may be "
        f"blocked (Ctrl-C stops the run with the {done:,} updates done)"
    )
    assert stopping.startswith(f"stopping: {name} has not returned a batch for ")
    assert stopping.endswith(
        f"(actor 0 is in {name}'s step); the run ends with the {done:,} updates done"
    )
    records = [json.loads(x) for x in (result.run_dir / "metrics.jsonl").open()]
    assert records[-1]["updates"] == done
    assert len({r["updates"] for r in records}) == len(records)  # no repeats
    assert (result.run_dir / "checkpoints" / str(done) / "purejaxdrl.sha256").exists()


def test_a_stop_while_the_first_batch_blocks_leaves_no_run(tmp_path, monkeypatch):
    # Before its first update: as a Ctrl-C while compiling (checkpoints.md),
    # not an untrained checkpoint 0 and a summary of "stopped after update 0".
    config = _config(tmp_path, monkeypatch, ENVS * T // 2, "sync", UPDATES)
    monkeypatch.setattr(host_waits, "STOP_WAIT_S", 1.0)
    said, _ = _signal_when_blocked(tmp_path, monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt, match="^stopped before the first update; "
                       "nothing was saved$"):  # fmt: skip
        pjd.train(config, write_files=True, console=False)
    assert said[-1].endswith("the run ends before its first update")
    assert not (tmp_path / "runs").exists()


def test_a_second_sigint_ends_an_async_run_whose_worker_blocks(tmp_path, monkeypatch):
    # Each worker process counts its own steps: blocks in its third batch.
    config = _config(tmp_path, monkeypatch, 2 * T + 2, "async", UPDATES)
    monkeypatch.setattr(host_waits, "STOP_WAIT_S", 600.0)  # only the 2nd ends it
    # A normal end's join, made long: an aborted run's actors get ABORT_JOIN_S.
    monkeypatch.setattr(sebulba, "JOIN_S", 60.0)
    said, sent = _signal_when_blocked(tmp_path, monkeypatch, 2)
    workers = []
    real = importlib.import_module("purejaxdrl.training.train").make_experiment

    def keeping_workers(*args, **kwargs):
        exp = real(*args, **kwargs)
        for env in exp.runner.envs:
            workers.extend(env.vec.unwrapped.processes)
        return exp

    recipe = importlib.import_module("purejaxdrl.training.train")
    monkeypatch.setattr(recipe, "make_experiment", keeping_workers)
    with pytest.raises(KeyboardInterrupt):
        pjd.train(config, write_files=True, console=False)
    ended = time.monotonic()
    assert len(sent) == 2, said
    # Before: for ever, in Gymnasium's join of a worker that ignored SIGTERM;
    # the actor blocked in its step is waited for ABORT_JOIN_S, not JOIN_S.
    assert ended - sent[1] < 30
    assert workers and not any(p.is_alive() for p in workers)


class _Actor(types.SimpleNamespace):
    pass


def test_next_batch_raises_an_actors_error_and_gives_up_only_on_a_stop(monkeypatch):
    monkeypatch.setattr(host_waits, "STOP_WAIT_S", 0.2)
    said = []
    monkeypatch.setattr(host_waits, "say", said.append)
    env = types.SimpleNamespace(name="gymnasium:Stuck-v0")
    idle = _Actor(error=None, doing="environments", env=env, first_call_seconds=1.0)
    q = queue.Queue()
    q.put("batch")
    assert host_waits.next_batch(0, q, [idle], 3, lambda: True) == "batch"
    with pytest.raises(host_waits.Abandoned):
        host_waits.next_batch(0, q, [idle], 3, lambda: True)
    assert said == [
        "stopping: gymnasium:Stuck-v0 has not returned a batch for 0 s (actor 0 "
        "is in gymnasium:Stuck-v0's step); the run ends with the 3 updates done"
    ]
    broken = _Actor(error=KeyError("x"), doing="policy", env=env, first_call_seconds=0)
    with pytest.raises(host_waits.HostEnvError, match="actor 1's policy raised KeyE"):
        host_waits.next_batch(0, q, [idle, broken], 3, None)


def test_the_stall_notice_says_whether_the_environment_or_the_policy_holds_it():
    env = types.SimpleNamespace(name="gymnasium:Stuck-v0")

    def notice(doing, first_call_seconds):
        actor = _Actor(error=None, doing=doing, env=env,
                       first_call_seconds=first_call_seconds)  # fmt: skip
        return host_waits.stall_notice(1, actor, 61.2, 1234)

    then = "(Ctrl-C stops the run with the 1,234 updates done)"
    head = "no batch from actor 1 for 61 s: it is in"
    assert notice("environments", 1.0) == (
        f"{head} gymnasium:Stuck-v0's step; gymnasium:Stuck-v0 may be blocked {then}"
    )
    # In its policy, the environment is not blamed: before the first call
    # returns, the policy compiles; after it, the policy is only named.
    assert notice("policy", 0.0) == (
        f"{head} its policy's first call, which compiles it {then}"
    )
    assert notice("policy", 1.0) == f"{head} its policy {then}"


@pytest.mark.parametrize(
    ("update", "done"),
    [
        (0, "before its first update"),
        (1, "with the 1 update done"),
        (2, "with the 2 updates done"),
    ],
)
def test_the_stall_and_stop_lines_count_the_updates_done_in_words(
    update, done, monkeypatch
):
    # hr21 #4: "with the 1 updates done", and "the 0 updates done".
    monkeypatch.setattr(host_waits, "STOP_WAIT_S", 0.0)
    said = []
    monkeypatch.setattr(host_waits, "say", said.append)
    env = types.SimpleNamespace(name="gymnasium:Stuck-v0")
    idle = _Actor(error=None, doing="environments", env=env, first_call_seconds=1.0)
    notice = host_waits.stall_notice(0, idle, 61.0, update)
    assert notice.endswith(f"may be blocked (Ctrl-C stops the run {done})")
    with pytest.raises(host_waits.Abandoned):
        host_waits.next_batch(0, queue.Queue(), [idle], update, lambda: True)
    assert said[-1].endswith(f"is in gymnasium:Stuck-v0's step); the run ends {done}")


def test_a_learner_of_several_processes_keeps_waiting_after_a_stop(monkeypatch):
    # Its learner giving up alone would hang the others in their collectives.
    monkeypatch.setattr(host_waits.jax, "process_count", lambda: 2)
    monkeypatch.setattr(host_waits, "STOP_WAIT_S", 0.2)
    monkeypatch.setattr(host_waits, "STALL_NOTICE_S", 0.2)
    said = []
    monkeypatch.setattr(host_waits, "say", said.append)
    env = types.SimpleNamespace(name="gymnasium:Stuck-v0")
    idle = _Actor(error=None, doing="environments", env=env, first_call_seconds=1.0)
    q = queue.Queue()
    timer = threading.Timer(1.0, q.put, ("batch",))  # 5 x STOP_WAIT_S later
    timer.start()
    try:
        assert host_waits.next_batch(0, q, [idle], 3, lambda: True) == "batch"
    finally:
        timer.cancel()
    [notice] = said  # the notice only: no "stopping: ..." line
    assert notice.startswith("no batch from actor 0 for ")
    assert notice.endswith(
        "s: it is in gymnasium:Stuck-v0's step; gymnasium:Stuck-v0 may be blocked "
        "(a run of several processes waits for it; Ctrl-C twice aborts it)"
    )


def test_a_stop_during_a_long_wait_still_waits_its_own_grace_for_the_batch(monkeypatch):
    # (mut22 W03) The learner has waited 1.2 s (a slow environment) when the
    # stop comes; the batch arrives 0.3 s later, inside the stop's own 1 s
    # grace: it is used. Timed from the wait's start, the grace had passed.
    monkeypatch.setattr(host_waits, "STOP_WAIT_S", 1.0)
    said = []
    monkeypatch.setattr(host_waits, "say", said.append)
    env = types.SimpleNamespace(name="gymnasium:Slow-v0")
    idle = types.SimpleNamespace(
        error=None, doing="environments", env=env, first_call_seconds=1.0
    )
    q = queue.Queue()
    start = time.monotonic()
    stop = lambda: time.monotonic() - start >= 1.2  # noqa: E731
    timer = threading.Timer(1.5, q.put, ("batch",))
    timer.start()
    try:
        assert host_waits.next_batch(0, q, [idle], 3, stop) == "batch"
    finally:
        timer.cancel()
    assert said == []
