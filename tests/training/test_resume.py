"""Interrupt and resume runs as a user does: subprocesses, signals, damaged files.

Every run trains 2,000 updates of a small CartPole config (4 envs x 8 steps,
one minibatch), checkpointing every chunk of 100 updates. A resumed run must
end with the same parameters, bit for bit, as one that ran straight through.
"""

import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import flax.serialization
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from tests.helpers import cli_command

pytestmark = pytest.mark.timeout(600)

# --devices 1: the same programs in a process of its own (one CPU device) and
# in pytest's (eight), which resumes in-process (a launch fewer each).
# checkpoint.wait: every due save is written and training waits for them, so
# a killed run has its checkpoints (a save would otherwise replace the one
# still waiting, and this run trains its 20 chunks in about two saves' time).
SMALL = [
    "--env", "cartpole", "--num-envs", "4", "--unroll-length", "8",
    "--total-steps", "64000", "--num-logs", "20", "--quiet",
    "--checkpoint.wait", "true", "--devices", "1",
]  # fmt: skip
ALGO = {
    # A network of one layer of 32: cheaper compiles.
    "ppo": ["--algo", "ppo", "--ppo.num-epochs", "1", "--ppo.num-minibatches", "1",
            "--network.hidden-sizes", "32"],
    "impala": ["--algo", "impala", "--impala.policy-lag", "2"],
    # A recurrent core: its state is in every actor and every trajectory.
    "ppo_gru": ["--algo", "ppo", "--ppo.num-epochs", "1", "--ppo.num-minibatches",
                "2", "--network.core", "gru", "--network.core-size", "16"],
    # R2D2: a GRU, burn-in 4, per-environment prioritised shards of 64
    # sequences (overwritten ~30 times over) and stored start states.
    "r2d2": ["--env", "cartpole_masked", "--algo", "r2d2", "--r2d2.buffer-size",
             "256", "--r2d2.min-replay", "32", "--r2d2.batch-size", "8",
             "--r2d2.burn-in", "4"],
    # Prioritised replay of 2,048 transitions, overwritten ~30 times over.
    "apex": ["--algo", "apex", "--apex.buffer-size", "2048", "--apex.min-replay",
             "256", "--apex.batch-size", "32", "--apex.updates-per-step", "1"],
}  # fmt: skip


def _run(*args: str, cache: pathlib.Path, cwd: pathlib.Path):
    return subprocess.run(
        cli_command(*args, cache=cache),
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def _start(*args: str, cache: pathlib.Path, cwd: pathlib.Path) -> subprocess.Popen:
    return subprocess.Popen(
        cli_command(*args, cache=cache),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _main(capsys, *args: str) -> tuple[int, str, str]:
    """`purejaxdrl ARGS` in this process: its exit status, stdout and stderr.

    It finds the programs the processes compiled in the session's cache.
    """
    from purejaxdrl import cli

    capsys.readouterr()
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _committed(run_root: pathlib.Path) -> list[int]:
    """Checkpoints whose manifest is written (fully saved)."""
    return sorted(
        int(p.parent.name) for p in run_root.glob("*/checkpoints/*/purejaxdrl.sha256")
    )


def _wait_until(proc: subprocess.Popen, done, what: str) -> None:
    """Poll `done()` while `proc` runs; fail if it ends or 240 s pass first."""
    deadline = time.monotonic() + 240
    while not done():
        if proc.poll() is not None:  # its stderr says why (a resume's lines)
            out, err = proc.communicate()
            assert done(), f"{what}: the process ended first\n{err[-2000:]}\n{out}"
            return
        assert time.monotonic() < deadline, f"{what} did not appear"
        time.sleep(0.05)


def _wait_for_checkpoints(proc: subprocess.Popen, root: pathlib.Path, n: int) -> None:
    _wait_until(proc, lambda: len(_committed(root)) >= n, f"{n} checkpoints")


def _params(root: pathlib.Path) -> list[np.ndarray]:
    (path,) = root.glob("*/params.msgpack")
    tree = flax.serialization.msgpack_restore(path.read_bytes())
    return [np.asarray(x) for x in jax.tree.leaves(tree)]


def _assert_same_params(a: pathlib.Path, b: pathlib.Path) -> None:
    for x, y in zip(_params(a), _params(b), strict=True):
        np.testing.assert_array_equal(x, y)  # bit for bit


@pytest.fixture(scope="module")
def cache() -> pathlib.Path:
    """The session's compilation cache, shared with the in-process resumes."""
    return pathlib.Path(os.environ["JAX_COMPILATION_CACHE_DIR"])


class _Straight(dict):
    """Each algorithm's run straight through, run when a test first asks."""

    def __init__(self, tmp_path_factory, cache):
        super().__init__()
        self.tmp_path_factory, self.cache = tmp_path_factory, cache

    def __missing__(self, algo: str) -> pathlib.Path:
        root = self.tmp_path_factory.mktemp(f"straight-{algo}")
        from purejaxdrl import cli

        # In this process (a launch fewer), compiling into the session's cache,
        # where the processes the tests start find its programs.
        assert cli.main(["train", *SMALL, *ALGO[algo], "--run-dir", str(root)]) == 0
        self[algo] = root
        return root


@pytest.fixture(scope="module")
def straight(tmp_path_factory, cache) -> dict[str, pathlib.Path]:
    """The reference runs, straight through (only those a test uses)."""
    return _Straight(tmp_path_factory, cache)


# The fast suite resumes PPO through all three interruptions in one sequence
# below; the other algorithms resume through the same loop with `-m slow`
# (R2D2 and Ape-X keep replay in the state; tests/sweeps/test_sweep_resume.py
# resumes a replay sweep in CI).
@pytest.mark.slow
@pytest.mark.parametrize("algo", ["impala", "ppo_gru", "r2d2", "apex"])
def test_sigkill_then_resume_is_bitwise_identical(algo, straight, cache, tmp_path):
    root = tmp_path / "runs"
    proc = _start(
        "train", *SMALL, *ALGO[algo], "--run-dir", str(root), cache=cache, cwd=tmp_path
    )
    _wait_for_checkpoints(proc, root, 2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not list(root.glob("*/params.msgpack"))  # really killed mid-run
    (run_dir,) = root.iterdir()
    resumed = _run("train", "--resume", str(run_dir), cache=cache, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed at update" in resumed.stderr
    _assert_same_params(straight[algo], root)
    # The metrics file holds each chunk once, as if never interrupted.
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    assert len(lines) == 20


def _damage(checkpoint: pathlib.Path) -> None:
    """Overwrite bytes in every data file of one saved checkpoint."""
    damaged = 0
    for path in checkpoint.rglob("*"):
        if path.is_file() and path.stat().st_size > 16 and "/d/" in str(path):
            with path.open("r+b") as f:
                f.seek(8)
                f.write(b"\0garbage\0")
            damaged += 1
    assert damaged, sorted(str(p) for p in checkpoint.rglob("*"))


def test_killed_damaged_sigtermed_and_diverged_run_resumes(
    straight, cache, tmp_path, capsys, monkeypatch
):
    """One run through SIGKILL, a corrupted newest checkpoint, SIGTERM, then NaN.

    Each interruption is one process of the same run (one sequence, not four
    runs, to keep CI short). The run must end with the parameters of the run
    straight through, and each chunk in its metrics once; continued with an
    absurd learning rate, it must stop at the first non-finite chunk with one
    line, save nothing non-finite, and resume from its last good checkpoint.
    The last three steps run in this process (three launches fewer).
    """
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "runs"
    proc = _start(
        "train", *SMALL, *ALGO["ppo"], "--run-dir", str(root), cache=cache, cwd=tmp_path
    )
    # 1. SIGKILL mid-run, then damage the newest checkpoint.
    _wait_for_checkpoints(proc, root, 3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not list(root.glob("*/params.msgpack"))  # really killed mid-run
    saved = _committed(root)
    (run_dir,) = root.iterdir()
    _damage(run_dir / "checkpoints" / str(saved[-1]))
    # 2. The resume skips the damaged checkpoint; SIGTERM it once it has saved.
    proc = _start("train", "--resume", str(run_dir), cache=cache, cwd=tmp_path)
    skipped = run_dir / "checkpoints" / "skipped" / str(saved[-1])
    _wait_until(proc, skipped.is_dir, "the skipped checkpoint")
    _wait_for_checkpoints(proc, root, len(saved))  # one past the skipped one
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert f"checkpoint at update {saved[-1]} skipped" in err
    assert "corrupted" in err
    assert f"resumed at update {saved[-2]:,}" in err
    assert "SIGTERM received" in err
    assert "stopped by SIGTERM after update" in out
    assert "purejaxdrl train --resume" in out
    stopped_at = _committed(root)[-1]
    assert stopped_at < 2000
    # 3. The last resume runs to the end.
    code, _, err = _main(capsys, "train", "--resume", str(run_dir))
    assert code == 0, err
    assert f"resumed at update {stopped_at:,}" in err
    _assert_same_params(straight["ppo"], root)
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    assert len(lines) == 20
    # 4. One chunk more with an absurd learning rate: the parameters overflow.
    more = ["--override", "--total-steps", "67200", "--num-logs", "21"]
    code, _, bad = _main(
        capsys, "train", "--resume", str(run_dir), *more, "--ppo.learning-rate", "1e38"
    )
    assert code == 1, bad
    line = bad.strip().splitlines()[-1]
    assert line.startswith("purejaxdrl: error: update 2,0"), line
    assert " is nan" in line or " is inf" in line
    assert "last good checkpoint is update 2,000" in line
    assert "Traceback" not in bad
    assert _committed(root)[-1] == 2000  # nothing non-finite was saved
    # 5. The last good checkpoint restores and trains on with a sane rate.
    code, _, good = _main(
        capsys, "train", "--resume", str(run_dir), "--override",
        "--ppo.learning-rate", "2.5e-4",
    )  # fmt: skip
    assert code == 0, good
    assert "resumed at update 2,000" in good
    assert _committed(root)[-1] == 2100
    assert all(np.isfinite(x).all() for x in _params(root))


def _export(root: pathlib.Path, tmp_path: pathlib.Path):
    """`purejaxdrl export` of the run under `root`, loaded with load_policy."""
    import purejaxdrl as pjd

    (run_dir,) = root.iterdir()
    out = tmp_path / "policy"
    command = [sys.executable, "-m", "purejaxdrl.cli", "export", str(run_dir)]
    result = subprocess.run(
        [*command, "--out", str(out)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return pjd.load_policy(out)


def test_export_and_load_policy(straight, tmp_path):
    import purejaxdrl as pjd

    policy = _export(straight["ppo"], tmp_path)
    assert policy.spec["env_id"] == "CartPole-v1" and policy.spec["updates"] == 2000
    # The exported parameters are the run's final ones.
    for x, y in zip(
        jax.tree.leaves(policy.params), _params(straight["ppo"]), strict=True
    ):
        np.testing.assert_array_equal(np.asarray(x), y)
    obs = np.zeros((5, 4), np.float32)
    actions = jax.jit(policy.act)(obs, jax.random.key(0))
    assert actions.shape == (5,) and actions.dtype == np.int32
    assert jax.jit(policy.mode)(obs[0]).shape == ()
    # In the environment: the deterministic policy balances the pole for a while.
    env = pjd.env.make("CartPole-v1")
    params = env.default_params
    state, ts = env.reset(jax.random.key(1), params)
    total = 0.0
    step = jax.jit(env.step)
    for t in range(200):
        state, ts = step(jax.random.key(t), state, policy.mode(ts.observation), params)
        total += float(ts.reward)
        if ts.last():
            break
    assert total >= 50, total


def test_export_and_load_a_recurrent_policy(tmp_path):
    import purejaxdrl as pjd

    # A short run, in this process (the `export` command is test_export_and_
    # load_policy's): what is checked is that the export acts as the network
    # does. ALGO["ppo_gru"]'s network, 2 updates of SMALL's 4 envs x 8 steps.
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"num_envs": 4, "unroll_length": 8, "total_steps": 4 * 8 * 2,
         "num_logs": 1, "devices": 1, "run_dir": str(tmp_path / "runs"),
         "ppo": {"num_epochs": 1, "num_minibatches": 2},
         "network": {"core": "gru", "core_size": 16}},
    )  # fmt: skip
    result = pjd.train(config, write_files=True, console=False)
    policy = pjd.load_policy(pjd.export_policy(result.run_dir, tmp_path / "policy"))
    assert policy.spec["network"]["core"] == "gru"
    with pytest.raises(pjd.ConfigError, match="use policy.step"):
        policy.mode(np.zeros(4, np.float32))
    # The exported policy steps as the run's network does, state and all.
    obs = jax.random.normal(jax.random.key(0), (6, 3, 4))
    reset = jnp.zeros((6, 3), bool).at[2, 1].set(True)
    state, modes = policy.initial_state(3), []
    for t in range(6):
        state, action = jax.jit(policy.step_mode)(state, obs[t], reset[t])
        modes.append(action)
    from purejaxdrl.env.base import Box, Discrete
    from purejaxdrl.networks import NetworkConfig, make_actor_critic

    net = make_actor_critic(
        NetworkConfig(core="gru", core_size=16), Box((4,)), Discrete(2)
    )
    _, (logits, _) = net.unroll(policy.params, net.initial_state(3), obs, reset)
    np.testing.assert_array_equal(np.stack(modes), np.argmax(logits, axis=-1))
    state, sample = jax.jit(policy.step)(state, obs[0], reset[0], jax.random.key(1))
    assert sample.shape == (3,) and sample.dtype == np.int32
    # One reset for all; anything else that does not fit is one error.
    _, same = policy.step_mode(policy.initial_state(3), obs[0], True)
    _, ones = policy.step_mode(policy.initial_state(3), obs[0], jnp.ones(3, bool))
    np.testing.assert_array_equal(same, ones)
    for args, says in [
        ((policy.initial_state(3), obs[0, 0], False), "steps a batch: obs [B, 4]"),
        ((policy.initial_state(2), obs[0], reset[0]), "initial_state(3)"),
        ((policy.initial_state(3), obs[0], jnp.zeros(2, bool)), "bool [3]"),
    ]:
        with pytest.raises(ValueError, match=re.escape(says)):
            policy.step_mode(*args)
