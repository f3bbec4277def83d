"""Host environments' bad input (hr17): the rule where it lives, in one line.

Each case ends with exit status 2 and exactly one line on stderr, naming the
value, the rule and the fix in both spellings, and never a route that a later
check refuses (a `sac:` section the host runner will not run, a budget raised
for an algorithm that cannot act in the actions).
"""

import pytest

from tests.helpers import cli_error_line

TRAIN = ["train", "--no-files", "--no-compile-cache"]

CASES = [
    (
        [*TRAIN, "--env.id", "gymnasium:CartPole-v1", "--env.option", "batch_size=4"],
        "env.options 'batch_size' is not an option of gymnasium:CartPole-v1: it "
        "makes an EnvPool pool asynchronous, and a Gymnasium pool steps all its "
        "environments at once; for one process per environment pass --env.option "
        "vectorization_mode=async (env.options={'vectorization_mode': 'async'} in "
        "Python), and drop batch_size.",
    ),
    (
        [
            *TRAIN,
            "--env",
            "cartpole_envpool",
            "--env.option",
            "gym_reset_return_info=false",
        ],
        "env.options gym_reset_return_info=False is fixed for envpool:CartPole-v1 "
        "(the adapter reads reset's info, so it is always on); drop --env.option "
        "gym_reset_return_info (the env.options entry in Python).",
    ),
    (
        [*TRAIN, "--env", "cartpole_envpool", "--env.option", "max_num_players=2"],
        "env.options max_num_players=2 is fixed for envpool:CartPole-v1",
    ),
    (
        [
            *TRAIN,
            "--env",
            "cartpole_envpool",
            "--env.option",
            "num_threads=2",
            "--host.env-threads",
            "4",
        ],
        "env.options num_threads=2 sets EnvPool's worker threads, which a run "
        "takes from host.env_threads (now 4); keep --host.env-threads 4 "
        "(host.env_threads=4 in Python), and drop --env.option num_threads (the "
        "env.options entry in Python).",
    ),
    (
        [*TRAIN, "--env", "cartpole_envpool", "--env.option", "num_threads=2"],
        "(now 0); pass --host.env-threads 2 (host.env_threads=2 in Python), and",
    ),
    *[
        (
            [*TRAIN, *env, "--algo", algo, "--total-steps", "2048"],
            f"algo={algo!r} keeps a replay buffer, which the host-env runner "
            f"(env.id={env_id!r}) does not run yet; use one that keeps none (ppo, "
            "impala, a2c, pqn (discrete actions)), e.g. --algo ppo (algo='ppo' in "
            "Python), or a device environment.",
        )
        for env, algo, env_id in [
            (["--env.id", "gymnasium:Pendulum-v1"], "sac", "gymnasium:Pendulum-v1"),
            (["--env.id", "gymnasium:CartPole-v1"], "r2d2", "gymnasium:CartPole-v1"),
            (["--env", "cartpole_envpool"], "sac", "envpool:CartPole-v1"),
        ]
    ],
    (
        [
            *TRAIN,
            "--env.id",
            "gymnasium:Pendulum-v1",
            "--algo",
            "pqn",
            "--total-steps",
            "2048",
        ],
        "pqn needs discrete actions, gymnasium:Pendulum-v1's are continuous",
    ),
]


@pytest.mark.parametrize(("argv", "fragment"), CASES, ids=lambda v: str(v)[:60])
def test_host_bad_input_is_one_line_and_exit_2(argv, fragment, capsys):
    assert fragment in cli_error_line(argv, capsys)
