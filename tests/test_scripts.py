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


# XLA:GPU's dumps of a program with an update loop (2 trips) whose body holds a
# command buffer, a kernel, a rollout loop of 4 trips and a data-dependent loop,
# in the format JAX 0.10's XLA writes them (`hlo_kernels.py --target h200`).
THUNKS = """\
001: kCopy          [source       | next=002 (1)] kCopy
002: kWhile         [prev=001 (1) | sink        ]
condition:
    003: kCustomKernel [source | sink] loop_compare_fusion grid: [1, 1, 1]
  body:
    000: kCommandBuffer      [source       | next=006 (1)]
        004: kCustomKernel [source | next=005 (1)] loop_add_fusion grid: [1, 1, 1]
        005: kCopy         [prev=004 (1) | sink] kCopy
    006: kCustomKernel       [prev=000 (1) | next=007 (1)] wrapped_add grid: [1, 1, 1]
    007: kWhile              [prev=006 (1) | next=011 (1)]
condition:
        008: kCustomKernel [source | sink] loop_compare_fusion_1 grid: [1, 1, 1]
      body:
        000: kCommandBuffer [source | next=010 (1)]
            009: kCustomKernel [source | sink] loop_fusion grid: [1, 1, 1]
        010: kDynamicSliceFusion [prev=000 (1) | sink] params=1, results=1
    011: kWhile              [prev=007 (1) | sink]
condition:
        012: kCustomKernel [source | sink] loop_compare_fusion_2 grid: [1, 1, 1]
      body:
        013: kCustomKernel [source | sink] gather_fusion grid: [1, 1, 1]
"""
TRIPS = 'backend_config={{"known_trip_count":{{"n":"{}"}}}}'
HLO = f"""\
ENTRY %main.1 (p: f32[4]) -> f32[4] {{
  %while.1 = (s32[]) while(%t), condition=%c.1, body=%b.1, {TRIPS.format(2)}
}}
%b.1 (a: (s32[])) -> (s32[]) {{
  %while.2 = (s32[]) while(%t), condition=%c.2, body=%b.2, {TRIPS.format(4)}
  %while.3 = (s32[]) while(%t), condition=%c.3, body=%b.3
}}
"""


def test_hlo_kernels_counts_the_launches_of_one_update(on_scripts_path, tmp_path):
    import hlo_kernels

    (tmp_path / "m.jit_f.thunk_sequence_after_thunk_passes.txt").write_text(THUNKS)
    ids = {2: "while.1", 7: "while.2", 11: "while.3"}
    (tmp_path / "m.jit_f.thunk_metadata.txt").write_text(
        "".join(
            f'thunk_metadata {{\n  thunk_info {{\n    profile_annotation: "{name}"\n'
            f"    thunk_id: {i}\n  }}\n}}\n"
            for i, name in ids.items()
        )
    )
    # One update: the command buffer and the kernel (2), the rollout's 4 trips
    # of a command buffer and a dynamic-slice fusion (8), the data-dependent
    # loop's body and its condition, read back by the host (2).
    assert hlo_kernels.launches(str(tmp_path), HLO) == (12.0, 1)
    assert hlo_kernels.launches(str(tmp_path / "none"), HLO) is None
