"""`--env.option KEY=VALUE`: values read as YAML, numbers as the rest of the CLI.

Exponent notation (`tau=2e-2`) was a string, refused as "not a number"; a
value that is no YAML, an integer past int32 or a bad array parameter ended in
a traceback.
"""

import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.cli.args import UsageError, parse_options

TRAIN = ["train", "--no-files", "--no-compile-cache"]


def test_exponent_notation_is_a_float_and_quoted_a_string():
    options = parse_options(
        ["tau=2e-2", "g=1.5E2", "n=1e3", "x=1.0e-3", "s='2e-2'", "l=[1e-1,2]"]
    )
    assert options == {
        "tau": 0.02,
        "g": 150.0,
        "n": 1000.0,
        "x": 0.001,
        "s": "2e-2",
        "l": [0.1, 2],
    }
    # What YAML 1.1 read before is read the same.
    same = ["a=abc", "b=e5", "c=-e5", "d=1_000", "e=true", "f=.inf", "g=0x10"]
    assert parse_options(same) == {
        "a": "abc",
        "b": "e5",
        "c": "-e5",
        "d": 1000,
        "e": True,
        "f": float("inf"),
        "g": 16,
    }


def test_a_value_that_is_no_yaml_is_one_line():
    with pytest.raises(UsageError, match=r"--env.option 'a=\[1,': '\[1,' is not a "):
        parse_options(["a=[1,"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--env.option", "a=[1,"], "is not a YAML value"),
        (
            ["--env.id", "CartPole-v1", "--env.option", "max_steps_in_episode=3e9"],
            "env.options max_steps_in_episode=3000000000.0 must be in [-2**31, 2**31)",
        ),
        (
            ["--env.id", "Acrobot-v1", "--env.option", "available_torque=abc"],
            "env.options available_torque='abc' must be a list of 3 numbers",
        ),
    ],
    ids=repr,
)
def test_bad_env_options_are_one_line_and_exit_2(argv, message, capsys):
    assert cli.main([*TRAIN, *argv]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines


def test_a_run_takes_an_option_in_exponent_notation(capsys):
    argv = ["--env.id", "CartPole-v1", "--env.option", "tau=2e-2"]
    argv += ["--total-steps", "512", "--num-logs", "1", "--devices", "1"]
    assert cli.main([*TRAIN, *argv]) == 0, capsys.readouterr().err


def test_list_help_names_the_craftax_ids(capsys):
    with pytest.raises(SystemExit):
        cli.main(["list", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "Craftax-* (installed or not)" in help_text


def test_hidden_observations_stay_with_their_environment(capsys):
    # cartpole_masked hides CartPole's velocities (1, 3); on Acrobot-v1 those
    # entries are sin θ1 and sin θ2, so another id resets them, as it does the
    # options, and the command line says so.
    from purejaxdrl.cli.args import preset_run
    from purejaxdrl.cli.train import parser

    base = pjd.load_preset("cartpole_masked").config
    assert base.env.hide_observations == (1, 3)
    other = pjd.apply_overrides(base, {"env": {"id": "Acrobot-v1"}})
    assert other.env.hide_observations == ()
    same = pjd.apply_overrides(base, {"env": {"id": "CartPole-v1"}})
    assert same.env.hide_observations == (1, 3)
    given = {"env": {"id": "Acrobot-v1", "hide_observations": [0]}}
    assert pjd.apply_overrides(base, given).env.hide_observations == (0,)

    _, _, config = preset_run(
        ["--env.id", "Acrobot-v1"], "cartpole_masked", "ppo", parser
    )
    assert config.env.hide_observations == ()
    assert capsys.readouterr().err == (
        "purejaxdrl: the preset's env.hide_observations ([1, 3]) are CartPole-v1's, "
        "so not passed to Acrobot-v1\n"
    )
    argv = ["--env.id", "Acrobot-v1", "--env.hide-observations", "1", "3"]
    _, _, config = preset_run(argv, "cartpole_masked", "ppo", parser)
    assert config.env.hide_observations == (1, 3)
    assert capsys.readouterr().err == ""
    # --quiet hides the progress line, not what the run drops (it hid this).
    preset_run(["--env.id", "Acrobot-v1", "--quiet"], "cartpole_masked", "ppo", parser)
    assert "so not passed to Acrobot-v1" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["human", "rgb_array"])
def test_render_mode_is_refused_for_training_with_the_eval_render_advice(capsys, mode):
    # A window per environment, or a frame drawn every step (hr15 #4).
    argv = [*TRAIN, "--env", "cartpole_envpool", "--env.id", "gymnasium:CartPole-v1",
            "--devices", "1", "--env.option", f"render_mode={mode}"]  # fmt: skip
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err == (
        f"purejaxdrl: error: env.options render_mode={mode!r}: the runner steps "
        "its environments without drawing them, and drawing would slow every "
        "step; watch a run with `purejaxdrl eval RUN --render out.gif` instead, "
        "and drop --env.option render_mode (the env.options entry in Python).\n"
    )
