"""The benchmark scripts still run: each --help, each at toy size, the GPU suite's rows.

Nothing else runs `scripts/`, so a renamed function inside the package would
break them silently. Every benchmark script runs in this process at `--tiny`
size and must report rows of numbers; the GPU suite's rows run the same way.
All are compile-bound: up to a few minutes each on a 2-core CPU (Craftax's
world generation, brax's trainers the longest).
"""

import json
import pathlib
import runpy
import sys

import numpy as np
import pytest

SCRIPTS = pathlib.Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture
def on_scripts_path(monkeypatch):
    """`scripts/` first on sys.path, as `python scripts/NAME.py` has it."""
    monkeypatch.syspath_prepend(str(SCRIPTS))


@pytest.mark.parametrize(
    "script", sorted(p.name for p in SCRIPTS.glob("*.py") if p.name != "harness.py")
)
def test_help(script, on_scripts_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [script, "--help"])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(SCRIPTS / script), run_name="__main__")
    assert exit_.value.code == 0
    assert "usage:" in capsys.readouterr().out


# Every script but these runs at --tiny size below (bench_gpu.py: its rows).
NOT_BENCHMARKS = {"harness.py", "bench_gpu.py", "reproduce.py", "param_hashes.py"}
# Minutes even at toy size, compiling MJX's or Craftax's step (which their own
# tests compile in CI too): under -m slow.
SLOW = {"bench_craftax.py", "bench_playground.py"}
BENCHMARKS = [
    pytest.param(name, marks=[pytest.mark.slow] if name in SLOW else [])
    for name in sorted(
        p.name for p in SCRIPTS.glob("*.py") if p.name not in NOT_BENCHMARKS
    )
]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("script", BENCHMARKS)
def test_script_runs_at_toy_size(script, on_scripts_path, monkeypatch, tmp_path):
    out = tmp_path / "report.json"
    monkeypatch.setattr(sys, "argv", [script, "--tiny", "--json", str(out)])
    runpy.run_path(str(SCRIPTS / script), run_name="__main__")
    report = json.loads(out.read_text())
    assert not [s for s in report["skipped"] if s["why"].startswith("failed")]
    assert report["rows"], f"{script} reported nothing"
    for row in report["rows"]:
        assert row["runs"], row
        for figures in row["runs"]:
            assert figures, row
            assert all(isinstance(v, float | int) for v in figures.values()), row


ROWS = ["ppo_cartpole", "brax_ant", "apex_dqn", "breakout_minatar"]
ROWS += ["cnn_learners", "recurrent"]


@pytest.mark.timeout(400)
@pytest.mark.parametrize("row", ROWS)
def test_gpu_suite_row_runs_at_toy_size(row, on_scripts_path, tmp_path):
    import bench_gpu

    out = tmp_path / "suite.json"
    md = tmp_path / "suite.md"
    bench_gpu.main(["--tiny", "--rows", row, "--json", str(out), "--markdown", str(md)])
    report = json.loads(out.read_text())
    failed = [s["why"] for s in report["skipped"] if s["why"].startswith("failed")]
    assert not failed
    rows = report["rows"]
    assert rows, f"{row} reported nothing"
    for r in rows:
        for figures in r["runs"]:
            assert all(isinstance(v, float | int) for v in figures.values())
    # Peers' rows carry a ratio to ours (PureJaxRL is not installed here).
    if row in ("brax_ant", "apex_dqn"):
        assert any(r["name"].startswith("ratio") for r in rows)
    assert report["machine"]["backend"] == "cpu"
    assert md.read_text().startswith("### purejaxdrl GPU suite (tiny)")


def test_harness_report_and_budget(on_scripts_path, tmp_path, capsys):
    import harness

    report = harness.Report("t", machine={**harness.describe_machine()})
    runs = harness.interleave(
        {"a": lambda r: {"x": float(r)}, "b": lambda r: {"x": 10.0 + r}}, 3
    )
    assert runs == {"a": [{"x": 0.0}, {"x": 1.0}, {"x": 2.0}], "b": [
        {"x": 10.0}, {"x": 11.0}, {"x": 12.0}]}  # fmt: skip
    row = report.add("r", "a", runs["a"])
    assert row.medians() == {"x": 1.0}
    assert harness.spread([3.0, 1.0, 2.0]) == {"median": 2.0, "min": 1.0, "max": 3.0}
    report.skip("later", "out of budget")
    report.write(str(tmp_path / "r.json"), str(tmp_path / "r.md"))
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["rows"][0]["median"] == {"x": 1.0}
    assert data["skipped"] == [{"row": "later", "why": "out of budget"}]
    assert "| r | a | x 1 [0-2] |" in (tmp_path / "r.md").read_text()
    assert not harness.Budget(0.0).allows(1.0)
    assert harness.Budget(None).allows(1e9)


def test_pqn_ablation_ends_the_return_at_time_limits_and_undoes_itself(
    on_scripts_path,
):
    # bench_pqn.py --truncation compares PQN as built with this patch: one
    # step cut by a time limit (bootstrap 5), then one that runs on (bootstrap
    # 3), γ 0.5, λ 0. By hand: as built G_0 = 1 + 0.5 * 5, G_1 = 1 + 0.5 * 3;
    # patched, the time limit ends the return, G_0 = 1.
    import bench_pqn
    import jax.numpy as jnp

    from purejaxdrl.agents import pqn
    from purejaxdrl.types import Transition

    ones = jnp.ones((2, 1))
    traj = Transition(
        observation=ones,
        action=jnp.zeros((2, 1), jnp.int32),
        reward=ones,
        discount=ones,
        truncated=jnp.array([[True], [False]]),
        log_prob=ones,
        value=ones,
        bootstrap_value=jnp.array([[5.0], [3.0]]),
        final_observation=ones,
        info={},
    )
    config = pqn.PQNConfig(gamma=0.5, q_lambda=0.0, reward_scale=1.0)
    built = np.asarray(pqn.q_lambda_targets(traj, config))[:, 0]
    undo = bench_pqn.truncations_as_terminations()
    try:
        ended = np.asarray(pqn.q_lambda_targets(traj, config))[:, 0]
    finally:
        undo()
    np.testing.assert_allclose(built, [3.5, 2.5])
    np.testing.assert_allclose(ended, [1.0, 2.5])
    np.testing.assert_allclose(pqn.q_lambda_targets(traj, config)[:, 0], built)


@pytest.mark.timeout(300)
def test_pqn_truncation_ablation_runs_at_toy_size(on_scripts_path, tmp_path):
    import bench_pqn

    out = tmp_path / "report.json"
    bench_pqn.main(["--tiny", "--truncation", "--json", str(out)])
    rows = json.loads(out.read_text())["rows"]
    assert [len(r["runs"]) for r in rows] == [1, 1]  # --tiny: one seed each
    assert all(np.isfinite(f["train_return"]) for r in rows for f in r["runs"])
