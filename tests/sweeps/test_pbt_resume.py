"""A PBT run stopped mid-way and resumed ends as the run straight through."""

import json
import math
import pathlib
import signal
import subprocess
import time
import types

import flax.serialization
import jax
import numpy as np
import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl.rng import make_key
from purejaxdrl.sweeps.pbt import train as pbt_train
from purejaxdrl.sweeps.pbt.lineage import load_pbt
from purejaxdrl.sweeps.pbt.population import pbt, resume_pbt
from purejaxdrl.sweeps.pbt.train import _ready_program
from tests.helpers import cli_command

pytestmark = pytest.mark.timeout(600)

# Not in sorted order: the lineage's columns follow it, resumed or not.
SPACE = {
    "learning_rate": ("loguniform", 1e-4, 1e-2),
    "entropy_cost": ("uniform", 0.0, 0.02),
}


class Stop(Exception):
    """Raised by a progress callback: the run stops there, as if killed."""


def _base(root, updates=8):
    config = pjd.load_preset("cartpole").config  # PPO, 512 steps per update
    return pjd.apply_overrides(
        config,
        {
            "total_steps": config.steps_per_update * updates,
            "num_logs": updates,
            "devices": 4,
            "run_dir": str(root),
        },
    )


def _stop_at(line: str) -> None:
    if "update 5 of 8" in line:  # after the checkpoint of the ready step at 4
        raise Stop


KWARGS = {"explore": SPACE, "population": 4, "ready": 2, "write_files": True}


# What the straight run's ready steps were given: (key data, return sums,
# counts) per ready step, read by a spy around the compiled ready program.
READY_CALLS: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []


def _spied_ready_program(*args, **kwargs):
    """`sweeps.pbt.train._ready_program`, whose compiled program records its inputs."""
    jitted = _ready_program(*args, **kwargs)

    class Lowered:
        def __init__(self, lowered):
            self._lowered = lowered

        def compile(self):
            compiled = self._lowered.compile()

            def call(key, hps, states, return_sum, count, diverged):
                sums, counts = jax.device_get((return_sum, count))
                READY_CALLS.append((np.asarray(jax.random.key_data(key)), sums, counts))
                return compiled(key, hps, states, return_sum, count, diverged)

            return call

    return types.SimpleNamespace(lower=lambda *a: Lowered(jitted.lower(*a)))


@pytest.fixture(scope="module")
def straight(tmp_path_factory):
    """The PBT run of 8 updates straight through, which each stopped run
    resumed must equal: trained once for the module's tests (each would
    train the same run, with the same programs)."""
    READY_CALLS.clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pbt_train, "_ready_program", _spied_ready_program)
        return pbt(_base(tmp_path_factory.mktemp("straight")), **KWARGS)


def test_ready_steps_rank_the_returns_since_the_last_with_a_key_per_chunk(straight):
    # Ready steps after chunks 1, 3 and 5 of 8 (ready=2; none after the last).
    # Each ranks each member by the episodes ended in its window, the two
    # chunks since the previous ready step, as the members' records count
    # them (mean return x episodes, summed); its key folds the chunk's index
    # into the search seed's key, so no two ready steps share one.
    chunks = [1, 3, 5]
    assert len(READY_CALLS) == len(chunks)
    seed_key = make_key(straight.search_seed, straight.base.rng_impl)
    n = straight.population
    for (key, sums, counts), chunk, step in zip(
        READY_CALLS, chunks, straight.lineage[1:], strict=True
    ):
        expected_key = jax.random.key_data(jax.random.fold_in(seed_key, chunk))
        np.testing.assert_array_equal(key, expected_key)
        window = (chunk - 1, chunk + 1)  # updates after the previous ready step
        for i in range(n):
            records = [r for r in straight.histories[i] if window[0] < r["updates"]]
            records = [r for r in records if r["updates"] <= window[1]]
            assert len(records) == 2
            count = sum(r["episode/count"] for r in records)
            total = sum(
                r["episode/mean_return"] * r["episode/count"]
                for r in records
                if r["episode/count"]
            )
            assert counts[i] == count
            np.testing.assert_allclose(sums[i], total, rtol=1e-5)
            score = total / count if count else math.nan
            np.testing.assert_allclose(step.scores[i], score, rtol=1e-5)
        assert step.updates == chunk + 1


def _assert_same_training(resumed, straight) -> None:
    """Same records (but for wall-clock times) and parameters, bit for bit."""
    for mine, theirs in zip(resumed.histories, straight.histories, strict=True):
        assert [{**r, "time": 0} for r in mine] == [{**r, "time": 0} for r in theirs]
    for i in range(4):
        jax.tree.map(
            np.testing.assert_array_equal,
            resumed.final_params[i],
            straight.final_params[i],
        )


def test_resume_gives_the_run_straight_through_bit_for_bit(tmp_path, straight):
    with pytest.raises(Stop):
        pbt(_base(tmp_path / "stopped"), **KWARGS, notify=_stop_at)
    (path,) = (tmp_path / "stopped").iterdir()
    assert sorted(p.name for p in (path / "checkpoints").iterdir())[-1] == "4"
    with pytest.raises(pjd.ConfigError, match="no pbt.yaml there"):
        resume_pbt(tmp_path)
    # pbt.yaml's base holds the explored algorithm's section only (as a
    # run's config.yaml), and the resume reads the population back from it.
    base = yaml.safe_load((path / "pbt.yaml").read_text())["base"]
    assert base["algo"] == "ppo" and "ppo" in base
    assert not {"dqn", "impala", "sac"} & set(base)
    messages = []
    resumed = resume_pbt(path, notify=messages.append)
    assert "pbt: resumed at update 4" in messages
    assert resumed.lineage == straight.lineage
    _assert_same_training(resumed, straight)
    assert load_pbt(path).lineage == straight.lineage
    csv = (path / "lineage.csv").read_text()
    assert csv == (straight.run_dir / "lineage.csv").read_text()
    assert csv.splitlines()[0].endswith(",score,learning_rate,entropy_cost")
    assert not (path / "checkpoints").exists()
    with pytest.raises(pjd.ConfigError, match="this PBT run finished"):
        resume_pbt(path)


@pytest.mark.parametrize(("every", "saved"), [(1, [4, 5]), (0, [5])])
def test_a_signal_mid_window_saves_the_window_and_resume_is_exact(
    every, saved, tmp_path, straight
):
    # Ready steps at updates 2, 4 and 6 of 8. SIGINT arrives while update 4
    # is read (5 is dispatched by then), so the population stops after 5 and
    # is saved with the returns of update 5, which the ready step at 6 ranks
    # by beside those of 6: its scores and parents need the saved window.
    # checkpoint.every 0 saves at no ready step, but still at the stop.
    def interrupt(line: str) -> None:
        if "update 4 of 8" in line:
            signal.raise_signal(signal.SIGINT)

    stopping = pjd.apply_overrides(
        _base(tmp_path / "stopped"), {"checkpoint": {"every": every}}
    )
    with pytest.raises(pjd.SweepStopped) as stopped:
        pbt(stopping, **KWARGS, notify=interrupt)
    (path,) = (tmp_path / "stopped").iterdir()
    assert stopped.value.path == path
    assert str(stopped.value) == (
        "stopped by SIGINT after update 5 of 8; continue with: "
        # The population's 4 (fake CPU) devices, not all the tests fake.
        f"pjd.resume_pbt({str(path)!r}) (JAX_NUM_CPU_DEVICES=4 purejaxdrl pbt "
        f"--resume {path})"
    )
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    steps = sorted(int(p.name) for p in (path / "checkpoints").iterdir())
    assert steps == saved and not list(path.rglob("*orbax-checkpoint-tmp*"))
    messages = []
    resumed = resume_pbt(path, notify=messages.append)
    assert "pbt: resumed at update 5" in messages
    assert resumed.lineage == straight.lineage  # scores at 6 included
    # Training time goes on from the stop, so steps/s counts all of it.
    times = [r["time"] for r in resumed.histories[0]]
    assert times == sorted(times) and resumed.train_seconds >= times[-1]
    _assert_same_training(resumed, straight)


# PPO on CartPole: 4 members, 300 updates of 4 envs x 128 steps in 12 chunks,
# a ready step every 2 chunks (at updates 50, 100, ..., 250), each checkpointed.
PBT = [
    "pbt", "--env", "cartpole", "--population", "4", "--explore",
    "learning_rate=loguniform:1e-4:1e-2", "--pbt.ready", "2",
    "--total-steps", "153600", "--num-logs", "12", "--devices", "1", "--quiet",
]  # fmt: skip


def _run(*args: str, cache: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        cli_command(*args, cache=cache), capture_output=True, text=True, timeout=400
    )


def _files(path: pathlib.Path) -> dict[str, object]:
    """What a finished PBT directory holds, but for wall-clock times."""
    out = {"lineage": json.loads((path / "lineage.json").read_text())}
    for member in sorted((path / "members").iterdir()):
        lines = member.read_text().splitlines()
        out[member.name] = [
            {k: v for k, v in json.loads(x).items() if k != "time"} for x in lines
        ]
    for params in sorted((path / "params").iterdir()):
        tree = flax.serialization.msgpack_restore(params.read_bytes())
        out[params.name] = [np.asarray(x).tobytes() for x in jax.tree.leaves(tree)]
    return out


@pytest.mark.slow
def test_sigkilled_pbt_resumes_exactly(tmp_path):
    cache = tmp_path / "xla"
    straight_root, killed_root = tmp_path / "straight", tmp_path / "killed"
    done = _run(*PBT, "--run-dir", str(straight_root), cache=cache)
    assert done.returncode == 0, done.stderr
    (straight,) = straight_root.iterdir()

    proc = subprocess.Popen(
        cli_command(*PBT, "--run-dir", str(killed_root), cache=cache),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while len(list(killed_root.glob("*/checkpoints/*/purejaxdrl.sha256"))) < 2:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no second checkpoint"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    (killed,) = killed_root.iterdir()
    assert not (killed / "lineage.json").exists()  # really killed mid-run

    resumed = _run("pbt", "--resume", str(killed), cache=cache)
    assert resumed.returncode == 0, resumed.stderr
    assert "pbt: resumed at update" in resumed.stderr
    assert _files(killed) == _files(straight)  # parameters bit for bit
