"""The `purejaxdrl` command, run as a user runs it: in a subprocess.

Bad-input cases are tabulated in test_bad_input.py.
"""

import json
import math
import os
import re
import subprocess
import sys

import pytest

import purejaxdrl as pjd
from purejaxdrl.agents.registry import algorithms
from purejaxdrl.cli.target import run_preset


def run_cli(*args, cwd=None, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "purejaxdrl.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
    )


def test_malformed_preset_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("env: [unclosed\n")
    result = run_cli("train", "--env", str(bad), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "not valid YAML" in result.stderr


def test_help_lists_the_common_fields_and_the_algorithms_with_defaults():
    result = run_cli("train", "--help")
    assert result.returncode == 0
    for flag in (
        "--ppo.learning-rate",
        "--ppo.num-minibatches",
        "--num-envs",
        "--network.hidden-sizes",
        "--env.normalize-observations",
        "--seed",
        "--total-steps",
    ):
        assert flag in result.stdout
    assert "(default: 0.00025)" in " ".join(result.stdout.split())  # unwrapped
    # Only the selected algorithm's (the default, ppo) hyper-parameters.
    assert "--impala." not in result.stdout and "--dqn." not in result.stdout


@pytest.mark.parametrize(
    ("argv", "flag", "description", "default"),
    [
        ([], "--ppo.clip-eps", "ε of the clipped surrogate", "0.2"),
        ([], "--ppo.learning-rate", "the optimiser's step size", "0.00025"),
        ([], "--ppo.anneal-lr", "decay the learning rate", "True; the bare flag"),
        ([], "--num-envs", "number of parallel environments.", "4"),
        ([], "--network.core", "`none` (feed-forward), or a recurrent core", "none"),
        ([], "--eval.stop-at", "end the run early once an evaluation's", "None"),
        (["--algo", "dqn"], "--dqn.buffer-size", "transitions (R2D2: se", "50000"),
        (["--algo", "r2d2"], "--r2d2.burn-in", "steps of the previous unroll", "0"),
        (["--algo", "sac"], "--sac.tau", "target critics, in (0, 1] (0 never", "0.005"),
    ],
)
def test_help_shows_each_flags_description_beside_its_default(
    argv, flag, description, default, capsys
):
    from purejaxdrl import cli

    with pytest.raises(SystemExit) as exit_:
        cli.main(["train", *argv, "--help"])
    assert exit_.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # unwrapped
    listing = out[out.index("config fields:") :]
    entry = listing[listing.index(f"{flag} ") :]
    text, _, shown = entry.partition("(default: ")  # the preset's defaults
    assert description in text and shown.startswith(default), entry[:400]


@pytest.mark.parametrize("record", algorithms(), ids=lambda r: r.name)
def test_every_config_flag_of_every_algorithm_has_a_description(record):
    import argparse

    from purejaxdrl.cli.args import add_config_flags

    defaults = pjd.apply_overrides(pjd.TrainConfig(), {"algo": record.name})
    parser = argparse.ArgumentParser()
    add_config_flags(parser, defaults, record.name)
    (group,) = [g for g in parser._action_groups if g.title == "config fields"]
    assert any(a.dest.startswith(f"{record.name}.") for a in group._group_actions)
    bare = [a.dest for a in group._group_actions if a.help.startswith("(default")]
    assert not bare, f"flags without a description: {bare}"


@pytest.mark.parametrize("command", ["train", "sweep", "pbt"])
def test_help_of_one_algorithm_shows_its_flags_and_how_to_see_the_others(
    command, capsys
):
    from purejaxdrl import cli
    from purejaxdrl.agents.registry import algorithms

    with pytest.raises(SystemExit) as exit_:
        cli.main([command, "--algo", "dqn", "--help"])
    assert exit_.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # unwrapped
    assert "--dqn.n-step" in out and "--dqn.buffer-size" in out
    for other in ("ppo", "impala", "a2c", "apex", "sac"):
        assert f"--{other}." not in out
    assert "`--algo NAME --help` shows NAME's" in out
    # Sweeps and PBT refuse evaluation and host environments: not listed.
    unused = ("--eval.episodes" in out, "--host.actor-threads" in out)
    assert unused == ((True, True) if command == "train" else (False, False))
    for record in algorithms():
        if record.name != "dqn":
            assert f"{record.name} ({record.summary})" in out


@pytest.mark.parametrize("command", ["train", "sweep", "pbt"])
@pytest.mark.parametrize("algo", [record.name for record in algorithms()])
def test_help_of_every_algorithm_exits_0_even_without_a_preset_section(
    command, algo, capsys
):
    from purejaxdrl import cli
    from purejaxdrl.training.presets.load import load_preset

    with pytest.raises(SystemExit) as exit_:
        cli.main([command, "--algo", algo, "--help"])
    assert exit_.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"--{algo}." in out and "(default: " in out
    try:
        load_preset("cartpole", algo)
    except pjd.ConfigError:  # cartpole has no section: the library's defaults
        assert (
            f"the defaults shown are {algo}'s own, untuned, on the 'cartpole' "
            "preset's environment, which train, sweep and pbt refuse to run" in out
        )
        assert "has no '" + algo + "' section" in out  # and the refusal's fix


def test_help_for_an_id_no_preset_trains_shows_that_id(capsys):
    # It showed cartpole's CartPole-v1 as --env.id's default, and the
    # refusal's sentence began in lower case inside the description.
    from purejaxdrl import cli

    with pytest.raises(SystemExit):
        cli.main(["train", "--env.id", "Acrobot-v1", "--algo", "r2d2", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "the defaults shown are r2d2's own, untuned, on Acrobot-v1 (the "
        "'cartpole' preset's other settings), which train, sweep and pbt refuse "
        "to run. No shipped preset trains r2d2 on Acrobot-v1" in out
    )
    assert "then makes `MyCorridor-v0`. (default: Acrobot-v1)" in out


@pytest.mark.parametrize(
    ("flags", "anneal_lr", "normalize"),
    [
        (["--ppo.anneal-lr"], True, False),
        (["--ppo.anneal-lr", "false"], False, False),
        (["--ppo.anneal-lr", "False", "--env.normalize-observations"], False, True),
        (["--env.normalize-observations", "--ppo.anneal-lr", "no"], False, True),
        (["--env.normalize-observations", "true", "--num-envs", "8"], True, True),
    ],
)
def test_a_bare_boolean_flag_means_true_and_a_value_still_works(
    flags, anneal_lr, normalize
):
    from purejaxdrl.cli.args import config_overrides
    from purejaxdrl.cli.train import parser
    from purejaxdrl.config import apply_overrides

    preset = pjd.load_preset("cartpole")
    args = parser(preset.config, preset.name).parse_args(flags)
    overrides = config_overrides(args, preset.config, "ppo")
    config = apply_overrides(preset.config, overrides)
    assert config.ppo.anneal_lr is anneal_lr
    assert config.env.normalize_observations is normalize


def test_an_optional_string_flag_says_it_takes_a_string_and_takes_one(capsys):
    # `policy_obs_key: str | None` once showed FLOAT in the help.
    from purejaxdrl.cli.args import config_overrides
    from purejaxdrl.cli.train import parser
    from purejaxdrl.config import apply_overrides

    preset = pjd.load_preset("cartpole")
    train = parser(preset.config, preset.name)
    help_ = " ".join(train.format_help().split())
    assert "--network.policy-obs-key STR " in help_
    assert "--network.value-obs-key STR " in help_
    assert "--eval.stop-at FLOAT " in help_
    args = train.parse_args(["--network.policy-obs-key", "state"])
    overrides = config_overrides(args, preset.config, "ppo")
    assert apply_overrides(preset.config, overrides).network.policy_obs_key == "state"


def test_another_algorithms_flag_is_one_line_naming_the_fix(capsys):
    from purejaxdrl import cli

    status = cli.main(["train", "--algo", "dqn", "--ppo.clip-eps", "0.1"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    assert err == (
        "purejaxdrl: error: --ppo.clip-eps sets ppo's hyper-parameters, but this "
        "run trains dqn; pass --algo ppo, or drop it.\n"
    )


@pytest.mark.timeout(600)
def test_a_rounded_budget_is_announced_and_a_complete_run_resumes_to_nothing(
    tmp_path, capsys
):
    from purejaxdrl import cli

    small = ["--devices", "1", "--quiet", "--no-compile-cache"]
    # 980 steps round to 30 updates: 2 chunks of 15, one compiled program.
    argv = ["train", *small, "--num-envs", "4", "--unroll-length", "8",
            "--total-steps", "980", "--num-logs", "2", "--ppo.num-epochs", "1",
            "--ppo.num-minibatches", "1", "--run-dir", str(tmp_path)]  # fmt: skip
    assert cli.main(argv) == 0, capsys.readouterr().err
    first = capsys.readouterr()
    assert (
        "purejaxdrl: total_steps 980 rounded to 960 (whole updates of num_envs x "
        "unroll_length = 4 x 8 = 32 steps; --total-steps 992 trains one update "
        "more)\n"
    ) in first.err
    assert "env steps          960" in first.out
    (run,) = tmp_path.iterdir()
    summary = (run / "summary.json").read_text()

    assert cli.main(["train", "--resume", str(run), *small]) == 0
    again = capsys.readouterr()
    assert not re.search(r"\bnan\b", again.out + again.err, re.IGNORECASE)
    assert "the run is already complete, nothing to train" in again.err
    assert "total_steps 980 rounded" not in again.err  # said when it started
    assert again.out.startswith(
        "nothing to train: ppo on CartPole-v1 was already complete (30 of 30 updates)"
    )
    assert "steps/s            — (no updates in this session)" in again.out
    assert (run / "summary.json").read_text() == summary  # the training session's


@pytest.mark.timeout(900)
def test_train_cartpole_end_to_end_writes_run_and_stays_under_memory(tmp_path):
    """The README's main job, on a shorter budget: progress, JSONL, summary; peak
    RSS < 1.5 GiB."""
    # A small wrapper process spawns the CLI and reports its children's peak RSS:
    # measured from this (large) pytest process, the fork would count our pages.
    # 100 of the preset's 976 updates, in its 20 chunks: the peak comes while
    # compiling and in the first chunk, and host-side growth per chunk still
    # gets 20 chunks. Learning the whole preset is test_learning's.
    wrapper = (
        "import resource, subprocess, sys\n"
        "r = subprocess.run([sys.executable, '-m', 'purejaxdrl.cli', 'train',"
        " '--env', 'cartpole', '--algo', 'ppo', '--total-steps', '51200'])\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,"
        " file=sys.stderr)\n"
        "sys.exit(r.returncode)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", wrapper],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    peak_bytes = int(result.stderr.strip().splitlines()[-1]) * 1024
    assert peak_bytes < 1.5 * 2**30, f"peak RSS {peak_bytes / 2**30:.2f} GiB"
    out = result.stdout
    for field in ("final mean return", "wall time", "compile time", "steps/s"):
        assert field in out
    assert "steps/s" in result.stderr and "return" in result.stderr  # progress
    (run_dir,) = (tmp_path / "runs").iterdir()
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").open()]
    assert len(records) == 20 and records[-1]["env_steps"] == 100 * 512
    assert all("steps_per_second" in r for r in records)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["compile_seconds"] > 0
    assert (run_dir / "config.yaml").is_file()


def test_list_shows_every_preset_section_with_its_target():
    import yaml

    from purejaxdrl.agents.registry import names
    from purejaxdrl.training.presets.load import preset_names, presets_dir

    result = run_cli("list")
    assert result.returncode == 0, result.stderr
    header, *body = result.stdout.splitlines()
    assert header.split() == ["preset", "env", "algo", "needs", "target"]
    rows = {tuple(line.split()[:3]) for line in body}
    expected = set()
    for name in preset_names():
        data = yaml.safe_load((presets_dir() / f"{name}.yaml").read_text())
        for algo in (k for k in data if k in names()):
            expected.add((name, data["env"]["id"], algo))
    assert rows == expected
    assert len(body) == len(expected)
    masked = [line for line in result.stdout.splitlines() if " r2d2 " in line]
    assert masked and masked[0].startswith("cartpole_masked")
    assert "training return >= " in masked[0] and " steps" in masked[0]
    # A budget other than the target's is named: the target is not the budget.
    (impala,) = [x for x in result.stdout.splitlines() if x.split()[:3] == [
        "cartpole", "CartPole-v1", "impala"]]  # fmt: skip
    config = pjd.load_preset("cartpole", "impala").config
    trains = config.num_updates * config.steps_per_update
    assert impala.endswith(f"in 1,000,000 steps (trains {trains:,})")
    # A target no run here has measured, or that the section cannot check.
    lines = {tuple(x.split()[:3:2]): x for x in result.stdout.splitlines()}
    assert lines["pong", "impala"].endswith(
        "(published figure or estimate, not yet measured over seeds here)"
    )
    assert "not yet measured" not in lines["cartpole", "ppo"]
    assert lines["cartpole", "pqn"].endswith("(check it with --eval.episodes 32)")


def test_list_envs_shows_every_id_env_id_takes(tmp_path, monkeypatch, capsys):
    from purejaxdrl import cli

    (tmp_path / "listed_corridor.py").write_text(
        "from purejaxdrl import env\n"
        "from purejaxdrl.env.gymnax_env import GymnaxEnv\n"
        "env.register('ListedCorridor-v0', lambda: GymnaxEnv('CartPole-v1'))\n"
    )
    monkeypatch.chdir(tmp_path)
    assert cli.main(["list", "--envs", "--env.imports", "listed_corridor"]) == 0
    *ids, host = capsys.readouterr().out.splitlines()
    ids = [i for i in ids if not i.startswith("# these need MuJoCo Menagerie")]
    assert ids == pjd.env.registered() and "ListedCorridor-v0" in ids
    assert {"CartPole-v1", "brax/ant"} <= set(ids)
    assert "envpool:<task>" in host and "gymnasium:<id>" in host


def test_list_piped_into_a_reader_that_stops_early_ends_quietly():
    listing = subprocess.Popen(
        [sys.executable, "-m", "purejaxdrl.cli", "list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    listing.stdout.close()  # `| head -0`: the reader has gone before any line
    assert listing.wait(timeout=120) == 1
    assert b"BrokenPipeError" not in listing.stderr.read()


def test_the_preset_target_line_holds_runs_on_the_presets_settings_to_it():
    import types

    from purejaxdrl.cli.target import run_preset, target_line

    def run(**returns):
        return types.SimpleNamespace(
            **{"mean_return": nan, "eval_return": nan, **returns}
        )

    nan = float("nan")
    ppo = pjd.load_preset("cartpole", "ppo")
    line = "  preset target      475 (training return) within 500,000 steps: "
    assert target_line(ppo.config, ppo, run(mean_return=480.0)) == line + "reached"
    # Another seed, run directory or device count, or a budget of the same
    # updates (the summary's env steps): the same target.
    moved = pjd.apply_overrides(
        ppo.config,
        {"seed": 3, "run_dir": "/tmp/x", "devices": 2, "total_steps": 499_712},
    )
    assert target_line(moved, ppo, run(mean_return=400.0)) == line + "NOT reached"
    # Another log count measures the training return over other chunks (one
    # chunk: a mean over the whole run): no verdict, and the line says why
    # rather than vanish. A resumed run (no preset named) is judged by the
    # preset it trains as.
    logged = pjd.apply_overrides(ppo.config, {"num_logs": 1})
    unjudged = line + "not judged ({} changed)"
    assert target_line(logged, ppo, run(mean_return=325.8)) == unjudged.format(
        "num_logs"
    )
    longer = pjd.apply_overrides(ppo.config, {"total_steps": 4_000_000})
    assert target_line(longer, ppo, run(mean_return=500.0)) == unjudged.format(
        "total_steps"
    )
    assert run_preset(moved).config == ppo.config
    # Resumed with another budget, it is still told why it is not judged (its
    # summary had no target line: only a run on the preset's settings found
    # one); of the two CartPole-v1 presets, the one it began from.
    assert run_preset(logged).config == ppo.config
    masked = pjd.load_preset("cartpole_masked", "ppo")
    longer_masked = pjd.apply_overrides(masked.config, {"total_steps": 10**7})
    assert run_preset(longer_masked).name == "cartpole_masked"
    # Another environment (the preset's settings, the id replaced): its
    # target is another task's, so no line at all.
    other = pjd.apply_overrides(ppo.config, {"env": {"id": "Acrobot-v1"}})
    assert target_line(other, ppo, run(mean_return=480.0)) is None
    # Another learning problem: no claim about the preset's target.
    tuned = pjd.apply_overrides(ppo.config, {"ppo": {"learning_rate": 1e-3}})
    assert target_line(tuned, ppo, run(mean_return=480.0)) == unjudged.format(
        "ppo.learning_rate"
    )
    # Three changed settings are named; a fourth is "...", not a long list.
    three = {"num_logs": 1, "ppo": {"learning_rate": 1e-3, "gamma": 0.9}}
    assert target_line(
        pjd.apply_overrides(ppo.config, three), ppo, run(mean_return=480.0)
    ) == unjudged.format("num_logs, ppo.learning_rate, ppo.gamma")
    four = pjd.apply_overrides(ppo.config, {**three, "total_steps": 4_000_000})
    assert target_line(four, ppo, run(mean_return=480.0)) == unjudged.format(
        "total_steps, num_logs, ppo.learning_rate, ..."
    )
    # PQN's target is its evaluation return, not training's.
    pqn = pjd.load_preset("cartpole", "pqn")
    assert target_line(pqn.config, pqn, run(mean_return=480.0)).endswith(
        "(evaluation return) within 500,000 steps: no evaluation ran; run with "
        "--eval.episodes 32 to check"
    )
    evaluated = pjd.apply_overrides(pqn.config, {"eval": {"episodes": 32}})
    no_return = "no evaluation return to compare"
    assert target_line(evaluated, pqn, run()).endswith(no_return)
    assert target_line(evaluated, pqn, run(eval_return=400.0)).endswith("NOT reached")
    # Evaluation episodes capped below the target's length never reach it.
    capped = pjd.apply_overrides(evaluated, {"eval": {"max_steps": 100}})
    assert target_line(capped, pqn, run(eval_return=100.0)).endswith(
        "not judged (eval.max_steps changed)"
    )
    assert target_line(pjd.apply_overrides(evaluated, {"num_logs": 5}), pqn,
                       run(eval_return=480.0)).endswith("reached")  # fmt: skip
    # A target no run here has measured says so.
    pong = pjd.load_preset("pong", "impala")
    assert target_line(pong.config, pong, run(mean_return=12.0)) == (
        "  preset target      10 (training return) within 2,500,000 steps "
        "(published figure or estimate, not yet measured over seeds here): reached"
    )
    # The host runner's layout (its devices and EnvPool threads) keeps it.
    laid_out = pjd.apply_overrides(
        pong.config, {"host": {"env_threads": 8, "learner_devices": 2}}
    )
    assert target_line(laid_out, pong, run(mean_return=12.0)).endswith("reached")
    assert target_line(pqn.config, pqn, run(eval_return=500.0)).endswith("reached")


def test_a_stopped_runs_resume_hint_lifts_the_stop_that_ended_it():
    import types

    from purejaxdrl.cli.train import summary

    config = pjd.load_preset("cartpole").config
    for stopped_by, hint in [
        ("eval.stop_at (480.0 >= 475)", " --eval.stop-at none"),
        ("SIGINT", ""),
    ]:
        result = types.SimpleNamespace(
            mean_return=480.0, eval_return=480.0, stopped_by=stopped_by,
            run_dir="runs/r", updates=10, num_devices=1, env_steps=5120,
            compile_seconds=1.0, steps_per_second=1e4, history=[],
            steps_per_second_per_device=1e4,
        )  # fmt: skip
        text = summary(config, None, result, wall=2.0)
        expected = (
            "checkpoint saved; continue with: "
            f"purejaxdrl train --resume runs/r{hint}\n"  # one device: no setting
        )
        assert expected in text + "\n"
        # The session's loggers too: run as printed, it logs where it did.
        text = summary(config, None, result, 2.0, ["tensorboard", "wandb"])
        flags = " --logger tensorboard --logger wandb"
        assert f"--resume runs/r{flags}{hint}\n" in text + "\n"


def test_a_complete_runs_budget_hint_keeps_the_session_s_loggers():
    import types

    from purejaxdrl.cli.train import summary

    config = pjd.load_preset("cartpole").config
    result = types.SimpleNamespace(
        mean_return=480.0, eval_return=math.nan, stopped_by=None,
        run_dir="runs/r", updates=config.num_updates, num_devices=1,
        env_steps=5120, compile_seconds=1.0, steps_per_second=math.nan, history=[],
    )  # fmt: skip
    text = summary(config, None, result, 2.0, ["tensorboard"])
    # After the summary block (its last line the run directory), not inside it.
    assert text.endswith(
        "  run directory      runs/r\n"
        "to train on, raise the budget: purejaxdrl train "
        "--resume runs/r --logger tensorboard --total-steps N --override"
    )


def test_an_eval_return_chunks_old_says_when_it_was_measured():
    import types

    from purejaxdrl.cli.train import summary

    config = pjd.load_preset("cartpole").config
    # Its own episode count (this config, resumed, evaluates none).
    evaluated = {"updates": 90, "eval/mean_return": 500.0, "eval/episodes": 16}
    history = [evaluated, {"updates": 120}]
    result = types.SimpleNamespace(
        mean_return=480.0, eval_return=500.0, stopped_by="SIGTERM",
        run_dir="runs/r", updates=120, num_devices=1, env_steps=61440,
        compile_seconds=1.0, steps_per_second=1e4, history=history,
        steps_per_second_per_device=1e4,
    )  # fmt: skip
    text = summary(config, None, result, wall=2.0)
    assert "eval return        500.0 (deterministic policy, 16 episodes, at " in text
    assert "at update 90)" in text
    result.history = [{"updates": 120, "eval/mean_return": 500.0}]
    assert "at update" not in summary(config, None, result, wall=2.0)
    # After eval.stop_at's line (reached at update 90), the last evaluation's
    # update is said even where it is the run's last.
    result.stopped_by = "eval.stop_at (480.0 >= 475 at update 90)"
    assert "episodes, at update 120)" in summary(config, None, result, wall=2.0)


def test_version_prints_the_packages(capsys):
    from purejaxdrl import __version__, cli

    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"purejaxdrl {__version__}\n"


@pytest.mark.parametrize(("given", "kept"), [(None, "Agg"), ("svg", "svg")])
def test_the_command_draws_with_matplotlibs_file_backend_unless_told(
    given, kept, monkeypatch
):
    # The plots and GIFs leave a caller's backend alone (a notebook's); the
    # command owns its process, so it picks the file backend itself.
    from purejaxdrl import cli

    monkeypatch.delenv("MPLBACKEND", raising=False)
    if given is not None:
        monkeypatch.setenv("MPLBACKEND", given)
    assert cli.main(["--version"]) == 0
    assert os.environ["MPLBACKEND"] == kept


@pytest.mark.parametrize("found", [False, True])
def test_list_envs_names_the_playground_ids_that_need_menagerie(
    found, tmp_path, monkeypatch, capsys
):
    # 29 of Playground's ids load robot models from MuJoCo Menagerie; without
    # it they fail at their first run, and list --envs did not say which.
    pytest.importorskip("mujoco_playground")
    from purejaxdrl import cli

    if found:  # a folder with one of Menagerie's robots is one
        (tmp_path / "unitree_go1").mkdir()
    monkeypatch.setenv("MUJOCO_MENAGERIE_PATH", str(tmp_path))
    assert cli.main(["list", "--envs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    marked = [line for line in lines if line.startswith("# these need MuJoCo")]
    if found:
        assert not marked
        return
    (line,) = marked
    named = line.partition("$MUJOCO_MENAGERIE_PATH): ")[2].split(", ")
    assert {"playground/Go1JoystickFlatTerrain", "playground/LeapCubeReorient"} <= (
        set(named)
    )
    assert "playground/CartpoleBalance" not in named  # its model is in the wheel
    assert set(named) <= set(lines)  # each is listed as an id too


# A resumed run is judged only by a preset of its own environment: a run on
# another environment, with a CartPole preset's settings otherwise, finds none.
def test_a_run_on_an_environment_without_a_preset_finds_none():
    ppo = pjd.load_preset("cartpole", "ppo")
    other = pjd.apply_overrides(ppo.config, {"env": {"id": "MountainCar-v0"}})
    assert run_preset(other) is None
