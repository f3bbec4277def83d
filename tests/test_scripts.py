"""The benchmark scripts still run: each --help, each at toy size, the GPU suite's rows.

Nothing else runs `scripts/`, so a renamed function inside the package would
break them silently. Every benchmark script runs in this process at `--tiny`
size and must report rows of numbers; the GPU suite's rows run the same way.
All are compile-bound: up to a few minutes each on a 2-core CPU (Craftax's
world generation, brax's trainers the longest).
"""

import gzip
import json
import os
import pathlib
import re
import runpy
import subprocess
import sys
import time

import numpy as np
import pytest

SCRIPTS = pathlib.Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture
def on_scripts_path(monkeypatch):
    """`scripts/` first on sys.path, as `python scripts/NAME.py` has it.

    XLA_FLAGS is restored after the test: a script may add to it for the
    processes it starts (bench_devices' fake devices), and in this worker
    it would leak into the processes later tests start.
    """
    monkeypatch.syspath_prepend(str(SCRIPTS))
    monkeypatch.setenv("XLA_FLAGS", os.environ.get("XLA_FLAGS", ""))


@pytest.mark.parametrize("script", sorted(p.name for p in SCRIPTS.glob("*.py")))
def test_help(script, on_scripts_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [script, "--help"])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(SCRIPTS / script), run_name="__main__")
    assert exit_.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_bench_gpu_help_says_what_each_row_measures(on_scripts_path, capsys):
    # docs/gpu.md sends readers to --help for the rows: the docstring whole
    # (it printed its first line only), and a sentence for every option.
    import bench_gpu

    p = bench_gpu.make_parser()
    assert all(a.help for a in p._actions), [a.dest for a in p._actions if not a.help]
    with pytest.raises(SystemExit):
        p.parse_args(["--help"])
    out = capsys.readouterr().out
    for row in bench_gpu.ROWS:
        assert f"- {row}:" in out
    assert "a row starts only if" in " ".join(out.split())  # --budget-seconds'


@pytest.mark.parametrize(
    "argv",
    [
        ["bench_networks.py", "--tiny", "--torsos", "foo"],
        ["param_hashes.py", "--runs", "foo"],
        ["param_hashes.py", "--devices", "0"],
        ["bench_gpu.py", "--repeats", "0"],
        ["bench_gpu.py", "--brax-repeats", "0"],
        ["bench_apex.py", "--repeats", "x"],
        ["host_cartpole_scores.py", "--repeats", "2"],  # it has no repeats
        ["device_time.py", "--repeats", "2"],
        ["hlo_kernels.py", "--repeats", "2"],
        # More pinned devices than usable cores: refused before any worker
        # starts (it hung, waiting at the barrier for workers never started).
        ["bench_devices.py", "--per-core", "--devices", str(os.cpu_count() + 1)],
        # Sizes and counts are positive, refused before any work (bench_ppo's
        # was a traceback after its first row had trained).
        ["bench_ppo.py", "--throughput-envs", "0"],
        ["bench_apex.py", "--total-steps", "0"],
        ["bench_sweep.py", "--settings", "0"],
        ["pbt_vs_sweep.py", "--population", "0"],
        ["bench_devices.py", "--cpu-devices", "-1"],
        ["bench_replay.py", "--capacity", "0"],
        # Sizes the library refuses once combined (below one update): the
        # library's one line, not a traceback from inside it.
        ["bench_apex.py", "--total-steps", "10"],
        # A NaN or negative budget skipped every row, exit status 0.
        ["bench_gpu.py", "--budget-seconds", "-1"],
        ["bench_gpu.py", "--budget-seconds", "nan"],
        ["reproduce.py", "--rows", "foo:bar"],
    ],
)
def test_a_bad_argument_is_one_line_and_exit_2(argv, on_scripts_path, monkeypatch,
                                               capsys):  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(SCRIPTS / argv[0]), run_name="__main__")
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.splitlines()[-1].startswith(
        f"{argv[0]}: error: "
    )


# Every script but these runs at --tiny size below (bench_gpu.py: its rows).
NOT_BENCHMARKS = {"bench_gpu.py", "reproduce.py", "param_hashes.py"}
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
def test_script_runs_at_toy_size(
    script, on_scripts_path, monkeypatch, tmp_path, purejaxrl_stub
):
    out = tmp_path / "report.json"
    argv = [script, "--tiny", "--json", str(out)]
    if script in ("bench_ppo.py", "bench_recurrent.py"):  # the peer's path too
        argv += ["--purejaxrl", purejaxrl_stub]
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(SCRIPTS / script), run_name="__main__")
    report = json.loads(out.read_text())
    assert not [s for s in report["skipped"] if "failed" in s["status"]]
    assert report["rows"], f"{script} reported nothing"
    for row in report["rows"]:
        assert row["runs"], row
        for figures in row["runs"]:
            assert figures, row
            assert all(isinstance(v, float | int) for v in figures.values()), row
    if script == "bench_ppo.py":
        assert any(r["name"] == "PureJaxRL ppo.py" for r in report["rows"])
        # Ours over the peer, as the docs quote it.
        assert any(r["name"] == "ratio ppo / PureJaxRL ppo.py" for r in report["rows"])
    if script == "bench_recurrent.py":
        assert any(r["name"] == "PureJaxRL ppo_rnn.py" for r in report["rows"])


@pytest.mark.timeout(300)
def test_param_hashes_prints_a_hash_per_run(on_scripts_path, monkeypatch, capfd):
    # One short run on one device, in its own process as the script runs it;
    # the parent runs here (one launch fewer). The child writes to the file
    # descriptor it inherits: capfd, not capsys. A failed child is SystemExit.
    argv = ["param_hashes.py", "--runs", "ppo", "--devices", "1"]
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(SCRIPTS / "param_hashes.py"), run_name="__main__")
    out = capfd.readouterr().out
    assert re.search(r"^ppo devices=1 [0-9a-f]{16}$", out, re.M), out


# A stand-in for a PureJaxRL checkout (`--purejaxrl DIR`): `purejaxrl/ppo.py`
# with a `make_train` whose output has ppo.py's metrics' layout ([updates,
# steps, envs]), so the peer's code path runs in CI without the real one.
STUB_PPO = """\
import jax


def make_train(config):
    steps, envs = config["NUM_STEPS"], config["NUM_ENVS"]
    updates = config["TOTAL_TIMESTEPS"] // (steps * envs)

    def train(key):
        draw = jax.random.uniform(key, (updates, steps, envs))
        return {"metrics": {"returned_episode": draw > 0.5,
                            "returned_episode_returns": 100 * draw}}

    return train
"""


# ppo_rnn.py's stand-in: its output's "metric" has the same layout.
STUB_PPO_RNN = STUB_PPO.replace('{"metrics":', '{"metric":')


@pytest.fixture
def purejaxrl_stub(tmp_path, monkeypatch):
    """A stub PureJaxRL checkout's path; its `ppo` module forgotten afterwards."""
    (tmp_path / "peer" / "purejaxrl").mkdir(parents=True)
    (tmp_path / "peer" / "purejaxrl" / "ppo.py").write_text(STUB_PPO)
    (tmp_path / "peer" / "purejaxrl" / "ppo_rnn.py").write_text(STUB_PPO_RNN)
    monkeypatch.setattr(sys, "path", list(sys.path))  # load_purejaxrl adds to it
    for name in ("ppo", "ppo_rnn"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    yield str(tmp_path / "peer")
    for name in ("ppo", "ppo_rnn"):
        sys.modules.pop(name, None)


ROWS = ["ppo_cartpole", "brax_ant", "apex_dqn", "breakout_minatar"]
ROWS += ["cnn_learners", "recurrent"]


@pytest.mark.timeout(400)
@pytest.mark.parametrize("row", ROWS)
def test_gpu_suite_row_runs_at_toy_size(row, on_scripts_path, tmp_path, purejaxrl_stub):
    import bench_gpu

    out = tmp_path / "suite.json"
    md = tmp_path / "suite.md"
    argv = ["--tiny", "--rows", row, "--json", str(out), "--markdown", str(md)]
    # ppo_cartpole's row traces both contenders with --profile (its peer: the
    # stub PureJaxRL); every row reads its traces through the same
    # `_add_device_time`, so one traced row covers it (brax_ant's traces cost
    # 12 of its 34 s).
    profiled = row == "ppo_cartpole"
    if profiled:
        argv += ["--profile", str(tmp_path / "traces")]
    if row == "ppo_cartpole":
        argv += ["--purejaxrl", purejaxrl_stub]
    bench_gpu.main(argv)
    report = json.loads(out.read_text())
    failed = [s["why"] for s in report["skipped"] if "failed" in s["status"]]
    assert not failed
    rows = report["rows"]
    assert rows, f"{row} reported nothing"
    for r in rows:
        for figures in r["runs"]:
            assert all(isinstance(v, float | int) for v in figures.values())
    # Peers' rows carry a ratio to ours.
    if row in ("ppo_cartpole", "brax_ant", "apex_dqn"):
        assert any(r["name"].startswith("ratio") for r in rows)
    if row == "brax_ant":  # ours' chunk clock beside TrainResult's own figure
        ours = next(r for r in rows if r["name"] == "purejaxdrl")
        assert ours["runs"][0]["own_steps_per_s"] > 0
    assert report["machine"]["backend"] == "cpu"
    assert md.read_text().startswith("### purejaxdrl GPU suite (tiny)")
    traced = {
        r["name"]: r["runs"][0] for r in rows if r["name"].endswith("device time")
    }
    if profiled:  # ours and the peer traced: XLA:CPU's operations read
        expected = {"ours: device time", "PureJaxRL: device time"}
        assert set(traced) == expected
        assert all(0 < f["busy_pct"] <= 100 and f["ops"] > 0 for f in traced.values())
    else:
        assert not traced


def test_brax_clock_note_flags_a_chunk_clock_off_by_over_a_tenth(on_scripts_path):
    import bench_brax

    # A record read a chunk late: 3 chunks' clock counts 2 chunks' steps over
    # one chunk's time, twice TrainResult's figure.
    note = bench_brax.clock_note({"steps_per_s": 200.0, "own_steps_per_s": 100.0})
    assert note == "CLOCK DISAGREES: chunk clock +100% vs own_steps_per_s"
    low = bench_brax.clock_note({"steps_per_s": 85.0, "own_steps_per_s": 100.0})
    assert low == "CLOCK DISAGREES: chunk clock -15% vs own_steps_per_s"
    assert bench_brax.clock_note({"steps_per_s": 95.0, "own_steps_per_s": 100.0}) == ""
    assert bench_brax.clock_note({"steps_per_s": 95.0}) == ""  # brax's side


def test_playground_budget_is_whole_brax_epochs(on_scripts_path):
    import bench_playground

    # brax's trainer runs its 2 epochs of ceil(updates / 2) updates: 25
    # asked are 24 on both sides (brax would train 26 beside our 25).
    one = bench_playground.config_for(False).steps_per_update
    config = bench_playground.config_for(False, total_steps=25 * one)
    assert config.total_steps == 24 * one and config.num_updates == 24
    assert bench_playground.config_for(False, total_steps=one).num_updates == 2


def test_purejaxrl_return_is_each_seeds_mean_then_their_mean(on_scripts_path):
    import bench_ppo

    # [seeds 2, updates 2, steps 2, envs 2]; num_logs 2: the last update only.
    # Seed 0 ends one episode of 10 there, seed 1 three of 1 (and one of 50
    # in the first update, outside the window). By hand: (10 + 1) / 2 = 5.5
    # (pooling the episodes would give 13 / 4 = 3.25).
    done = np.zeros((2, 2, 2, 2))
    returns = np.zeros((2, 2, 2, 2))
    done[0, 1, 0, 0], returns[0, 1, 0, 0] = 1, 10
    done[1, 1, :, 0], returns[1, 1, :, 0] = 1, 1
    done[1, 1, 0, 1], returns[1, 1, 0, 1] = 1, 1
    done[1, 0, 0, 0], returns[1, 0, 0, 0] = 1, 50
    metrics = {"returned_episode": done, "returned_episode_returns": returns}
    assert bench_ppo.purejaxrl_return(metrics, 2) == pytest.approx(5.5)
    # One run (no seeds axis): its episodes' mean.
    one = {k: v[1] for k, v in metrics.items()}
    assert bench_ppo.purejaxrl_return(one, 2) == pytest.approx(1.0)


def test_replay_sample_timing_keeps_every_gather(on_scripts_path):
    # The timed program must gather every leaf of a batch: kept live only
    # through one leaf, XLA compiled the others' gathers away.
    import re

    import bench_replay
    import jax

    import purejaxdrl as pjd

    buffer = pjd.replay.make_uniform_buffer(64, 4)
    items = bench_replay.transition(8)
    first = jax.tree.map(lambda x: x[0], items)
    state = bench_replay.fill(buffer.add, buffer.init(first), items, 2)
    run = jax.jit(bench_replay.scan_samples(buffer.sample, 2))
    hlo = run.lower((state, 0.0)).compile().as_text()
    gathered = re.findall(r"= f32\[([\d,]*)\]\S* gather\(", hlo)
    # obs and next_obs ([4, 8], with a unit axis or not as XLA lays them out),
    # reward and discount: each leaf's gather (the action's is an s32 one).
    assert sorted(shape.endswith(",8") for shape in gathered) == [0, 0, 1, 1]


def test_ppo_rnn_scanned_gru_resets_its_carry_where_an_episode_began(
    on_scripts_path,
):
    # ppo_rnn.py's ScannedRNN, rebuilt for flax >= 0.8: [time, batch] inputs,
    # a zero carry wherever `resets` is set, as its own code does.
    import bench_recurrent
    import jax
    import jax.numpy as jnp
    import numpy as np

    gru = bench_recurrent.ScannedGRU()
    ins = jax.random.normal(jax.random.key(0), (3, 2, 5))
    carry = bench_recurrent.ScannedGRU.initialize_carry(2, 5)
    assert carry.shape == (2, 5) and not carry.any()
    params = gru.init(jax.random.key(1), carry, (ins, jnp.zeros((3, 2), bool)))
    ones = jnp.ones((2, 5))
    reset = jnp.array([[True, False], [False, False], [False, False]])
    fresh, ys_fresh = gru.apply(params, carry, (ins, jnp.zeros((3, 2), bool)))
    mixed, ys = gru.apply(params, ones, (ins, reset))
    np.testing.assert_allclose(ys[:, 0], ys_fresh[:, 0], rtol=1e-6)  # reset: zeros
    assert not np.allclose(ys[:, 1], ys_fresh[:, 1])  # no reset: the ones carried
    assert fresh.shape == mixed.shape == (2, 5)


def test_peer_benchmarks_train_on_one_device_as_their_peers(on_scripts_path):
    # PureJaxRL's make_train and rejax run on one device; devices 0 would
    # give ours every local device (the --tiny sizes set 1, so CI missed it).
    import bench_ppo
    import bench_pqn

    sizes = {**bench_ppo.STANDARD, "num_envs": 2048}
    assert bench_ppo.algo_config("ppo", sizes).devices == 1
    assert bench_ppo.algo_config("ppo", bench_ppo.STANDARD).devices == 1
    assert bench_pqn.config_for(False).devices == 1


def test_reproduce_interval_uses_students_t(on_scripts_path):
    import reproduce

    values = np.arange(20, dtype=np.float64)
    # t(0.975, 19) = 2.093 (tables); 1.96 would make the interval 7% narrower.
    expected = 2.093 * values.std(ddof=1) / np.sqrt(20)
    assert reproduce.interval(values) == pytest.approx(expected, rel=1e-3)
    assert np.isnan(reproduce.interval(values[:1]))


def test_reproduce_steps_per_s_is_all_seeds_steps_over_training_seconds(
    on_scripts_path, monkeypatch, tmp_path
):
    import types

    import reproduce

    # Two runs alone: 100 steps in 1 s, 100 in 3 s. All seeds' figure: 200 / 4
    # = 50 (the mean of the runs' own 100 and 33.3 would be 66.7).
    runs = iter([(1.0, 10.0), (3.0, 20.0)])

    def train(config, **kwargs):
        seconds, ret = next(runs)
        return types.SimpleNamespace(
            env_steps=100, train_seconds=seconds, steps_per_second=100 / seconds,
            mean_return=ret, eval_return=ret, run_dir=tmp_path / str(seconds),
        )  # fmt: skip

    monkeypatch.setattr(reproduce.pjd, "train", train)
    monkeypatch.setattr(reproduce, "load_curves", lambda dirs: dirs)
    monkeypatch.setattr(reproduce, "plot_curves", lambda *a, **k: None)
    preset = reproduce.pjd.load_preset("cartpole", "ppo")
    final, steps_per_s, trained, _ = reproduce._runs_alone(preset, 2, tmp_path)
    assert list(final) == [10.0, 20.0] and trained == 100
    assert steps_per_s == pytest.approx(50.0)
    # The table marks the older rows recorded as a mean of runs.
    old = {"steps_per_s": 66.7, "steps_per_s_of": "mean of runs"}
    assert reproduce.steps_per_s_text(old) == "67 ¹"
    assert reproduce.steps_per_s_text({"steps_per_s": 50.0}) == "50"


def test_reproduce_records_a_row_only_with_its_own_seeds(
    on_scripts_path, monkeypatch, tmp_path, capsys
):
    # `--seeds 2` ("a look") rewrote README.md, docs/scores.* and the row's
    # curves with its 2-seed figures. Now a look prints its line and writes
    # nothing there; the row's own 5 seeds record it. No training: a stand-in
    # sweep returns final returns 400 ... 500 in 2 s of training.
    import shutil
    import types

    import reproduce

    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("scores.json", "scores.md"):
        shutil.copy(reproduce.DOCS / name, docs / name)
    readme = tmp_path / "README.md"
    shutil.copy(reproduce.README, readme)
    monkeypatch.setattr(reproduce, "DOCS", docs)
    monkeypatch.setattr(reproduce, "README", readme)
    monkeypatch.chdir(tmp_path)  # the preset's run_dir, runs/, lands here
    committed = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}

    def sweep(preset, algo, seeds, **kwargs):
        return types.SimpleNamespace(
            final_return=np.linspace(400.0, 500.0, seeds), env_steps=1000 * seeds,
            train_seconds=2.0, run_dir=tmp_path / "runs" / f"sweep-{seeds}",
        )  # fmt: skip

    monkeypatch.setattr(reproduce.pjd, "sweep", sweep)
    monkeypatch.setattr(reproduce, "plot_sweep", lambda r, out: out.write_bytes(b"x"))
    argv = ["reproduce.py", "--rows", "cartpole:ppo"]
    monkeypatch.setattr(sys, "argv", [*argv, "--seeds", "2"])
    reproduce.main()
    out = capsys.readouterr().out
    kept = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert {p: b for p, b in kept.items() if "runs" not in p.parts} == committed
    assert not (docs / "curves").exists()
    assert (tmp_path / "runs" / "2_seeds_cartpole_ppo.png").exists()
    # Its line, as scores.md would show it: mean 450, 95% interval
    # t(0.975, 1) 12.706 x std 70.71 / sqrt(2) = 635.3, 500 >= 475 on 1 of 2,
    # 2,000 steps in 2 s.
    line = "| cartpole | ppo | 500,000 | 2 | 450.0 ± 635.3 | 1/2 (>= 475) |"
    assert line in out and "| 1,000 |" in out, out
    assert "not recorded" in out and "curves are in runs/2_seeds_cartpole_ppo" in out
    assert "`python scripts/reproduce.py --rows cartpole:ppo` trains its 5" in out

    monkeypatch.setattr(sys, "argv", argv)
    started = time.time()
    reproduce.main()
    scores = json.loads((docs / "scores.json").read_text())
    before = json.loads(committed[docs / "scores.json"])
    assert scores["cartpole:ppo"]["seeds"] == 5
    assert scores["cartpole:ppo"]["final"] == [400.0, 425.0, 450.0, 475.0, 500.0]
    # The row names the code that trained it (this checkout's commit).
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
        cwd=pathlib.Path(reproduce.__file__).parent,
    ).stdout.strip()  # fmt: skip
    assert scores["cartpole:ppo"]["commit"].rstrip("+") == head
    # The UTC day it was recorded on, year-month-day (by the clock around it).
    days = {time.strftime("%Y-%m-%d", time.gmtime(t)) for t in (started, time.time())}
    assert scores["cartpole:ppo"]["date"] in days
    assert {k: v for k, v in scores.items() if k != "cartpole:ppo"} == {
        k: v for k, v in before.items() if k != "cartpole:ppo"
    }
    # 5 seeds: t(0.975, 4) 2.776 x std 39.53 / sqrt(5) = 49.1; 2 of 5 >= 475.
    assert (
        "| cartpole | ppo | 500,000 | 5 | 450.0 ± 49.1 | 2/5 (>= 475) |"
        in (docs / "scores.md").read_text()
    )
    assert "| cartpole | ppo | 500k | 450.0 ± 49.1 | 475: 2/5 |" in readme.read_text()
    assert (docs / "curves" / "cartpole_ppo.png").exists()


def test_bench_devices_workers_train_together_and_record_their_windows(
    on_scripts_path, monkeypatch, tmp_path
):
    # A worker of --per-core: compiled, it waits for its sibling's file at the
    # barrier, and its training (steps/s) starts after the wait.
    import threading
    import time

    import bench_devices
    import harness

    import purejaxdrl as pjd
    from purejaxdrl.training.loop import ChunkLoop

    monkeypatch.setenv(bench_devices.BARRIER, f"{tmp_path}:2")
    fired = []

    def sibling() -> None:
        fired.append(time.monotonic())
        (tmp_path / "sibling").touch()

    threading.Timer(1.0, sibling).start()
    before = ChunkLoop.run_schedule
    config = pjd.apply_overrides(pjd.load_preset("cartpole", "ppo").config,
                                 harness.TINY)  # fmt: skip
    window: dict[str, float] = {}
    with bench_devices.aligned_window(window):
        result = pjd.train(config, console=False)
    assert ChunkLoop.run_schedule is before
    assert window["start"] >= fired[0] and window["end"] > window["start"]
    assert result.train_seconds <= window["end"] - window["start"] + 0.05


def test_bench_devices_barrier_gives_up_when_a_run_never_arrives(
    on_scripts_path, tmp_path
):
    import bench_devices

    with pytest.raises(TimeoutError, match="1 of 2 pinned runs"):
        bench_devices.wait_at_barrier(f"{tmp_path}:2", timeout=0.05)
    bench_devices.wait_at_barrier(f"{tmp_path}:1", timeout=0.05)  # all there


def test_harness_report_and_budget(on_scripts_path, tmp_path, capsys):
    import harness

    report = harness.Report("t", machine={**harness.describe_machine()})
    order = []
    runs = harness.interleave(
        {
            "a": lambda r: order.append("a") or {"x": float(r)},
            "b": lambda r: order.append("b") or {"x": 10.0 + r},
        },
        3,
    )
    assert runs == {"a": [{"x": 0.0}, {"x": 1.0}, {"x": 2.0}], "b": [
        {"x": 10.0}, {"x": 11.0}, {"x": 12.0}]}  # fmt: skip
    assert order == ["a", "b", "b", "a", "a", "b"]  # no one always first
    row = report.add("r", "a", runs["a"])
    assert row.medians() == {"x": 1.0}
    assert harness.spread([3.0, 1.0, 2.0]) == {"median": 2.0, "min": 1.0, "max": 3.0}
    report.skip("later", "out of budget")
    report.write(str(tmp_path / "r.json"), str(tmp_path / "r.md"))
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["rows"][0]["median"] == {"x": 1.0}
    assert data["skipped"] == [
        {"row": "later", "status": "not run", "why": "out of budget"}
    ]
    machine = data["machine"]
    assert machine["cpu_cores"] >= 1 and "load_average_after" in machine
    assert machine["commit"] != "?"  # the repository's, this file's checkout
    assert "| r | a | x 1 [0-2] |" in (tmp_path / "r.md").read_text()
    assert not harness.Budget(0.0).allows(1.0)
    assert harness.Budget(None).allows(1e9)
    # Counts (device_time's ops and gaps) print without decimals.
    assert report.add("r", "c", [{"gaps": 14}]).runs == [{"gaps": 14}]
    assert capsys.readouterr().out.endswith(" gaps 14\n")  # not "14.0"


def test_bench_ppo_peer_ratio_is_ppo_over_it_whatever_algo_order(
    on_scripts_path, monkeypatch, purejaxrl_stub
):
    # --algo a2c ppo: the peer runs PPO, so its ratio is ppo's over it (it
    # was a2c's). Canned figures stand in for the runs: no training here.
    import bench_ppo
    import harness

    speeds = {"a2c": 1.0, "ppo": 2.0, "PureJaxRL ppo.py": 8.0}
    monkeypatch.setattr(
        bench_ppo,
        "interleave",
        lambda contenders, repeats: {
            n: [{"steps_per_s": speeds[n]}] for n in contenders
        },
    )
    monkeypatch.setattr(bench_ppo, "add_ceilings", lambda *args: None)
    report = harness.Report("t", machine={**harness.describe_machine()})
    peer = bench_ppo.load_purejaxrl(purejaxrl_stub)
    bench_ppo.run_config(report, "tiny", {"a2c": None, "ppo": None}, peer, 1)
    ratios = {
        r.name: r.runs[0]["steps_per_s"] for r in report.rows if "ratio" in r.name
    }
    assert ratios == {"ratio ppo / a2c": 2.0, "ratio ppo / PureJaxRL ppo.py": 0.25}


def test_gpu_suite_stops_cleanly_on_ctrl_c(on_scripts_path, monkeypatch, tmp_path,
                                          capsys):  # fmt: skip
    # A row cut by Ctrl-C after its first size: that size's line is on disk,
    # the cut row and the ones never started are recorded as such, the table
    # is printed, and stderr is one line (it was a 25-line traceback ending
    # "nothing was saved", no table, and no sign in the JSON of a cut run).
    import argparse

    import bench_gpu

    def row(report, args, budget):
        report.add("fake 64 envs", "purejaxdrl sweep", [{"steps_per_s": 1.0}])
        report.skip("fake", "1024 envs: out of budget")
        raise KeyboardInterrupt  # as Ctrl-C mid-row

    monkeypatch.setitem(bench_gpu.ROWS, "fake", row)
    monkeypatch.setitem(bench_gpu.ROWS, "later", row)
    out, md = tmp_path / "gpu.json", tmp_path / "gpu.md"
    args = argparse.Namespace(rows=["fake", "later"], tiny=True, budget_seconds=None,
                              json=str(out), markdown=str(md))  # fmt: skip
    with pytest.raises(SystemExit) as exit_:
        bench_gpu.run_rows(args)
    assert exit_.value.code == 130
    std = capsys.readouterr()
    assert std.err == (
        "bench_gpu.py: interrupted during fake; the table above has what finished\n"
    )
    data = json.loads(out.read_text())
    assert [r["row"] for r in data["rows"]] == ["fake 64 envs"]
    statuses = [(s["row"], s["status"]) for s in data["skipped"]]
    cut = [("fake", "interrupted"), ("later", "interrupted")]
    assert statuses == [("fake", "not run"), *cut]
    assert data["skipped"][2]["why"] == "Ctrl-C before it started"
    assert data["machine"]["interrupted_during"] == "fake"
    assert "| fake 64 envs | purejaxdrl sweep |" in md.read_text()
    assert "| later | interrupted | | Ctrl-C before it started |" in std.out  # table
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpu.json", "gpu.md"]


def test_bench_networks_restores_the_packages_convolution(on_scripts_path, monkeypatch):
    import bench_networks

    conv = bench_networks.conv
    built = conv.conv_valid
    monkeypatch.setattr(bench_networks, "_measure", lambda *a: {"x": 1.0})
    assert bench_networks.measure("nature", "lax.conv", 8, 1) == {"x": 1.0}
    assert conv.conv_valid is built


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


def _trace(directory: pathlib.Path, events: list[dict]) -> None:
    # A trace file where jax.profiler.trace(directory) puts it.
    run = directory / "plugins" / "profile" / "2026_11_29_00_00_00"
    run.mkdir(parents=True)
    with gzip.open(run / "host.trace.json.gz", "wt") as f:
        json.dump({"displayTimeUnit": "ns", "traceEvents": events}, f)


def _names(pid: int, process: str, threads: dict[int, str]) -> list[dict]:
    out = [{"ph": "M", "pid": pid, "name": "process_name", "args": {"name": process}}]
    for tid, name in threads.items():
        out.append(
            {
                "ph": "M",
                "pid": pid,
                "tid": tid,
                "name": "thread_name",
                "args": {"name": name},
            }
        )
    return out


def _op(
    pid: int, tid: int, start: float, end: float, name: str, hlo: str | None
) -> dict:
    args = {"hlo_op": hlo} if hlo else {}
    return {"ph": "X", "pid": pid, "tid": tid, "ts": start, "dur": end - start,
            "name": name, "args": args}  # fmt: skip


def test_device_time_reads_a_gpus_streams_and_a_cpus_operations(
    on_scripts_path, tmp_path
):
    import device_time

    # A GPU: kernels on a compute stream at [0, 10], [12, 20] and [200, 230] µs
    # and a copy on another at [15, 40]; the device's derived "XLA Ops" line
    # and the host's events repeat that time and must not count. By hand: busy
    # [0, 10] + [12, 40] + [200, 230] = 68 of a 230 µs span; idle 2 and 160 µs,
    # one of them >= 100; op durations 10, 8, 30, 25 (median 17.5); fusion.1
    # ran 40 of the ops' 73 µs, the copy 25, fusion.2 8.
    gpu = _names(1, "/device:GPU:0", {10: "Stream #13(Compute)", 11: "Stream #14",
                                      12: "XLA Ops"})  # fmt: skip
    gpu += _names(2, "/host:CPU", {20: "python"})
    gpu += [
        _op(1, 10, 0, 10, "loop_fusion", "fusion.1"),
        _op(1, 10, 12, 20, "loop_fusion_2", "fusion.2"),
        _op(1, 10, 200, 230, "loop_fusion", "fusion.1"),
        _op(1, 11, 15, 40, "MemcpyD2H", None),
        _op(1, 12, 0, 230, "fusion.1", "fusion.1"),
        _op(2, 20, 0, 500, "ExecuteHelper", "fusion.1"),
    ]
    _trace(tmp_path / "gpu", gpu)
    figures, note = device_time.read(tmp_path / "gpu")
    assert figures == pytest.approx(
        {
            "busy_pct": 100 * 68 / 230,
            "span_s": 230e-6,
            "ops": 4,
            "op_us": 17.5,
            "gaps": 1,
            "gap_s": 160e-6,
            "max_gap_ms": 0.16,
        }  # fmt: skip
    )
    assert note == (
        "fusion.1 55%, MemcpyD2H 34%, fusion.2 11%"
        " (whole trace: no timed annotation in it)"
    )

    # XLA:CPU: operations are host events with an HLO name; a loop's event
    # holds its body's operations ([10, 20] and [30, 60]) and is left out, as
    # is Python's event without one. Busy 40 of a 50 µs span, one 10 µs gap.
    cpu = _names(3, "/host:CPU", {30: "tf_XLAPjRtCpuClient", 31: "python"})
    cpu += [
        _op(3, 30, 0, 100, "while", "while.1"),
        _op(3, 30, 10, 20, "fusion", "fusion.3"),
        _op(3, 30, 30, 60, "fusion", "fusion.4"),
        _op(3, 31, 0, 200, "PjitFunction", None),
    ]
    _trace(tmp_path / "cpu", cpu)
    figures, note = device_time.read(tmp_path / "cpu")
    assert figures == pytest.approx(
        {
            "busy_pct": 80.0,
            "span_s": 50e-6,
            "ops": 2,
            "op_us": 20.0,
            "gaps": 0,
            "gap_s": 0.0,
            "max_gap_ms": 0.01,
        }  # fmt: skip
    )
    assert note == "fusion.4 75%, fusion.3 25% (whole trace: no timed annotation in it)"
    with pytest.raises(FileNotFoundError, match="no .*trace.json.gz under"):
        device_time.read(tmp_path / "none")


def test_device_time_counts_only_the_timed_annotations(on_scripts_path, tmp_path):
    import device_time

    # XLA:CPU's operations: one at [0, 10] µs before the timed region (the
    # setup before a compile), then two `timed` annotations on the Python
    # thread, [1000, 1100] and [5000, 5200], holding ops [1000, 1040],
    # [1060, 1100] and [5000, 5200]. By hand, within the windows only: spans
    # 100 + 200, busy 80 + 200 = 280 of 300, one 20 µs gap; the 990 µs
    # before the first window and the 3900 µs between windows are not gaps.
    events = _names(3, "/host:CPU", {30: "tf_XLAPjRtCpuClient", 31: "python"})
    events += [
        _op(3, 30, 0, 10, "fusion", "fusion.0"),
        _op(3, 31, 1000, 1100, "timed", None),
        _op(3, 30, 1000, 1040, "fusion", "fusion.1"),
        _op(3, 30, 1060, 1100, "fusion", "fusion.1"),
        _op(3, 31, 5000, 5200, "timed", None),
        _op(3, 30, 5000, 5200, "fusion", "fusion.2"),
    ]
    _trace(tmp_path / "cpu", events)
    figures, note = device_time.read(tmp_path / "cpu", gap_us=15.0)
    assert figures == pytest.approx(
        {
            "busy_pct": 100 * 280 / 300,
            "span_s": 300e-6,
            "ops": 3,
            "op_us": 40.0,
            "gaps": 1,
            "gap_s": 20e-6,
            "max_gap_ms": 0.02,
        }  # fmt: skip
    )
    assert note == "fusion.2 71%, fusion.1 29%"


def test_timed_after_opens_at_the_first_call_and_closes_at_the_last(
    on_scripts_path,
):
    import device_time

    timed = device_time.TimedAfter(2, 3)  # brax's epochs: between calls 2 and 3
    states = []
    for _ in range(4):
        timed.tick()
        states.append(timed.open)
    assert states == [False, True, False, False]
    timed.close()  # after the trainer returns: nothing left open
    assert not timed.open


def test_traced_marks_the_packages_training_loops_timed(on_scripts_path, tmp_path):
    # A traced sweep: its device time is that of the chunks (the timed
    # annotation that training_timed puts around a batch), not the compile.
    import device_time
    import harness

    import purejaxdrl as pjd
    from purejaxdrl.sweeps import program

    before = program.train_batch
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "ppo").config, harness.TINY
    )
    figures = device_time.traced(
        lambda seed: {"return": float(pjd.sweep(config, seeds=1, console=False)
                                      .final_return[0])},
        0,
        str(tmp_path),
    )  # fmt: skip
    assert program.train_batch is before  # the patch undone
    with gzip.open(device_time.trace_files(tmp_path)[-1], "rt") as f:
        events = json.load(f)["traceEvents"]
    windows = device_time.timed_windows(events)
    assert len(windows) == 1 and np.isfinite(figures["return"])
    first_op = min(op[0] for op in device_time.device_events(events))
    assert first_op < windows[0][0]  # init ran before it, outside the region
    read, note = device_time.read(tmp_path)
    assert "whole trace" not in note and read["ops"] > 0


def test_source_commit_is_the_short_head_plus_for_tracked_edits_only(
    on_scripts_path, monkeypatch, tmp_path
):
    from harness import machine

    # A throwaway repository holding a stand-in harness.py: its commit is
    # what `git rev-parse --short` names; `+` for an edited tracked file, not
    # for an untracked one; `?` outside any repository.
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    monkeypatch.setattr(machine, "__file__", str(outside / "harness.py"))
    assert machine.source_commit() == "?"
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    (repo / "harness.py").write_text("x = 1\n")
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "harness.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    full = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    monkeypatch.setattr(machine, "__file__", str(repo / "harness.py"))
    clean = machine.source_commit()
    assert 7 <= len(clean) < len(full) and full.startswith(clean), (clean, full)
    (repo / "notes.txt").write_text("untracked\n")
    assert machine.source_commit() == clean
    (repo / "harness.py").write_text("x = 2\n")
    assert machine.source_commit() == clean + "+"
