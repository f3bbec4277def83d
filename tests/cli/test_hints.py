"""Hints for a newcomer's slips: each one line, exit status 2, naming the fix."""

import pytest
import yaml

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.config import to_dict
from tests.helpers import cli_error_line

TRAIN = ["train", "--no-files", "--no-compile-cache"]


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        # Underscores (as config files and --grid spell fields): the run's own
        # algorithm's field, never another algorithm's.
        (["--ppo.learning_rate", "1e-3"], "did you mean --ppo.learning-rate?"),
        (["--ppo.num_epochs", "2"], "did you mean --ppo.num-epochs?"),
        (["--ppo.gae_lambda", "0.9"], "did you mean --ppo.gae-lambda?"),
        (["--ppo.entropy_cost", "0"], "did you mean --ppo.entropy-cost?"),
        (
            ["--algo", "dqn", "--dqn.learning_rate", "1e-3"],
            "did you mean --dqn.learning-rate?",
        ),
        (["--total_steps", "1024"], "did you mean --total-steps?"),
        # A field the section lacks: its owners, with a flag that parses.
        (
            ["--algo", "dqn", "--dqn.num_minibatches", "4"],
            "not dqn's (e.g. --ppo.num-minibatches)",
        ),
        # Abbreviations: a unique prefix, and lr for learning rate.
        (["--tot", "1024"], "did you mean --total-steps?"),
        (["--lr", "1e-3"], "did you mean --ppo.learning-rate?"),
        # Case: commands were hinted whatever their case, flags were not.
        (["--LR", "1e-3"], "did you mean --ppo.learning-rate?"),
        (["--Total-Steps", "1024"], "did you mean --total-steps? (flags are lower"),
        (["--ppo.lr", "1e-3"], "did you mean --ppo.learning-rate?"),
        (["--algo", "dqn", "--lr", "1e-3"], "did you mean --dqn.learning-rate?"),
        # alpha is the temperature itself (CleanRL, SB3), not its rate.
        (
            ["--env", "cheetah_run", "--algo", "sac", "--sac.alpha", "0.2"],
            "did you mean --sac.init-alpha?",
        ),
        (
            ["--env", "cheetah_run", "--algo", "sac", "--sac.alpha_lr", "1e-3"],
            "did you mean --sac.alpha-learning-rate?",
        ),
        # A section-less field name: the one section's flag of that name.
        (["--eps", "1e-8"], "did you mean --ppo.eps?"),
        (["--clip-eps", "0.1"], "did you mean --ppo.clip-eps?"),
        # A preset named without its flag.
        (["cartpole"], "did you mean --env cartpole?"),
        # A preset's promise names its budget; the word before a flag is a
        # preset all the same (the flag's hint alone named --quiet).
        (["--budget", "2048"], "did you mean --total-steps?"),
        (
            ["cartpole", "--budget", "2048"],
            "did you mean --env cartpole? did you mean --total-steps?",
        ),
        # A start of one flag of its section, whatever other sections' flags
        # hold the word (this was --ppo.gamma).
        (["--ppo.max", "1"], "did you mean --ppo.max-grad-norm?"),
        # A start of several flags: all of them, none likelier.
        (
            ["--num", "3"],
            "did you mean one of --num-envs, --num-logs, --num-processes?",
        ),
        # Another section's field under --env: that section's, not an env option.
        (
            ["--env.activation", "relu"],
            "activation is a field of network, not env's (e.g. --network.activation)",
        ),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_train_flag_hints(argv, hint, capsys):
    line = cli_error_line([*TRAIN, *argv], capsys)
    assert hint in line, line
    assert "is a field of" not in line or "not " in hint, line


@pytest.mark.parametrize("extra", [[], ["--algo", "ppo"]])
def test_a_resume_keeps_its_algorithm_and_says_so(extra, tmp_path, capsys):
    # Only config.yaml is read before the flags are checked.
    config = pjd.load_preset("cartpole", "dqn").config
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(to_dict(config)))
    argv = ["train", "--resume", str(tmp_path), *extra, "--ppo.learning-rate", "1e-3"]
    line = cli_error_line([*argv, "--override"], capsys)
    assert line == (
        "purejaxdrl: error: --ppo.learning-rate sets ppo's hyper-parameters, but "
        "this run trains dqn, and a resume keeps the run's algorithm (dqn); drop "
        "it (a new run of another algorithm is `purejaxdrl train --algo ppo ...`)."
    )
    # A section no algorithm here has: the example is a flag the resume takes.
    argv = ["train", "--resume", str(tmp_path), *extra, "--ppo-kl.learning-rate", "1"]
    line = cli_error_line(argv, capsys)
    assert "not ppo-kl's (e.g. --dqn.learning-rate)" in line, line


@pytest.mark.parametrize("command", [["eval"], ["export", "--out", "out"]])
def test_a_run_commands_hint_never_says_a_field_is_not_its_sections(command, capsys):
    line = cli_error_line([*command, "runs/RUN", "--ppo.learning-rate", "1e-3"], capsys)
    assert "not ppo's" not in line, line
    assert "learning_rate is ppo's, but this command takes no --ppo.* flags." in line


@pytest.mark.parametrize(
    ("command", "does"),
    [
        (["eval"], "plays a run or policy on"),
        (["export", "--out", "out"], "saves a run's policy for"),
    ],
)
@pytest.mark.parametrize(
    "flag", [["--env", "acrobot"], ["--env.id", "Acrobot-v1"], ["--algo", "dqn"]]
)
def test_a_run_command_given_another_environment_says_it_plays_the_runs(
    command, does, flag, capsys
):
    # Was "did you mean --render?" (a close spelling of --env).
    line = cli_error_line([*command, "runs/RUN", *flag], capsys)
    assert line.endswith(
        f"{' '.join(flag)}; purejaxdrl {command[0]} {does} the environment and "
        f"algorithm it was trained with, so it takes no {flag[0]}; for another, "
        f"train a run there. `purejaxdrl {command[0]} --help` lists every option."
    ), line


@pytest.mark.parametrize(
    ("command", "flags"),
    [
        (["sweep"], ["--coordinator", "h:1234", "--num-processes", "2"]),
        (["pbt"], ["--distributed-auto"]),
    ],
)
def test_a_sweep_given_process_flags_says_it_runs_in_one_process(
    command, flags, capsys
):
    # Was "unrecognized arguments: --coordinator ..." alone, as if misspelt.
    line = cli_error_line([*command, "--env", "cartpole", *flags], capsys)
    assert line == (
        "purejaxdrl: error: sweeps and PBT run in one process, not across hosts "
        "(only `purejaxdrl train` does): drop --coordinator, --num-processes and "
        f"--process-id (or --distributed-auto) and run `purejaxdrl {command[0]}` "
        "on one host."
    )
    line = cli_error_line(["eval", "runs/RUN", "--process-id", "0"], capsys)
    assert line.startswith(
        "purejaxdrl: error: `purejaxdrl eval` runs in one process, not across"
    ), line


def test_eval_abbreviation_names_the_flag(capsys):
    line = cli_error_line(["eval", "--ep", "3", "runs/RUN"], capsys)
    assert "did you mean --episodes?" in line, line


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["trian"], "unknown command 'trian'; did you mean train?"),
        (
            ["train", "--algo", "PPO"],
            "algo='PPO' is not a known algorithm; did you mean 'ppo'?",
        ),
        (["train", "--algo", "ppp"], "did you mean 'ppo'?"),
        # `list` parses whole flags: --env is no abbreviation of --envs.
        (["list", "--en"], "unrecognized arguments: --en; did you mean --env?"),
        (["list", "--env", "nope"], "Unknown environment preset 'nope'"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_command_algo_and_list_hints(argv, hint, capsys):
    assert hint in cli_error_line(argv, capsys)


def test_list_env_lists_one_presets_sections(capsys):
    assert cli.main(["list", "--env", "cartpole"]) == 0
    source, header, *lines = capsys.readouterr().out.strip().splitlines()
    assert source.startswith("# ") and header.startswith("preset ")
    assert lines and all(line.split()[0] == "cartpole" for line in lines), lines
    assert any(line.split()[2] == "ppo" for line in lines), lines


def test_an_environment_id_passed_to_env_names_env_id(capsys):
    line = cli_error_line([*TRAIN, "--env", "MountainCar-v0"], capsys)
    assert "'MountainCar-v0' is an environment id, not a preset" in line, line
    assert "--env cartpole --env.id MountainCar-v0" in line, line


@pytest.mark.parametrize("empty", [[], ["[]"], ["()"], [""]], ids=repr)
def test_a_tuple_flag_is_emptied_by_the_bare_flag_or_an_empty_list(empty):
    from purejaxdrl.cli.args import config_overrides
    from purejaxdrl.cli.train import parser
    from purejaxdrl.config import apply_overrides

    preset = pjd.load_preset("cartpole_masked")
    assert preset.config.env.hide_observations  # what there is to empty
    train = parser(preset.config, preset.name)
    assert "the bare flag means none" in " ".join(train.format_help().split())
    args = train.parse_args(["--env.hide-observations", *empty])
    overrides = config_overrides(args, preset.config, "ppo")
    assert apply_overrides(preset.config, overrides).env.hide_observations == ()
    # A value is still a value.
    args = train.parse_args(["--env.hide-observations", "2"])
    overrides = config_overrides(args, preset.config, "ppo")
    assert apply_overrides(preset.config, overrides).env.hide_observations == (2,)


@pytest.mark.parametrize("empty", [[], ["[]"], ["()"], [""]], ids=repr)
def test_env_imports_is_emptied_like_any_tuple_flag(empty):
    from purejaxdrl.cli.args import preset_run
    from purejaxdrl.cli.train import parser

    # The pre-parser that imports the modules before the preset loads, too.
    argv = ["--env.imports", *empty, "--no-files"]
    _, _, config = preset_run(argv, "cartpole", "ppo", parser)
    assert config.env.imports == ()


@pytest.mark.parametrize(
    "words", [["[1,3]"], ["[1,", "3]"], ["(1, 3)"], ["1,3"], ["1", "3"]], ids=repr
)
def test_a_tuple_flag_takes_the_yaml_list_spelling(words):
    from purejaxdrl.cli.args import config_overrides
    from purejaxdrl.cli.train import parser
    from purejaxdrl.config import apply_overrides

    preset = pjd.load_preset("cartpole_masked")
    args = parser(preset.config, preset.name).parse_args(
        ["--env.hide-observations", *words]
    )
    overrides = config_overrides(args, preset.config, "ppo")
    assert apply_overrides(preset.config, overrides).env.hide_observations == (1, 3)


@pytest.mark.parametrize(
    "words", [["[1", "3)"], ["(1,3]"], ["[1,3"], ["1,3]"]], ids=repr
)
def test_a_tuple_flags_unmatched_brackets_are_refused(words, capsys):
    # They were read as (1, 3) when both ends had some bracket.
    line = cli_error_line(
        [*TRAIN, "--env", "cartpole_masked", "--env.hide-observations", *words], capsys
    )
    assert f"--env.hide-observations {' '.join(words)!r} has unmatched brackets" in line
    assert "[a,b], a,b or a b" in line, line


def test_only_tuple_fields_that_may_be_empty_offer_the_bare_flag():
    from purejaxdrl.cli.train import parser

    preset = pjd.load_preset("cartpole")
    helps = {
        action.option_strings[0]: " ".join(str(action.help).split())
        for action in parser(preset.config, preset.name)._actions
        if action.option_strings
    }
    for flag in ("--env.hide-observations", "--env.imports", "--network.head-sizes"):
        assert helps[flag].endswith("; the bare flag means none)"), helps[flag]
    assert "bare flag" not in helps["--network.hidden-sizes"]


@pytest.mark.parametrize(
    "flag, hint",
    [
        # A whole word of a flag of its section: the flag, or the two.
        ("--envs", "did you mean --num-envs? "),
        ("--unroll", "did you mean --scan-unroll or --unroll-length? "),
        # No section: any section's flag that has the word whole.
        ("--hidden", "did you mean --network.hidden-sizes? "),
        ("--clip", "did you mean one of --ppo.clip-eps, --ppo.clip-value, "),
    ],
)
def test_a_whole_word_of_a_flag_names_that_flag(flag, hint, capsys):
    # difflib named --env for --envs, --env for --hidden: close spellings,
    # not what was meant.
    assert hint in cli_error_line([*TRAIN, "--env", "cartpole", flag, "4"], capsys)


def test_a_one_letter_flag_gets_no_guess(capsys):
    # `--t` was hinted --quiet (difflib's ratio 0.6): any guess is a coin toss.
    line = cli_error_line([*TRAIN, "--env", "cartpole", "--t", "5"], capsys)
    assert "unrecognized arguments: --t 5; `purejaxdrl train --help`" in line


@pytest.mark.parametrize("command", ["train", "sweep"])
def test_an_unknown_flag_names_the_help_that_lists_the_algorithms_fields(
    command, capsys
):
    # A plain `--help` lists ppo's fields; r2d2's are under `--algo r2d2 --help`.
    argv = [command, "--no-files", "--env", "cartpole_masked", "--algo", "r2d2"]
    line = cli_error_line([*argv, "--r2d2.priority-exponent", "-1"], capsys)
    assert line == (
        "purejaxdrl: error: unrecognized arguments: --r2d2.priority-exponent -1; "
        "did you mean --r2d2.priority-eta? "
        f"`purejaxdrl {command} --algo r2d2 --help` lists every option."
    )
    # ppo's own flags are what the plain help lists.
    line = cli_error_line([command, "--no-files", "--ppo.num-epoch", "2"], capsys)
    assert line.endswith(f"`purejaxdrl {command} --help` lists every option.")


def test_a_sweep_field_unknown_names_the_algorithms_help(capsys):
    line = cli_error_line(
        ["sweep", "--no-files", "--algo", "dqn", "--grid", "dqn.nope=1"], capsys
    )
    assert line.endswith(
        "`purejaxdrl train --algo dqn --help` lists every field "
        "(help(pjd.TrainConfig) and dataclasses.fields(config.dqn) in Python; "
        "dqn's may be given without 'dqn.')."
    )
