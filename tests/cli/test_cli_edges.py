"""The command line's edges that mutation found untested (reviews/mut28.md).

No training: the summary is built from a stand-in result.
"""

import math

import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.cli.hints import flag_hint
from purejaxdrl.cli.train import _mean_return, summary
from tests.helpers import bare_result


def test_no_command_prints_the_usage_and_exits_2(capsys):
    assert cli.main([]) == 2
    assert "train" in capsys.readouterr().out
    assert cli.main(["--help"]) == 0


def test_a_command_in_capitals_is_named_in_lower_case(capsys):
    assert cli.main(["TRAIN"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'TRAIN'; did you mean train?" in err, err


FLAGS = [
    "--env",
    "--env.hide-observations",
    "--env.id",
    "--env.imports",
    "--env.normalize-observations",
    "--env.option",
    "--num-envs",
    "--seed",
]


def test_a_short_env_word_is_an_environment_option_not_a_list_of_env_flags():
    hint = flag_hint("--env.i", FLAGS)
    assert hint.startswith("an environment's own option? --env.option i=VALUE"), hint
    assert flag_hint("--env.im", FLAGS) == "did you mean --env.imports? "


def test_a_field_of_other_sections_is_refused_with_a_flag_that_parses():
    config = pjd.load_preset("cartpole").config
    with pytest.raises(pjd.ConfigError) as e:
        pjd.apply_overrides(config, {"dqn": {"num_minibatches": 2}})
    message = str(e.value)
    assert "num_minibatches is a field of ppo, pqn, not dqn's" in message, message
    assert "(e.g. --ppo.num-minibatches, ppo.num_minibatches in Python)" in message


def test_a_run_without_steps_shows_a_bare_dash_not_a_call_to_train_longer():
    assert _mean_return(math.nan, 0) == "—"
    assert _mean_return(math.nan, 4096).startswith("— (no episode ended in 4,096")
    config = pjd.load_preset("cartpole").config
    stopped = bare_result(mean_return=math.nan, stopped_by="SIGINT")
    text = summary(config, None, stopped, wall=2.0) + "\n"
    assert "  final mean return  —\n" in text, text


def test_the_summary_says_compile_time_in_seconds_and_how_one_process_resumes():
    config = pjd.load_preset("cartpole").config
    trained = dict(mean_return=math.nan, updates=8, env_steps=4096)
    result = bare_result(**trained, compile_seconds=1.5, steps_per_second=1e4)
    text = summary(config, None, result, wall=2.0) + "\n"
    assert "  compile time       1.5 s\n" in text, text
    stopped = bare_result(**trained, stopped_by="SIGINT", run_dir="runs/r")
    text = summary(config, None, stopped, wall=2.0) + "\n"
    assert "continue with: purejaxdrl train --resume runs/r\n" in text, text
