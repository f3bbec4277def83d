"""The benchmark scripts' refusals, and the GPU suite's budget and exit status.

No training here: bad input is refused before any work, and the suite's
loop runs stand-in rows (tests/test_scripts.py runs the real ones).
"""

import argparse
import json
import os
import runpy
import sys

import pytest

from tests.test_scripts import SCRIPTS


@pytest.fixture(autouse=True)
def scripts_first(monkeypatch):
    """`scripts/` first on sys.path, as `python scripts/NAME.py` has it."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    monkeypatch.setenv("XLA_FLAGS", os.environ.get("XLA_FLAGS", ""))


def _refusal(argv: list[str], monkeypatch, capsys) -> str:
    """The one stderr line of `python scripts/ARGV`, checked: exit status 2."""
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(SCRIPTS / argv[0]), run_name="__main__")
    err = capsys.readouterr().err
    assert exit_.value.code == 2, err
    assert len(err.splitlines()) == 1, err  # no usage block, no traceback
    assert err.startswith(f"{argv[0]}: error: "), err
    return err


@pytest.mark.parametrize(
    "script", ["bench_gpu.py", "bench_ppo.py", "bench_recurrent.py", "hlo_kernels.py"]
)
def test_a_wrong_purejaxrl_path_is_refused_before_any_work(
    script, monkeypatch, capsys, tmp_path
):
    # It was a traceback: at the row's start (bench_gpu, exit 0, our side of
    # the row lost too), or after every core had trained (bench_recurrent).
    module = "ppo_rnn" if script == "bench_recurrent.py" else "ppo"
    argv = [script, "--tiny", "--purejaxrl", str(tmp_path / "nowhere")]
    err = _refusal(argv, monkeypatch, capsys)
    assert f"nowhere/purejaxrl/{module}.py not found" in err
    assert "git clone https://github.com/luchris429/purejaxrl" in err
    # The inner folder passed instead of the checkout's root: its parent named.
    inner = tmp_path / "peer" / "purejaxrl"
    inner.mkdir(parents=True)
    (inner / f"{module}.py").write_text("")
    argv = [script, "--tiny", "--purejaxrl", str(inner)]
    err = _refusal(argv, monkeypatch, capsys)
    assert f"did you mean its parent, {tmp_path / 'peer'}?" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["device_time.py", "--tiny", "--gap-us", "-5"],  # every interval a gap
        ["bench_policy_lag.py", "--repeats", "2"],  # it was taken and ignored
        ["bench_gpu.py", "--rows", "foo"],  # argparse's usage block is not printed
    ],
)
def test_bad_options_are_one_line(argv, monkeypatch, capsys):
    _refusal(argv, monkeypatch, capsys)


def test_device_time_on_a_folder_without_traces_names_what_to_pass(
    monkeypatch, capsys, tmp_path
):
    # The --profile DIR itself, not DIR/<row>/<contender>: it was a traceback.
    (tmp_path / "ppo_cartpole" / "ours").mkdir(parents=True)
    err = _refusal(["device_time.py", str(tmp_path)], monkeypatch, capsys)
    assert f"no *.trace.json.gz under {tmp_path}/plugins/profile" in err
    assert "pass DIR/<row>/<contender>" in err


def _suite_args(tmp_path, rows: list[str], budget: float | None) -> argparse.Namespace:
    return argparse.Namespace(
        rows=rows,
        tiny=True,
        budget_seconds=budget,
        json=str(tmp_path / "gpu.json"),
        markdown=str(tmp_path / "gpu.md"),
    )


def test_gpu_suite_budget_holds_at_tiny_size(monkeypatch, tmp_path):
    # --tiny ran every row whatever the budget: 20 s ran 92 s.
    import bench_gpu

    def slow(report, args, budget):
        budget.start -= 100.0  # as a row that took 100 s
        report.add("slow", "purejaxdrl", [{"steps_per_s": 1.0}])

    monkeypatch.setitem(bench_gpu.ROWS, "slow", slow)
    monkeypatch.setitem(bench_gpu.ROWS, "next", slow)
    # 20 s: the first row fits the tiny margin (15 s), the next is past it.
    report = bench_gpu.run_rows(_suite_args(tmp_path, ["slow", "next"], 20.0))
    assert [r.row for r in report.rows] == ["slow"]
    assert report.skipped == [("next", "out of budget (0 s left)")]


def test_gpu_suite_exits_1_when_a_row_fails(monkeypatch, tmp_path, capsys):
    # It exited 0 with every row broken: a CI step could not see it.
    import bench_gpu

    def broken(report, args, budget):
        raise ModuleNotFoundError("No module named 'ppo'")

    def fine(report, args, budget):
        report.add("fine", "purejaxdrl", [{"steps_per_s": 1.0}])

    monkeypatch.setitem(bench_gpu.ROWS, "broken", broken)
    monkeypatch.setitem(bench_gpu.ROWS, "fine", fine)
    with pytest.raises(SystemExit) as exit_:
        bench_gpu.run_rows(_suite_args(tmp_path, ["broken", "fine"], None))
    assert exit_.value.code == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        "bench_gpu.py: rows failed: broken"
    )
    data = json.loads((tmp_path / "gpu.json").read_text())
    assert [r["row"] for r in data["rows"]] == ["fine"]  # the others still ran
    # The report says when, with which command and how long.
    assert {"started", "argv", "total_s"} <= set(data["machine"])
    header = (tmp_path / "gpu.md").read_text().splitlines()[2]
    assert "started " in header and "s in all" in header


def test_a_peer_that_fails_to_import_leaves_our_side_running(tmp_path, capsys):
    # PureJaxRL's wrappers import brax: without it the whole row was lost.
    import harness
    from gpu_rows import peers

    (tmp_path / "purejaxrl").mkdir()
    (tmp_path / "purejaxrl" / "ppo.py").write_text("import not_installed_here\n")
    report = harness.Report("t")
    sys.modules.pop("ppo", None)
    try:
        assert peers._load_peer(report, str(tmp_path)) is None
    finally:
        sys.modules.pop("ppo", None)
        sys.path.remove(f"{tmp_path}/purejaxrl")
    [(row, why)] = report.skipped
    assert row == "ppo_cartpole" and why.startswith(f"PureJaxRL ({tmp_path}): ")
    assert why.endswith("ModuleNotFoundError: No module named 'not_installed_here'")
    # Our side ran: the line says so, not "not run" (bh21 #5), and the suite
    # lists the row as failed in part.
    line = f"  [ppo_cartpole] our side ran; the peer failed: PureJaxRL ({tmp_path}): "
    assert line in capsys.readouterr().out
    assert report.failed_rows() == [("ppo_cartpole", "in part")]


def test_a_tiny_clock_check_is_a_code_path_note_not_an_alarm():
    import bench_brax
    import harness

    medians = {"steps_per_s": 200.0, "own_steps_per_s": 100.0}
    assert bench_brax.clock_note(medians, tiny=True) == harness.TINY_NOTE
    assert bench_brax.clock_note(medians).startswith("CLOCK DISAGREES")


def test_tiny_names_the_sizes_it_ignores_in_one_line(capsys):
    # --tiny dropped --ppo-envs / --batch-size silently (bh21 #4).
    import bench_apex
    import bench_gpu

    bench_gpu.parse(["--tiny", "--ppo-envs", "64", "512", "--rows", "ppo_cartpole"])
    assert capsys.readouterr().err.splitlines() == [
        f"{sys.argv[0].split('/')[-1]}: --tiny: --ppo-envs 64 512 ignored (toy sizes)"
    ]
    bench_apex.make_parser().parse_args(["--tiny", "--batch-size", "100"])
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--batch-size 100 ignored" in err
    assert all(a.help for a in bench_apex.make_parser()._actions)
    bench_gpu.parse(["--tiny"])  # nothing given: nothing said
    assert capsys.readouterr().err == ""


def test_bench_brax_help_does_not_import_brax():
    # It took 15 s: brax and the trainers were imported at module load (bh21 #7).
    import subprocess

    code = (
        "import runpy, sys; sys.argv = ['bench_brax.py', '--help']\n"
        "try: runpy.run_path('bench_brax.py', run_name='__main__')\n"
        "except SystemExit: pass\n"
        "print('brax' in sys.modules, file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=SCRIPTS, text=True,
                         capture_output=True, check=True)  # fmt: skip
    assert out.stderr.strip().splitlines()[-1] == "False"
    assert "--eval-envs EVAL_ENVS\n" in out.stdout and "default 128" in out.stdout
