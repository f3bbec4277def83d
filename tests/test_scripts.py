"""The benchmark scripts still run: each --help, the GPU suite's rows at toy size.

Nothing else runs `scripts/`, so a renamed function inside the package would
break them silently. The suite's rows run in this process at `--tiny` sizes
(compile-bound: about a minute each on a 2-core CPU, brax's the longest).
"""

import json
import pathlib
import runpy
import sys

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


# Each benchmark script at toy size, in this process, with extra arguments where
# the default would reach further than the code path (bench_gpu: its rows below).
TINY_RUNS = {
    "bench_apex.py": [],
    "bench_brax.py": [],
    "bench_checkpoint.py": [],
    "bench_craftax.py": [],
    "bench_devices.py": [],
    "bench_host.py": [],
    "bench_logging.py": [],
    "bench_networks.py": [],
    "bench_policy_lag.py": [],
    "bench_ppo.py": [],
    "bench_recurrent.py": [],
    "bench_replay.py": [],
    "bench_sweep.py": [],
    "compare_sac_brax.py": [],
    "host_cartpole_scores.py": [],
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("script", sorted(TINY_RUNS))
def test_script_runs_at_toy_size(script, on_scripts_path, monkeypatch, tmp_path):
    out = tmp_path / "report.json"
    argv = [script, "--tiny", "--json", str(out), *TINY_RUNS[script]]
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(SCRIPTS / script), run_name="__main__")
    report = json.loads(out.read_text())
    assert not [s for s in report["skipped"] if s["why"].startswith("failed")]
    assert report["rows"], f"{script} reported nothing"
    for row in report["rows"]:
        assert row["runs"], row
        for figures in row["runs"]:
            assert figures and all(
                isinstance(v, float | int) for v in figures.values()
            ), row


def test_every_benchmark_runs_at_toy_size():
    """A new script gets a toy-size run above (or is not a benchmark)."""
    not_benchmarks = {"harness.py", "bench_gpu.py", "reproduce.py", "param_hashes.py"}
    scripts = {p.name for p in SCRIPTS.glob("*.py")} - not_benchmarks
    assert scripts == set(TINY_RUNS)


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
