"""The Q-learners' schedule rules: ε falls, and α above 1 is named once.

DQN (Mnih et al., 2015), R2D2 and PQN anneal ε from exploring down to
exploiting, so a rising ε is refused; prioritised replay's P(i) ∝ p_i^α is
defined for any α >= 0, but Schaul et al. (2016) use α in [0, 1], so an α
above 1 is taken with one warning.
"""

import dataclasses
import warnings

import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import PQNConfig, dqn_config, pqn, r2d2
from purejaxdrl.config import ConfigError
from purejaxdrl.setup_warnings import forget_warnings

Q_LEARNERS = ["dqn", "apex", "r2d2", "pqn"]


@pytest.fixture(autouse=True)
def _fresh_warnings():
    forget_warnings()  # each test sees its warnings, whatever ran before


def _validate(algo, **fields):
    record = pjd.agents.algorithm(algo)
    record.validate(dataclasses.replace(record.default_config(), **fields), None)


@pytest.mark.parametrize("algo", Q_LEARNERS)
def test_a_rising_epsilon_is_refused_with_the_swap_both_ways(algo):
    rising = {"per_actor_epsilon": False, "epsilon_start": 0.05, "epsilon_end": 0.5}
    with pytest.raises(ConfigError) as error:
        _validate(algo, **rising)
    assert str(error.value) == (
        f"{algo}.epsilon_start=0.05 is below {algo}.epsilon_end=0.5: ε would "
        "rise over the run, exploring more as the agent learns; swap them, "
        f"--{algo}.epsilon-start 0.5 ({algo}.epsilon_start=0.5 in Python) and "
        f"--{algo}.epsilon-end 0.05 ({algo}.epsilon_end=0.05 in Python), or "
        "pass equal values for a fixed ε."
    )


@pytest.mark.parametrize("algo", Q_LEARNERS)
def test_an_epsilon_that_falls_or_holds_or_is_unread_is_taken(algo):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unused-field warnings
        for fields in (
            {"epsilon_start": 0.5, "epsilon_end": 0.05},  # falls
            {"epsilon_start": 0.1, "epsilon_end": 0.1},  # a fixed ε
            # epsilon_fraction 0: ε is epsilon_end from the start, never rises.
            {"epsilon_start": 0.0, "epsilon_end": 0.5, "epsilon_fraction": 0.0},
        ):
            _validate(algo, per_actor_epsilon=False, **fields)
        # Per-actor ε_i: the annealed fields are unread (a warning says so).
        _validate(algo, per_actor_epsilon=True, epsilon_start=0.0, epsilon_end=0.5)


def test_a_rising_epsilon_is_refused_from_a_python_override():
    config = pjd.load_preset("cartpole", "dqn").config.dqn
    config = pjd.apply_overrides(config, {"epsilon_start": 0.01, "epsilon_end": 0.5})
    with pytest.raises(ConfigError, match=r"^dqn.epsilon_start=0.01 is below "):
        dqn_config.validate(config)
    with pytest.raises(ConfigError, match=r"^pqn.epsilon_start=0.0 is below "):
        pqn.validate(PQNConfig(epsilon_start=0.0, epsilon_end=0.5))


@pytest.mark.parametrize(
    ("algo", "fields", "default"),
    [
        ("apex", {}, 0.6),  # prioritised, as Ape-X is
        ("dqn", {"prioritised": True}, 0.6),
        ("r2d2", {}, 0.9),  # always prioritised
    ],
)
def test_priority_alpha_above_one_is_taken_with_one_warning(algo, fields, default):
    with pytest.warns(UserWarning) as record:
        _validate(algo, priority_alpha=5.0, **fields)
        _validate(algo, priority_alpha=2.0, **fields)  # once, whatever the value
    messages = [str(w.message) for w in record if "above 1" in str(w.message)]
    assert messages == [
        f"{algo}.priority_alpha=5.0 is above 1: replay draws almost greedily by "
        "priority, where prioritised replay uses α in [0, 1] (1: in proportion to "
        f"|TD error|); taken as given, else pass e.g. --{algo}.priority-alpha "
        f"{default} ({algo}.priority_alpha={default} in Python)."
    ]


def test_priority_alpha_up_to_one_or_unused_is_not_warned_of():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r2d2.validate(r2d2.R2D2Config(priority_alpha=1.0))
        dqn_config.validate(dqn_config.DQNConfig(prioritised=True, priority_alpha=1.0))
        # Uniform replay reads no α: the unused-field warning names it instead.
        dqn_config.validate(dqn_config.DQNConfig(priority_alpha=5.0))
    assert not [w for w in caught if "above 1" in str(w.message)]
    assert any("but unused" in str(w.message) for w in caught)


@pytest.mark.parametrize("algo", Q_LEARNERS)
def test_an_epsilon_fraction_above_1_is_refused_as_a_fraction(algo):
    # 20 meant as 20% ended at ε = 1 - 0.8 / 20 = 0.96 and exported it.
    annealed = {"per_actor_epsilon": False}
    _validate(algo, **annealed, epsilon_fraction=1.0)  # the whole run: taken
    with pytest.raises(ConfigError) as error:
        _validate(algo, **annealed, epsilon_fraction=20.0)
    default = pjd.agents.algorithm(algo).default_config().epsilon_fraction
    assert str(error.value) == (
        f"{algo}.epsilon_fraction=20.0 must be in [0, 1]; e.g. "
        f"--{algo}.epsilon-fraction {default} ({algo}.epsilon_fraction={default} "
        "in Python)."
    )


def test_an_epsilon_fraction_above_1_on_the_command_line_is_one_line(capsys):
    from purejaxdrl import cli

    argv = ["train", "--no-files", "--algo", "pqn", "--pqn.epsilon-fraction", "2"]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == (
        "purejaxdrl: error: pqn.epsilon_fraction=2.0 must be in [0, 1]; e.g. "
        "--pqn.epsilon-fraction 0.1 (pqn.epsilon_fraction=0.1 in Python).\n"
    )
