"""purejaxdrl's setup warnings: one line where they are shown, Python warnings still."""

import subprocess
import sys
import warnings

import pytest

from purejaxdrl.config import SetupWarning, forget_warnings, warn_once


def test_a_setup_warning_shows_as_one_line_and_other_warnings_as_pythons():
    shown = warnings.formatwarning(
        SetupWarning("dqn.epsilon is set\n  but unused."), SetupWarning, "q.py", 105
    )
    assert shown == "purejaxdrl: warning: dqn.epsilon is set but unused.\n"
    other = warnings.formatwarning("a user's", UserWarning, "mine.py", 3, "line")
    assert other == "mine.py:3: UserWarning: a user's\n  line\n"


def test_a_setup_warning_is_a_user_warning_to_filter_record_or_raise():
    forget_warnings()
    with pytest.warns(UserWarning, match="^advice$") as caught:
        warn_once("advice", key="test_warnings")
    assert caught[0].category is SetupWarning
    forget_warnings()
    with warnings.catch_warnings():
        warnings.simplefilter("error", SetupWarning)
        with pytest.raises(SetupWarning, match="advice"):
            warn_once("advice", key="test_warnings")
    forget_warnings()


@pytest.mark.timeout(300)
def test_the_command_line_shows_a_setup_warning_as_one_line(tmp_path):
    # The warning comes as the config is checked, before the error that ends
    # the command (no training): neither a file path nor a source line.
    flags = ["--dqn.epsilon", "0.2", "--host.queue-size", "0"]
    ran = subprocess.run(
        [sys.executable, "-m", "purejaxdrl", "train", "--env", "cartpole",
         "--algo", "dqn", *flags],
        cwd=tmp_path, capture_output=True, text=True, timeout=280,
    )  # fmt: skip
    assert ran.returncode == 2, ran.stderr
    warning, error = ran.stderr.splitlines()
    assert warning.startswith("purejaxdrl: warning: dqn.epsilon is set (by a preset")
    assert warning.endswith("for Ape-X's per-actor ε_i instead.")
    assert error == "purejaxdrl: error: host.queue_size=0 must be >= 1; e.g. 1."
