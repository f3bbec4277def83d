"""Learning-curve plots of run and sweep directories."""

import json
import math
import types

import matplotlib.image
import numpy as np
import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.observe.plots import (
    RETURN,
    Curve,
    drawn_curves,
    load_curves,
    plot_curves,
    read_history,
    setting_label,
    short_value,
    sweep_curves,
)
from purejaxdrl.sweeps.report import load_sweep


def _run_dir(root, name, seed, lr, returns):
    d = root / name
    d.mkdir()
    config = pjd.config.to_dict(pjd.load_preset("cartpole").config)
    config["seed"] = seed
    config["ppo"]["learning_rate"] = lr
    (d / "config.yaml").write_text(yaml.safe_dump(config))
    records = [
        {"env_steps": 1000 * (k + 1), "time": 0.5 * (k + 1), "episode/mean_return": r}
        for k, r in enumerate(returns)
    ]
    (d / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return d


@pytest.fixture
def runs(tmp_path):
    return [
        _run_dir(tmp_path, "a", 0, 1e-3, [10, 20, 30]),
        _run_dir(tmp_path, "b", 1, 1e-3, [12, 18, 40]),  # a's other seed
        _run_dir(tmp_path, "c", 0, 3e-4, [5, None, 9]),  # no episode in chunk 2
    ]


def test_runs_differing_only_in_seed_are_one_curve(runs):
    first, second = load_curves(runs)
    # Labelled by what tells the groups apart, not by a folder's name.
    assert first.label == "learning_rate=0.001 (2 seeds)"
    assert len(first.histories) == 2
    assert second.label == "learning_rate=0.0003" and len(second.histories) == 1
    steps, returns = first.series("env_steps")
    assert list(steps) == [1000, 2000, 3000]
    assert returns.tolist() == [[10, 20, 30], [12, 18, 40]]
    _, gap = second.series("time")
    assert gap[0, 1] != gap[0, 1]  # NaN, not a fake 0


def test_a_seed_with_fewer_chunks_cuts_no_other_seeds_curve(tmp_path):
    # A seed still training (or stopped) has 2 of 4 chunks: the curve runs to
    # the longest seed, the short one NaN past its end (not all cut to 2).
    short = _run_dir(tmp_path, "a", 0, 1e-3, [10, 20])
    long = _run_dir(tmp_path, "b", 1, 1e-3, [12, 18, 40, 50])
    (curve,) = load_curves([short, long])
    steps, returns = curve.series("env_steps")
    assert list(steps) == [1000, 2000, 3000, 4000]
    np.testing.assert_array_equal(returns, [[10, 20, np.nan, np.nan], [12, 18, 40, 50]])


def test_plot_command_draws_one_curve_per_setting(runs, tmp_path, capsys):
    cfg = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"total_steps": 512 * 2, "num_logs": 2, "devices": 1, "run_dir": str(tmp_path)},
    )
    grid = {"clip_eps": [0.1, 0.2, 0.3]}
    sweep = pjd.sweep(cfg, grid=grid, seeds=2, write_files=True)
    out = tmp_path / "curves.png"
    assert cli.main(["plot", *map(str, runs), str(sweep.run_dir), "--out", str(out),
                     "--target", "35"]) == 0  # fmt: skip
    # Two from the runs (a with b, and c), three from the sweep's settings.
    assert "wrote" in capsys.readouterr().out
    assert (
        drawn_curves(plot_curves(load_curves([*runs, sweep.run_dir]), out, target=35))
        == 5
    )
    # Read by plots alone, the sweep's curves are what `load_sweep` reads.
    loaded = load_sweep(sweep.run_dir)
    assert [(c.label, c.histories) for c in sweep_curves(sweep.run_dir)] == [
        (f"clip_eps={v}", tuple(loaded.histories[2 * s : 2 * s + 2]))
        for s, v in enumerate(["0.1", "0.2", "0.3"])
    ]
    # The sweep's result in memory gives the curves its directory gives.
    on_disk, in_memory = sweep_curves(sweep.run_dir), load_curves(sweep)
    assert [c.label for c in in_memory] == [c.label for c in on_disk]
    for mine, theirs in zip(in_memory, on_disk, strict=True):
        for a, b in zip(
            mine.series("env_steps"), theirs.series("env_steps"), strict=True
        ):
            np.testing.assert_array_equal(a, b)
    image = matplotlib.image.imread(out)
    assert image.shape[0] >= 400 and image.shape[1] >= 1000
    # Without a suffix it writes a PNG, and says the name it wrote.
    capsys.readouterr()
    assert cli.main(["plot", str(runs[0]), "--out", str(tmp_path / "bare")]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {tmp_path / 'bare.png'}:")
    assert (tmp_path / "bare.png").is_file()


def test_plot_of_a_folder_without_metrics_is_one_line(tmp_path, capsys):
    assert cli.main(["plot", str(tmp_path)]) == 2
    assert "is not a run, sweep or PBT directory" in capsys.readouterr().err
    missing = str(tmp_path / "x" / "a.png")
    assert cli.main(["plot", str(tmp_path), "--out", missing]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_plot_draws_another_metric_and_names_one_no_run_logged(runs, tmp_path, capsys):
    out = tmp_path / "upright.png"
    # a and b log an environment's metric; c does not (another environment).
    for run, values in ((runs[0], [1, 2, 3]), (runs[1], [2, 3, 4])):
        records = read_history(run / "metrics.jsonl")
        for record, v in zip(records, values, strict=True):
            record["env/reward/upright"] = v
        text = "".join(json.dumps(r) + "\n" for r in records)
        (run / "metrics.jsonl").write_text(text)
    argv = ["plot", *map(str, runs), "--out", str(out)]
    assert cli.main([*argv, "--metric", "env/reward/upright"]) == 0
    printed = capsys.readouterr().out
    # c never logged it: left out of the picture, and said so.
    assert f"wrote {out}: 1 curve(s) from 3 folder(s)" in printed
    assert "without env/reward/upright, left out: learning_rate=0.0003" in printed
    assert out.is_file()
    curves = load_curves(runs)
    _, ys = curves[0].series("env_steps", "env/reward/upright")
    np.testing.assert_array_equal(ys, [[1, 2, 3], [2, 3, 4]])
    # Drawn again: the figure there is replaced, and the line says so.
    assert cli.main([*argv, "--metric", "env/reward/upright"]) == 0
    assert f"wrote {out} (replaced): 1 curve(s)" in capsys.readouterr().out
    assert cli.main([*argv, "--metric", "env/reward/uprigth"]) == 2
    err = capsys.readouterr().err
    assert "--metric env/reward/uprigth: no run here logged it; did you mean " in err
    assert "env/reward/upright?" in err and err.count("\n") == 1
    # From Python too: a misspelt metric is refused, not an empty figure.
    with pytest.raises(pjd.ConfigError, match="did you mean env/reward/upright?"):
        plot_curves(curves, tmp_path / "x.png", metric="env/reward/uprigth")
    assert not (tmp_path / "x.png").exists()
    assert (
        drawn_curves(plot_curves(curves[0], tmp_path / "one.png", metric=RETURN)) == 1
    )
    # Logged, but null in every record (no episode ended): one line too.
    records = read_history(runs[2] / "metrics.jsonl")
    text = "".join(json.dumps({**r, "env/rare": None}) + "\n" for r in records)
    (runs[2] / "metrics.jsonl").write_text(text)
    assert cli.main([*argv, "--metric", "env/rare"]) == 2
    assert "--metric env/rare: no run here has no value of it yet" not in (
        err := capsys.readouterr().err
    )
    assert "--metric env/rare: no run here has a value of it yet" in err
    assert cli.main([*argv, "--metric", "zzz"]) == 2
    assert "their records hold env/rare, env/reward/upright, episode/mean_return." in (
        capsys.readouterr().err
    )


def test_setting_labels_name_the_algorithms_fields_bare():
    assert short_value(0.00025) == "0.00025"
    assert short_value(1 / 3) == "0.3333"
    assert short_value((64, 64)) == short_value([64, 64]) == "64x64"
    assert short_value(True) == "True"
    values = {"ppo.learning_rate": 0.001, "network.hidden_sizes": [32, 32]}
    assert setting_label(values, "ppo") == (
        "learning_rate=0.001, network.hidden_sizes=32x32"
    )
    assert setting_label({}, "ppo") == "base"


def test_sweep_directory_curves_by_hand(tmp_path):
    # What plots reads of a sweep directory: the algorithm, settings, seeds and
    # each run's records (runs setting-major).
    meta = {
        "base": {"algo": "impala"},
        "settings": [{"impala.clip_rho": 1.0}, {"impala.clip_rho": 0.5}],
        "seeds": [0, 9],
    }
    (tmp_path / "sweep.yaml").write_text(yaml.safe_dump(meta))
    (tmp_path / "runs").mkdir()
    for run, value in enumerate([1, 2, None, 4]):
        line = json.dumps({"env_steps": 100, "episode/mean_return": value})
        (tmp_path / "runs" / f"run-{run:04d}.jsonl").write_text(line + "\n")
    first, second = load_curves([tmp_path])
    assert [c.label for c in load_curves(tmp_path)] == [first.label, second.label]
    assert first.label == "clip_rho=1" and second.label == "clip_rho=0.5"
    # The legend counts the seeds that logged the metric (sw19 #2: none).
    assert (first.legend(), second.legend()) == ("clip_rho=1 (2 seeds)", "clip_rho=0.5")
    assert first.series("env_steps")[1].tolist() == [[1], [2]]
    missing = read_history(tmp_path / "runs" / "run-0002.jsonl")
    assert missing[0]["env_steps"] == 100
    assert math.isnan(missing[0]["episode/mean_return"])  # null is NaN
    assert second.histories[0] == missing


def test_a_line_cut_off_by_a_kill_is_one_line_naming_it(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text('{"env_steps": 1}\n{"env_steps": 2, "ret')
    from purejaxdrl.observe.plots import read_jsonl

    with pytest.raises(pjd.ConfigError, match=r"metrics.jsonl: line 2 is not JSON"):
        read_jsonl(run / "metrics.jsonl")
    assert cli.main(["plot", str(run), "--out", str(tmp_path / "c.png")]) == 2
    assert "line 2 is not JSON" in capsys.readouterr().err


def test_a_folder_given_twice_is_one_seed_and_time_is_each_seeds_own(runs, tmp_path):
    (curve,) = load_curves([runs[0], f"{runs[0]}/"])
    assert len(curve.histories) == 1
    # Seed b took twice as long per chunk: the time axis is the seeds' mean.
    slow = _run_dir(tmp_path, "slow", 1, 1e-3, [12, 18, 40])
    records = read_history(slow / "metrics.jsonl")
    text = "".join(json.dumps({**r, "time": 2 * r["time"]}) + "\n" for r in records)
    (slow / "metrics.jsonl").write_text(text)
    (curve,) = load_curves([runs[0], slow])
    xs, _ = curve.series("time")
    np.testing.assert_allclose(xs, [0.75, 1.5, 2.25])  # (0.5k + 1.0k) / 2
    np.testing.assert_allclose(curve.series("env_steps")[0], [1000, 2000, 3000])


def test_metrics_without_values_say_why_and_odd_outs_are_one_line(
    runs, tmp_path, capsys
):
    never = _run_dir(tmp_path, "never", 0, 1e-3, [None, None])
    assert cli.main(["plot", str(never), "--out", str(tmp_path / "n.png")]) == 2
    err = capsys.readouterr().err
    assert "episode/mean_return: no run here has a value of it yet: no episode " in err
    assert "did you mean" not in err
    argv = ["plot", str(runs[0]), "--metric", "eval/mean_return"]
    assert cli.main([*argv, "--out", str(tmp_path / "e.png")]) == 2
    assert "no evaluation ran (--eval.episodes N" in capsys.readouterr().err
    # A folder as --out: curves.png inside it.
    assert cli.main(["plot", str(runs[0]), "--out", str(tmp_path)]) == 0
    assert (tmp_path / "curves.png").is_file()


def test_a_file_matplotlib_cannot_write_is_one_line(
    runs, tmp_path, capsys, monkeypatch
):
    from purejaxdrl.observe import plots

    def no_latex(*args, **kwargs):  # what a .pgf without LaTeX raises
        raise RuntimeError("Failed to process string with tex because xelatex")

    monkeypatch.setattr(plots, "plot_curves", no_latex)
    out = str(tmp_path / "c.pgf")
    assert cli.main(["plot", str(runs[0]), "--out", out]) == 2
    assert capsys.readouterr().err.startswith(
        f"purejaxdrl: error: --out {out}: matplotlib could not write"
    )


def _write_records(run, records):
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def test_seeds_chunked_differently_are_matched_by_env_steps(tmp_path):
    # Seed a logged every 640 steps; seed b every 320 up to 1,280 (then resumed
    # with a larger budget: every 640). Each value belongs at its own steps.
    a = _run_dir(tmp_path, "a", 0, 1e-3, [])
    b = _run_dir(tmp_path, "b", 1, 1e-3, [])
    _write_records(a, [
        {"env_steps": s, "time": s / 640, "episode/mean_return": s / 10}
        for s in (640, 1280, 1920, 2560)
    ])  # fmt: skip
    _write_records(b, [
        {"env_steps": s, "time": s / 320, "episode/mean_return": s / 20}
        for s in (320, 640, 960, 1280, 1920, 2560)
    ])  # fmt: skip
    (curve,) = load_curves([a, b])
    steps, returns = curve.series("env_steps")
    np.testing.assert_array_equal(steps, [320, 640, 960, 1280, 1920, 2560])
    nan = np.nan
    np.testing.assert_array_equal(returns, [
        [nan, 64, nan, 128, 192, 256],
        [16, 32, 48, 64, 96, 128],
    ])  # fmt: skip
    # Each seed's time at those steps, interpolated within its own records
    # (a: s / 640 from 640 on, 1.5 at 960 between its records; b: s / 320),
    # averaged over the seeds there: at 960, (1.5 + 3) / 2.
    times, _ = curve.series("time")
    np.testing.assert_allclose(times, [1.0, 1.5, 2.25, 3.0, 4.5, 6.0])
    # Drawn: at 960, a (no record there) counts with 96, between its 64 and
    # 128; at 320, before a's first record, b alone.
    xs, mean, low, high = curve.points("env_steps")
    np.testing.assert_allclose(mean, [16, 48, 72, 96, 144, 192])
    np.testing.assert_allclose(low, [16, 32, 48, 64, 96, 128])
    np.testing.assert_allclose(high, [16, 64, 96, 128, 192, 256])


def test_a_sparse_metric_is_one_joined_line_with_its_seeds_spread(tmp_path):
    # Evaluation every 3rd chunk (and at the end), two seeds: the chunks
    # without one are left out of the drawn points, not gaps between dots.
    runs = []
    for seed, values in ((0, [276.0, 90.0, 300.0]), (1, [84.75, 110.0, 200.0])):
        run = _run_dir(tmp_path, f"s{seed}", seed, 1e-3, [])
        evals = dict(zip((3, 6, 8), values, strict=True))
        _write_records(run, [
            {"env_steps": 1280 * k, "time": 0.1 * k, "episode/mean_return": k,
             "eval/mean_return": evals.get(k)}
            for k in range(1, 9)
        ])  # fmt: skip
        runs.append(run)
    (curve,) = load_curves(runs)
    xs, mean, low, high = curve.points("env_steps", "eval/mean_return")
    np.testing.assert_array_equal(xs, [3840, 7680, 10240])
    np.testing.assert_allclose(mean, [180.375, 100.0, 250.0])
    np.testing.assert_allclose(low, [84.75, 90.0, 200.0])
    np.testing.assert_allclose(high, [276.0, 110.0, 300.0])
    times, *_ = curve.points("time", "eval/mean_return")
    np.testing.assert_allclose(times, [0.3, 0.6, 0.8])
    # A metric with a value in every chunk keeps all its points.
    assert len(curve.points("env_steps")[0]) == 8
    # Drawn: one joined line and one band (not dots and no band).
    import matplotlib.pyplot as plt

    bands = []  # (x, low, high) of each panel
    real = plt.Axes.fill_between

    def fill_between(ax, x, y1, y2, **kwargs):
        bands.append((np.asarray(x), np.asarray(y1), np.asarray(y2)))
        return real(ax, x, y1, y2, **kwargs)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(plt.Axes, "fill_between", fill_between)
        out = tmp_path / "eval.png"
        assert drawn_curves(plot_curves(curve, out, metric="eval/mean_return")) == 1
    (steps, *steps_band), (seconds, *time_band) = bands
    np.testing.assert_array_equal(steps, xs)
    np.testing.assert_allclose(seconds, [0.3, 0.6, 0.8])
    for band in (steps_band, time_band):
        np.testing.assert_allclose(band, [low, high])


def test_plot_of_a_folder_of_runs_names_the_runs_inside(tmp_path, capsys):
    parent = tmp_path / "runs"
    parent.mkdir()
    _run_dir(parent, "cartpole_ppo_1", 0, 1e-3, [1, 2])
    assert cli.main(["plot", str(parent), "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{str(parent)!r} is a folder of runs (train --run-dir makes one run" in err
    assert f"it holds one run, {str(parent / 'cartpole_ppo_1')!r}: pass that." in err
    for name in ("cartpole_ppo_2", "cartpole_ppo_3", "cartpole_ppo_4"):
        _run_dir(parent, name, 0, 1e-3, [1, 2])
    (parent / "notes").mkdir()  # not a run: not counted
    with pytest.raises(
        pjd.ConfigError, match="it holds 4 runs, .* and 1 more: pass"
    ) as e:
        load_curves(parent)
    assert str(e.value).endswith(f"(`purejaxdrl plot {parent}/*`).")
    # What it says to pass plots them.
    assert len(load_curves(sorted(parent.glob("cartpole_ppo_*")))) == 1


def test_runs_differing_only_in_what_cannot_change_training_are_seeds(tmp_path):
    # Evaluation, logging, speed and placement settings: seeds of one curve.
    def run(name, seed, **fields):
        d = _run_dir(tmp_path, name, seed, 1e-3, [1, 2])
        config = yaml.safe_load((d / "config.yaml").read_text())
        for path, value in fields.items():
            *parents, key = path.split("__")
            section = config
            for parent in parents:
                section = section[parent]
            section[key] = value
        (d / "config.yaml").write_text(yaml.safe_dump(config))
        return d

    same = [
        run("a", 0),
        run("b", 1, eval__episodes=4, eval__every=3, eval__stop_at=400.0),
        run("c", 2, scan_unroll=4, num_logs=7, host__env_threads=8),
        run("d", 3, host__actor_devices=1, host__learner_devices=2),
    ]
    (curve,) = load_curves(same)
    assert len(curve.histories) == 4
    # A queue that changes the policy lag, or another budget, is a setting.
    other = [run("e", 0, host__queue_size=4), run("f", 0, total_steps=1000)]
    assert len(load_curves([*same, *other])) == 3


def test_the_time_axis_never_runs_backwards_when_seeds_start_apart(tmp_path):
    # Seed a's first record is at 2,560 steps, seed b's at 2,048 and slower
    # (plot's run: --num-logs 4 and 5). At 2,048 only b had a time (0.321),
    # at 2,560 both ((0.125 + 0.4) / 2): the mean went back. A time is drawn
    # only where every seed has one.
    a = _run_dir(tmp_path, "a", 0, 1e-3, [])
    b = _run_dir(tmp_path, "b", 1, 1e-3, [])
    _write_records(a, [
        {"env_steps": s, "time": t, "episode/mean_return": 1.0}
        for s, t in ((2560, 0.125), (5120, 0.147), (7680, 0.17), (10240, 0.19))
    ])  # fmt: skip
    _write_records(b, [
        {"env_steps": s, "time": t, "episode/mean_return": 2.0}
        for s, t in ((2048, 0.321), (4096, 0.595), (6144, 0.7), (8192, 0.8),
                     (10240, 0.9))
    ])  # fmt: skip
    (curve,) = load_curves([a, b])
    times, mean, *_ = curve.points("time")
    assert np.all(np.diff(times) >= 0), times
    # b at 2,560: 0.321 + (0.595 - 0.321) / 4; at 4,096 a is 0.125 + 0.022 * 0.6.
    np.testing.assert_allclose(times[:2], [(0.125 + 0.3895) / 2, (0.1382 + 0.595) / 2])
    assert len(times) == 7  # 2,560 up to 10,240 (both seeds' steps there)
    # Against env steps every point stays (b alone at 2,048).
    assert len(curve.points("env_steps")[0]) == 8


def test_a_train_result_is_its_own_curve_and_a_missing_directory_one_line():
    # pjd.train writes no directory unless asked: its result's records in
    # memory are the curve, labelled by algorithm and environment.
    history = [
        {"env_steps": 1000 * (k + 1), "time": k + 1.0, RETURN: r}
        for k, r in enumerate([5.0, 7.0])
    ]
    config = pjd.load_preset("cartpole").config
    result = types.SimpleNamespace(history=history, config=config, run_dir=None)
    (curve,) = load_curves(result)
    assert curve.label == "ppo on CartPole-v1"
    steps, returns = curve.series("env_steps")
    assert steps.tolist() == [1000, 2000] and returns.tolist() == [[5.0, 7.0]]
    assert len(load_curves([result, result])) == 2
    with pytest.raises(pjd.ConfigError, match=r"no run directory .*write_files=True"):
        load_curves([result.run_dir])
    with pytest.raises(pjd.ConfigError, match="no records to plot"):
        load_curves(types.SimpleNamespace(history=[], config=config))


def test_a_sweep_result_s_runs_are_grouped_by_setting():
    # Runs go setting-major (plan.run(i) = (setting, seed)): 2 settings x 2 seeds.
    plan = types.SimpleNamespace(
        settings=[{"ppo.clip_eps": 0.1}, {"ppo.clip_eps": 0.2}],
        base=types.SimpleNamespace(algo="ppo"),
        run=lambda i: (i // 2, (0, 7)[i % 2]),
        seeds=(0, 7),
    )
    histories = [[{"env_steps": 10, RETURN: float(i)}] for i in range(4)]
    curves = load_curves(types.SimpleNamespace(plan=plan, histories=histories))
    assert [c.label for c in curves] == ["clip_eps=0.1", "clip_eps=0.2"]
    assert [c.legend() for c in curves] == [f"clip_eps=0.{s} (2 seeds)" for s in (1, 2)]
    assert [c.series("env_steps")[1].ravel().tolist() for c in curves] == [
        [0.0, 1.0],
        [2.0, 3.0],
    ]
    # A PBT result: its population is one curve, as its directory's.
    pbt = types.SimpleNamespace(histories=histories, lineage=[], population=4)
    (curve,) = load_curves(pbt)
    assert curve.label == "PBT population (4 members)"
    assert curve.series("env_steps")[1].ravel().tolist() == [0.0, 1.0, 2.0, 3.0]


# What the fast suite let change in the drawing (mutants7_M7A): the figure is
# caught as it is saved and read back.


def _drawn(monkeypatch, curves, **kwargs):
    """plot_curves's figure, caught at savefig: (first panel, second panel)."""
    from matplotlib.figure import Figure

    caught = []
    monkeypatch.setattr(Figure, "savefig", lambda fig, out: caught.append(fig))
    plot_curves(curves, "unused.png", **kwargs)
    (fig,) = caught
    return fig.axes


def _curve(label, *seeds, metric=RETURN):
    histories = tuple(
        [
            {"env_steps": 100 * (k + 1), "time": k + 1.0, metric: v}
            for k, v in enumerate(values)
        ]
        for values in seeds
    )
    return Curve(label, histories)


def test_curves_are_coloured_and_listed_best_final_value_first(monkeypatch):
    import matplotlib

    curves = [_curve("B", [5, 5]), _curve("C", [9, 1]), _curve("A", [1, 9])]
    steps, time = _drawn(monkeypatch, curves)
    # Final values 5, 1, 9: A is best, then B, then C (C began highest).
    viridis = matplotlib.colormaps["viridis"]([0.0, 0.45, 0.9])
    for ax in (steps, time):
        # Drawn best first: the first colour of the map is the best curve's.
        colors = [line.get_color() for line in ax.get_lines()]
        np.testing.assert_allclose(colors, viridis)
    legend = [t.get_text() for t in steps.get_legend().get_texts()]
    assert legend == ["A", "B", "C"]
    assert steps.get_ylabel() == "mean episode return"


def test_the_legend_names_the_ten_best_curves(monkeypatch):
    curves = [_curve(f"c{i:02d}", [0, i]) for i in range(11)]
    steps, _ = _drawn(monkeypatch, curves)
    legend = [t.get_text() for t in steps.get_legend().get_texts()]
    assert legend == [f"c{i:02d}" for i in range(10, 0, -1)]


def test_one_point_of_three_seeds_draws_its_spread_and_a_target_of_zero(monkeypatch):
    curve = _curve("eval", [1], [2], [6], metric="eval/mean_return")
    steps, time = _drawn(monkeypatch, [curve], target=0.0, metric="eval/mean_return")
    assert steps.get_ylabel() == "evaluation return"
    for ax in (steps, time):
        # The mean 3 as a marker, the seeds' 1..6 as an error bar.
        (bar,) = [c for c in ax.collections if len(c.get_segments())]
        (segment,) = bar.get_segments()
        np.testing.assert_allclose(segment[:, 1], [1, 6])
        (marker,) = [line for line in ax.get_lines() if line.get_marker() == "o"]
        assert list(marker.get_ydata()) == [3]
        # The target line, at 0 too.
        targets = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
        assert [tuple(t.get_ydata()) for t in targets] == [(0, 0)]


def test_a_misspelt_metric_names_twelve_logged_ones_and_how_many_more():
    from purejaxdrl.observe.plots import check_metric

    record = {"env_steps": 1, **{f"m{i:02d}": 1.0 for i in range(14)}}
    names = ", ".join(f"m{i:02d}" for i in range(12))
    with pytest.raises(pjd.ConfigError) as e:
        check_metric([Curve("a", ([record],))], "zzz")
    assert str(e.value).endswith(f"their records hold {names} and 2 more.")
