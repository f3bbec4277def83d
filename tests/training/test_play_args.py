"""evaluate_policy and `purejaxdrl eval` refuse by one rule, in their callers' words.

The arguments are checked before the policy is read: no policy is needed.
"""

import types

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.observe import players
from purejaxdrl.observe.play import EPISODES
from purejaxdrl.observe.play_args import check_play_args


@pytest.mark.parametrize(
    ("arguments", "wanted"),
    [
        # The compiled loop counts steps in int32: this overflowed in jit.
        (
            {"max_steps": 2**31},
            f"max_steps={2**31} must be <= 2**31-1 (the compiled loop counts "
            "steps in int32); e.g. "
            "--max-steps 100000 (max_steps=100000 in Python).",
        ),
        # A bool is an int to Python; True would have played one episode.
        (
            {"episodes": True},
            "episodes=True must be an integer >= 1; e.g. "
            "--episodes 10 (episodes=10 in Python).",
        ),
        (
            {"episodes": 2.0},
            "episodes=2.0 must be an integer >= 1; e.g. "
            "--episodes 10 (episodes=10 in Python).",
        ),
        (
            {"max_steps": 0},
            "max_steps=0 must be an integer >= 1; e.g. "
            "--max-steps 10 (max_steps=10 in Python).",
        ),
        (
            {"seed": 1.5},
            "seed=1.5 must be an integer in [0, 2**32); e.g. "
            "--seed 1 (seed=1 in Python).",
        ),
        # As episodes=True: True would have played seed 1.
        (
            {"seed": True},
            "seed=True must be an integer in [0, 2**32); e.g. "
            "--seed 1 (seed=1 in Python).",
        ),
        # None means the default for max_steps only: not a raw TypeError.
        (
            {"episodes": None},
            "episodes=None must be an integer >= 1; e.g. "
            "--episodes 10 (episodes=10 in Python).",
        ),
        ({"seed": -1}, "seed=-1 must be in [0, 2**32) (JAX keeps a seed's low 32"),
    ],
)
def test_evaluate_policy_names_its_keywords(tmp_path, arguments, wanted):
    with pytest.raises(pjd.ConfigError) as refused:
        pjd.evaluate_policy(tmp_path / "no_policy", **arguments)
    assert str(refused.value).startswith(wanted), refused.value
    assert "--" not in str(refused.value).split(";")[0]  # no flag in its subject


def test_numpy_integers_pass_as_integers():
    check_play_args(np.int64(3), np.int32(10), np.uint32(7), flags=False)
    check_play_args(1, 2**31 - 1, 2**32 - 1, flags=False)
    check_play_args(EPISODES, None, 0, flags=True)


@pytest.mark.parametrize(
    ("flags", "wanted"),
    [
        (
            ["--episodes", "0"],
            "--episodes 0 must be an integer >= 1; e.g. "
            "--episodes 10 (episodes=10 in Python).",
        ),
        (
            ["--max-steps", str(2**31)],
            f"--max-steps {2**31} must be <= 2**31-1 (the compiled loop counts "
            "steps in int32); e.g. "
            "--max-steps 100000 (max_steps=100000 in Python).",
        ),
    ],
)
def test_eval_names_its_flags(capsys, tmp_path, flags, wanted):
    assert cli.main(["eval", str(tmp_path / "run"), *flags]) == 2
    assert capsys.readouterr().err == f"purejaxdrl: error: {wanted}\n"


def test_evaluate_policy_plays_evals_default_count(capsys):
    # As `eval` does with its defaults: the same number of episodes.
    import inspect

    default = inspect.signature(pjd.evaluate_policy).parameters["episodes"].default
    assert default == EPISODES == 5
    with pytest.raises(SystemExit):
        cli.main(["eval", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "is reported (default: 5)" in help_text


@pytest.mark.parametrize(
    "player",
    [
        players.DevicePlayer(None, None, types.SimpleNamespace(max_steps=7)),
        players.HostPlayer(types.SimpleNamespace(eval=None), None, None),
    ],
    ids=["device", "host"],
)
@pytest.mark.parametrize(
    ("arguments", "wanted"),
    [
        # rd21 #3: 0 played to eval.max_steps (`or`), -5 and episodes=0
        # named eval.* fields, render's 0 and -1 ended in range()'s error.
        ({"max_steps": 0}, "max_steps=0 must be an integer >= 1; e.g. "),
        ({"max_steps": -1}, "max_steps=-1 must be an integer >= 1; e.g. "),
        ({"episodes": 0}, "episodes=0 must be an integer >= 1; e.g. "),
        ({"seed": True}, "seed=True must be an integer in [0, 2**32); e.g. "),
    ],
)
def test_a_runs_player_refuses_as_evaluate_policy(player, arguments, wanted):
    for play in (player.evaluate, lambda s, **a: player.render(s, "o.gif", **a)):
        with pytest.raises(pjd.ConfigError) as refused:
            play(None, **arguments)
        assert str(refused.value).startswith(wanted), refused.value
