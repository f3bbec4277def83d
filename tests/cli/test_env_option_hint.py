"""An unknown `--env.X` is checked against a Playground task's options (pg18 #5).

`--env.full-reset true` was told `--env.option full_reset=VALUE`, which the
task then refused ("did you mean 'auto_reset'?"): two starts of minutes on a
busy CPU to reach the option it takes. Other backends' options are not known
before their environment is built: the hint there stays `--env.option`.
"""

import importlib.util

import pytest

from tests.cli.test_hints import TRAIN
from tests.helpers import cli_error_line

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mujoco_playground") is None,
    reason="needs the [playground] extra",
)

BALANCE = [*TRAIN, "--env", "cartpole_balance"]


def _option(name):
    return f"--env.option {name}=VALUE (env.options={{{name!r}: VALUE}} in Python)"


def test_a_flag_for_an_option_the_task_lacks_names_the_one_it_takes(capsys):
    line = cli_error_line([*BALANCE, "--env.full-reset", "true"], capsys)
    assert (
        "--env.full-reset true; 'full_reset' is not an option of "
        f"playground/CartpoleBalance either; did you mean {_option('auto_reset')}? "
    ) in line, line


def test_a_flag_for_an_option_the_task_takes_is_sent_to_env_option(capsys):
    line = cli_error_line([*BALANCE, "--env.episode-length", "9"], capsys)
    assert f"an environment's own option? {_option('episode_length')}." in line


def test_the_env_id_given_is_the_one_whose_options_are_listed(capsys):
    argv = [*BALANCE, "--env.id", "playground/PendulumSwingup", "--env.zzz", "1"]
    line = cli_error_line(argv, capsys)
    assert (
        "'zzz' is not an option of playground/PendulumSwingup either; its options "
        "are action_repeat, auto_reset, ctrl_dt, episode_length, impl, naconmax, "
        "njmax, observation_key, randomize, randomizer, sim_dt. "
    ) in line, line


def test_another_backends_unknown_option_is_still_sent_to_env_option(capsys):
    argv = [*TRAIN, "--env", "cartpole", "--env.full-reset", "1"]
    line = cli_error_line(argv, capsys)
    assert f"an environment's own option? {_option('full_reset')}." in line
