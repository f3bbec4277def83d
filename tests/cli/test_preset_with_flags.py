"""A preset of one's own is validated with the command line's flags, not alone.

A preset whose section was incomplete alone (`eval.stop_at` without
evaluation episodes, minibatches that divide only the flags' sizes) was
refused before its flags applied, with the preset's values and a fix naming
the flags already given, and `--help` was refused too. The run's config is what
is checked; a fault of the file alone names it.
"""

import re

import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.cli.args import preset_run
from purejaxdrl.cli.train import parser
from purejaxdrl.config import ConfigError

QUIET = ["--no-files", "--quiet", "--no-compile-cache", "--devices", "1"]
ENV = "env: {id: CartPole-v1}\n"
STOP = ENV + "ppo: {total_steps: 1024, num_logs: 1, eval: {stop_at: 475}}\n"
TYPO3 = ENV + "ppo: {num_envs: 4, total_steps: 1024, ppo: {num_minibatches: 3}}\n"


@pytest.fixture
def presets(tmp_path):
    (tmp_path / "stop.yaml").write_text(STOP)
    (tmp_path / "typo3.yaml").write_text(TYPO3)
    return tmp_path


def test_flags_complete_a_preset_that_is_incomplete_alone(presets, capsys):
    argv = ["--env", str(presets / "stop.yaml"), "--eval.episodes", "2"]
    argv += ["--eval.every", "1", "--eval.max-steps", "50", *QUIET]
    assert cli.main(["train", *argv]) == 0, capsys.readouterr().err
    argv = ["--num-envs", "6", "--unroll-length", "32"]
    _, _, config = preset_run(argv, str(presets / "typo3.yaml"), "ppo", parser)
    sizes = (config.num_envs, config.unroll_length, config.ppo.num_minibatches)
    assert sizes == (6, 32, 3)


def test_help_shows_a_preset_that_is_incomplete_alone(presets, capsys):
    for name in ("stop.yaml", "typo3.yaml"):
        with pytest.raises(SystemExit) as exit_:
            cli.main(["train", "--env", str(presets / name), "--help"])
        assert exit_.value.code == 0, capsys.readouterr().err
        assert "--eval.stop-at" in capsys.readouterr().out


def test_a_fault_of_the_file_alone_names_the_file(presets, capsys):
    path = str(presets / "typo3.yaml")
    assert cli.main(["train", "--env", path, *QUIET]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(
        f"purejaxdrl: error: Preset {path!r}, section ppo: ppo.num_minibatches=3 "
        "with unroll_length=128 needs num_envs divisible by 3, got num_envs=4"
    ), err
    # A flag that causes the fault is the flags', not the file's.
    assert cli.main(["train", "--env", path, "--num-envs", "5", *QUIET]) == 2
    err = capsys.readouterr().err
    assert "got num_envs=5" in err and "Preset" not in err, err
    # From Python, load_preset validates the preset alone, and says whose it is.
    with pytest.raises(ConfigError, match=re.escape(f"Preset {path!r}, section ppo:")):
        pjd.load_preset(path)


def test_a_value_of_the_file_that_does_not_convert_names_the_file(tmp_path, capsys):
    # Only validate's errors named the file; a value its field cannot take
    # (num_epochs: abc) came out bare, its fix naming a flag not given.
    path = tmp_path / "abc.yaml"
    path.write_text(
        ENV + "ppo: {num_envs: 4, total_steps: 1024, ppo: {num_epochs: abc}}\n"
    )
    start = f"Preset {str(path)!r}, section ppo: ppo.num_epochs='abc' is not an integer"
    assert cli.main(["train", "--env", str(path), *QUIET]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"purejaxdrl: error: {start}"), err
    with pytest.raises(ConfigError) as e:
        pjd.load_preset(str(path))
    assert str(e.value).startswith(start)
    # The file's env block is named as its section env.
    path.write_text("env: {id: CartPole-v1, normalize_observations: maybe}\nppo: {}\n")
    with pytest.raises(ConfigError) as e:
        pjd.load_preset(str(path))
    assert str(e.value).startswith(f"Preset {str(path)!r}, section env: env.norm")


def test_env_id_without_env_starts_from_the_preset_that_trains_it():
    from purejaxdrl.training.presets.choice import starting_preset

    # `--env.id playground/CartpoleBalance` alone trained on cartpole's
    # settings (64x64 tanh, no observation normalisation), tuned for another
    # environment, although cartpole_balance's are Playground's for that id.
    assert starting_preset(None, "playground/CartpoleBalance", "ppo") == (
        "cartpole_balance"
    )
    assert starting_preset(None, "playground/PendulumSwingup", "sac") == (
        "pendulum_swingup"
    )
    assert starting_preset(None, "Acrobot-v1", "ppo") == "acrobot"
    # CartPole-v1 is cartpole's (not cartpole_masked's, which trains it too).
    assert starting_preset(None, "CartPole-v1", "ppo") == "cartpole"
    # No preset trains it with that algorithm (acrobot has no dqn), or it is
    # the user's own: cartpole's, as before; --env always wins.
    assert starting_preset(None, "Acrobot-v1", "dqn") == "cartpole"
    assert starting_preset(None, "MyCorridor-v0", "ppo") == "cartpole"
    assert starting_preset(None, None, "ppo") == "cartpole"
    assert starting_preset("acrobot", "CartPole-v1", "ppo") == "acrobot"


@pytest.mark.parametrize("command", ["train", "sweep"])
def test_help_with_env_id_shows_that_presets_defaults(command, capsys):
    argv = [command, "--env.id=playground/PendulumSwingup", "--algo", "sac", "--help"]
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "defaults shown are the 'pendulum_swingup' preset's" in out


@pytest.mark.parametrize(
    ("env", "env_id", "algo", "want"),
    [
        ("acrobot", "CartPole-v1", "ppo", "acrobot"),  # --env wins
        (None, "envpool:Pong-v5", "ppo", "pong"),  # the preset with that id
        # Part of a preset's id is not its id: no preset trains it, so the
        # closest for ids like it does (a gymnax id: cartpole first).
        (None, "Pong-v5", "ppo", "cartpole"),
        (None, "playground/Cartpole", "ppo", "cartpole_balance"),
        (None, "Acrobot-v1", "dqn", "cartpole"),  # acrobot has no dqn section
        (None, None, "ppo", "cartpole"),
        # Not cartpole_masked, the only r2d2 preset of CartPole-v1: it hides
        # the velocities, another task under the same id (refused: no section).
        (None, "CartPole-v1", "r2d2", "cartpole"),
        # Cartpole's MLP on Atari frames was the fallback: pong's CNN now.
        (None, "envpool:Breakout-v5", "pqn", "pong"),
        (None, "gymnasium:MyEnv-v0", "ppo", "cartpole_envpool"),  # a host env's
        (None, "MyCorridor-v0", "sac", "inverted_pendulum"),  # SAC: physics'
        (None, "Breakout-MinAtar", "dqn", "cartpole"),  # no MinAtar dqn preset
    ],
)
def test_the_starting_preset_is_the_one_whose_id_is_env_id(env, env_id, algo, want):
    from purejaxdrl.training.presets.choice import starting_preset

    assert starting_preset(env, env_id, algo) == want


@pytest.mark.parametrize("command", ["train", "sweep"])
def test_env_id_with_an_algorithm_cartpole_lacks_names_that_id(
    command, tmp_path, capsys
):
    # `--env.id Acrobot-v1 --algo r2d2` started from cartpole (no preset
    # trains Acrobot-v1 with r2d2), and its refusal told the user how to
    # train r2d2 "on CartPole-v1", a preset they never named.
    argv = [command, "--env.id", "Acrobot-v1", "--algo", "r2d2", *QUIET]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "CartPole" not in err
    assert (
        "no shipped preset trains r2d2 on Acrobot-v1 or an environment like it "
        "(--env.id), and cartpole's, "
        "where a command without --env starts, has no 'r2d2' section; to train "
        "r2d2 on Acrobot-v1 with its untuned defaults, write a my.yaml holding "
        "'env: {id: Acrobot-v1}' and 'r2d2: {}' and pass --env my.yaml; or pick "
        "another --algo, or an --env with one (cartpole_masked)." in err
    )
    # Its fix is a preset of r2d2's untuned defaults on that id.
    (tmp_path / "my.yaml").write_text("env: {id: Acrobot-v1}\nr2d2: {}\n")
    config = pjd.load_preset(str(tmp_path / "my.yaml"), algo="r2d2").config
    assert (config.env.id, config.algo) == ("Acrobot-v1", "r2d2")
    # Named, the preset is refused for the id the flags train, not its own.
    assert cli.main([command, "--env", "cartpole", *argv[1:]]) == 2
    err = capsys.readouterr().err
    assert "has no 'r2d2' section" in err and "to train r2d2 on Acrobot-v1," in err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["--env.id", "brax/inverted_pendulum", "--algo", "sac"],
            "the inverted_pendulum preset's sac settings (env.options {backend: "
            "positional, episode_length: 1000}, env.normalize_observations true) "
            "(--env inverted_pendulum)",
        ),
        (
            ["--env.id", "Acrobot-v1", "--algo", "dqn"],
            "the cartpole preset's dqn settings, tuned for CartPole-v1, the id "
            "replaced (no shipped preset trains dqn on Acrobot-v1; --env cartpole "
            "--env.id Acrobot-v1)",
        ),
    ],
)
def test_a_command_without_env_names_the_preset_it_started_from(argv, said):
    # `--env.id X` alone chose a preset without a word (only --help said which):
    # the summary names it (last, so that a refusal stays one line).
    from purejaxdrl.training.presets.choice import starting_note, starting_preset

    algo = argv[argv.index("--algo") + 1]
    assert starting_note(argv[1], algo, starting_preset(None, argv[1], algo)) == said
    assert starting_note(None, "ppo", "cartpole") is None  # no --env.id: cartpole


def test_the_train_summary_says_whose_settings_it_trained(capsys):
    argv = [
        "train",
        "--env.id",
        "Acrobot-v1",
        "--algo",
        "dqn",
        "--dqn.min-replay",
        "64",
    ]
    assert cli.main([*argv, "--num-envs", "4", "--total-steps", "512", *QUIET]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == (
        "  settings           the cartpole preset's dqn settings, tuned for "
        "CartPole-v1, the id replaced (no shipped preset trains dqn on "
        "Acrobot-v1; --env cartpole --env.id Acrobot-v1)"
    )
    assert cli.main(["train", "--env", "cartpole", "--total-steps", "1", *QUIET]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1  # a refusal: one line


def test_a_preset_with_one_section_trains_its_algorithm_without_algo(tmp_path, capsys):
    # A file with only a sac section was refused for having no ppo section.
    path = tmp_path / "one.yaml"
    path.write_text("env: {id: Pendulum-v1}\nsac: {total_steps: 100}\n")
    assert cli.main(["train", "--env", str(path), *QUIET]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"purejaxdrl: error: Preset {str(path)!r}, section sac: ")
    # Two sections: ppo unless --algo says otherwise, as before.
    path.write_text("env: {id: Pendulum-v1}\nsac: {}\ndqn: {}\n")
    assert cli.main(["train", "--env", str(path), *QUIET]) == 2
    assert "has no 'ppo' section" in capsys.readouterr().err


def test_no_starting_note_for_a_preset_without_the_algorithms_section():
    from purejaxdrl.training.presets.choice import starting_note

    # cartpole (where --env.id Acrobot-v1 --algo r2d2 starts) has no r2d2
    # section: the command refuses it, and no summary names its settings.
    assert starting_note("Acrobot-v1", "r2d2", "cartpole") is None
    assert starting_note("Acrobot-v1", "dqn", "cartpole") is not None


def test_command_start_gives_no_starting_note_where_env_names_the_preset():
    import argparse

    from purejaxdrl.cli.start import command_start

    # --env cartpole --env.id Acrobot-v1: the user chose the settings, so the
    # summary says nothing of a choice; --env.id alone: the note names it.
    named = argparse.Namespace(algo=None, env="cartpole", **{"env.id": "Acrobot-v1"})
    assert command_start(named) == ("cartpole", "ppo", None)
    alone = argparse.Namespace(algo="ppo", env=None, **{"env.id": "Acrobot-v1"})
    assert command_start(alone) == (
        "acrobot",
        "ppo",
        "the acrobot preset's ppo settings (--env acrobot)",
    )
