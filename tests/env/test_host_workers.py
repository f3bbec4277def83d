"""An async Gymnasium pool's workers end with the run (HE11 findings 1 and 6).

They end on SIGTERM (Gymnasium's `terminate()`), die with the process that
made them even when it is SIGKILLed while they are stuck in a step, are
killed by the close when they ignore SIGTERM (and exit at once if their owner
is gone before they start), and a worker that died, during a step or between
two, is named with its exit code or signal.
"""

import os
import pathlib
import signal
import subprocess
import sys
import time
import types

import numpy as np
import pytest

from purejaxdrl.env.host import gymnasium_workers, make_host_env
from purejaxdrl.env.host.gymnasium_workers import WorkerDied, alive, exit_status

pytest.importorskip("gymnasium")
pytestmark = pytest.mark.timeout(120)

# Environments that misbehave in their first `step`.
MODULE = """
import os, pathlib, signal, time
import gymnasium as gym
from gymnasium.envs.classic_control.cartpole import CartPoleEnv

HERE = pathlib.Path(__file__).parent


class Base(CartPoleEnv):
    def step(self, action):
        self.misbehave()
        return super().step(action)


class Blocking(Base):
    def misbehave(self):
        (HERE / f"blocked.{os.getpid()}").touch()
        time.sleep(600)


class Stubborn(Blocking):
    def misbehave(self):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        super().misbehave()


class Exiting(Base):
    def misbehave(self):
        os._exit(3)


class Killed(Base):
    def misbehave(self):
        os.kill(os.getpid(), signal.SIGKILL)


for name in ("Blocking", "Stubborn", "Exiting", "Killed"):
    gym.register(f"Workers{name}-v0", entry_point=globals()[name])
"""


@pytest.fixture
def module(tmp_path, monkeypatch):
    # A name per test: an imported module (its HERE) stays in sys.modules.
    name = f"worker_envs_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    return name


def _pool(module, name, num_envs=2):
    env = make_host_env(
        f"gymnasium:{module}:Workers{name}-v0", num_envs, 0, vectorization_mode="async"
    )
    env.reset()
    return env


def _step(env):
    env.send(np.zeros(env.num_envs, np.int32), env.env_id)
    return env.recv()


def _signals_ignored(pid):
    status = pathlib.Path(f"/proc/{pid}/status").read_text().splitlines()
    line = next(x for x in status if x.startswith("SigIgn:"))
    mask = int(line.split()[1], 16)
    return {s for s in (signal.SIGINT, signal.SIGTERM) if mask >> (s - 1) & 1}


def _joined(process, seconds: float = 60) -> int:
    """`process`'s exit code, once it has ended (reaping may lag under load)."""
    process.join(seconds)
    assert process.exitcode is not None, f"{process.pid} runs after {seconds} s"
    return process.exitcode


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_ignore_sigint_but_end_on_sigterm(module):
    env = _pool(module, "Blocking")
    try:
        pids = [p.pid for p in env.vec.unwrapped.processes]
        # Ctrl-C reaches the whole process group: it is the run's to handle.
        assert all(_signals_ignored(pid) == {signal.SIGINT} for pid in pids)
        os.kill(pids[0], signal.SIGTERM)
        exitcode = _joined(env.vec.unwrapped.processes[0])
        assert exit_status(exitcode) == "killed by SIGTERM"
    finally:
        env.close()


def test_a_close_kills_workers_stuck_in_a_step_that_ignore_sigterm(
    module, monkeypatch, tmp_path
):
    monkeypatch.setattr(gymnasium_workers, "CLOSE_TIMEOUT_S", 1.0)
    env = _pool(module, "Stubborn")
    env.send(np.zeros(2, np.int32), env.env_id)
    # Blocked (and SIGTERM ignored) in every worker; the step is under way.
    env.vec.step_async(env.pending)
    deadline = time.monotonic() + 30
    while len(list(tmp_path.glob("blocked.*"))) < 2:
        assert time.monotonic() < deadline, "the workers never blocked"
        time.sleep(0.05)
    start = time.monotonic()
    env.close()
    assert time.monotonic() - start < 10  # Gymnasium's own close: for ever
    processes = env.vec.unwrapped.processes
    for process in processes:  # killed; reaping may lag on a loaded machine
        process.join(10)
    assert [exit_status(p.exitcode) for p in processes] == ["killed by SIGKILL"] * 2


OWNER = """
import sys, threading, time
import numpy as np
from purejaxdrl.env.host import make_host_env

env = make_host_env("gymnasium:{module}:WorkersBlocking-v0", 2, 0,
                    vectorization_mode="async")
env.reset()
env.send(np.zeros(2, np.int32), env.env_id)
threading.Thread(target=env.recv, daemon=True).start()
print(*[p.pid for p in env.vec.unwrapped.processes], flush=True)
time.sleep(600)
"""


def _gone(pid):
    if not alive(pid):
        return True
    # Dead, not yet reaped by whoever adopted it.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True  # reaped since `alive` looked: gone


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_stuck_in_a_step_die_with_a_sigkilled_owner(module, tmp_path):
    (tmp_path / "owner.py").write_text(OWNER.format(module=module))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    owner = subprocess.Popen(
        [sys.executable, "owner.py"], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        pids = [int(x) for x in owner.stdout.readline().split()]
        assert len(pids) == 2, "the owner printed no worker ids"
        deadline = time.monotonic() + 30
        while len(list(tmp_path.glob("blocked.*"))) < 2:
            assert time.monotonic() < deadline, "the workers never blocked"
            time.sleep(0.05)
        owner.kill()  # SIGKILL: nothing of the owner's runs
        owner.wait(10)
        deadline = time.monotonic() + 10
        while not all(_gone(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [_gone(pid) for pid in pids] == [True, True]
    finally:
        owner.kill()
        for pid in pids if "pids" in locals() else []:
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)  # the owner's workers, ours to end


@pytest.mark.parametrize(
    ("name", "how"), [("Exiting", "exit code 3"), ("Killed", "killed by SIGKILL")]
)
def test_a_worker_that_dies_is_named_with_its_exit(module, name, how):
    env = _pool(module, name, num_envs=1)
    try:
        with pytest.raises(WorkerDied) as raised:
            _step(env)
        pid = env.vec.unwrapped.processes[0].pid
        assert str(raised.value).startswith(
            f"gymnasium:{module}:Workers{name}-v0's worker process 0 (pid {pid}, "
            f"{how}) died during step"
        )
    finally:
        env.close()
    assert not env.vec.unwrapped.processes[0].is_alive()


def test_a_worker_that_died_between_steps_is_named_at_the_next_step():
    # OOM-killed while the learner updates, say: the next step's send, not a
    # recv, meets the dead worker, as a broken pipe.
    env = make_host_env("gymnasium:CartPole-v1", 1, 0, vectorization_mode="async")
    try:
        env.reset()
        _step(env)
        process = env.vec.unwrapped.processes[0]
        process.kill()
        _joined(process)
        with pytest.raises(WorkerDied) as raised:
            _step(env)
        assert str(raised.value).startswith(
            f"gymnasium:CartPole-v1's worker process 0 (pid {process.pid}, "
            "killed by SIGKILL) died during step"
        )
    finally:
        env.close()


DIE_WITH = """
import subprocess, sys
from purejaxdrl.env.host import gymnasium_workers
from purejaxdrl.env.host.gymnasium_workers import die_with

owner = subprocess.Popen([sys.executable, "-c", ""])
owner.wait()  # reaped: the owner is gone
# Its pid may be reused by now (a busy machine): the check asks the kernel
# about a pid, so it is told what is true of the owner, whoever has the pid.
gymnasium_workers.alive = lambda pid: pid != owner.pid
print("imported", flush=True)
die_with(owner.pid)
sys.exit(0)
"""


def test_a_worker_whose_owner_is_already_gone_exits_at_once():
    # The owner died between the fork and the kernel's death signal being
    # asked for: no signal will come, so die_with itself must end the worker.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", DIE_WITH], env=env, timeout=60, capture_output=True
    )
    # Its os._exit(1), not a traceback's exit status 1.
    assert (done.returncode, done.stdout) == (1, b"imported\n"), done.stderr
    assert b"Traceback" not in done.stderr


def test_exit_status_words_codes_and_signals():
    assert exit_status(0) == "exit code 0"
    assert exit_status(3) == "exit code 3"
    assert exit_status(-9) == "killed by SIGKILL"
    assert exit_status(-15) == "killed by SIGTERM"


def test_a_death_report_waits_for_a_worker_reaped_seconds_late(monkeypatch):
    # A worker descheduled as it died (a loaded machine) had its exit code
    # over a second after its pipe broke: the report, which waited 1 s, said
    # "its worker processes look alive" instead of how it died.
    now = [0.0]

    def sleep(seconds):
        now[0] += seconds

    fake = types.SimpleNamespace(monotonic=lambda: now[0], sleep=sleep)
    monkeypatch.setattr(gymnasium_workers, "time", fake)

    class ReapedLate:
        pid = 7

        @property
        def exitcode(self):
            return -signal.SIGKILL if now[0] >= 3.0 else None

    pool = types.SimpleNamespace(processes=[ReapedLate()])
    report = gymnasium_workers.death_report(pool, "env", "step", EOFError())
    assert report.startswith(
        "env's worker process 0 (pid 7, killed by SIGKILL) died during step"
    ), report
