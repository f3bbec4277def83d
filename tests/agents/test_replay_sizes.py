"""Every replay learner's size rules: one rule book, the same words and order."""

import dataclasses
import re

import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import RunShape
from purejaxdrl.config import ConfigError
from purejaxdrl.setup_warnings import quiet_setup_warnings

REPLAY_LEARNERS = ["dqn", "apex", "sac", "r2d2"]


def _validate(algo, shape=None, **sizes):
    record = pjd.agents.algorithm(algo)
    config = dataclasses.replace(record.default_config(), **sizes)
    with quiet_setup_warnings():
        record.validate(config, shape)


def _refusal(algo, shape=None, **sizes):
    with pytest.raises(ConfigError) as error:
        _validate(algo, shape, **sizes)
    return str(error.value)


@pytest.mark.parametrize("algo", REPLAY_LEARNERS)
def test_min_replay_over_the_buffer_is_refused_first_in_the_same_words(algo):
    # The batch is too large as well: the rule that learning never starts is
    # named first, by every learner alike.
    got = _refusal(algo, buffer_size=256, min_replay=512, batch_size=1024)
    assert got == (
        f"{algo}.min_replay=512 exceeds {algo}.buffer_size=256: learning would "
        f"never start; lower it to at most --{algo}.min-replay 256 "
        f"({algo}.min_replay=256 in Python) or raise --{algo}.buffer-size 512 "
        f"({algo}.buffer_size=512 in Python)."
    )


@pytest.mark.parametrize("algo", REPLAY_LEARNERS)
def test_a_batch_over_the_buffer_is_refused_in_the_same_words(algo):
    got = _refusal(algo, buffer_size=256, min_replay=128, batch_size=512)
    assert got == (
        f"{algo}.batch_size=512 exceeds {algo}.buffer_size=256: a batch is "
        f"sampled from the buffer; lower it to at most --{algo}.batch-size 256 "
        f"({algo}.batch_size=256 in Python) or raise --{algo}.buffer-size 512 "
        f"({algo}.buffer_size=512 in Python)."
    )


@pytest.mark.parametrize("algo", ["dqn", "apex", "sac"])
def test_a_transition_buffer_must_hold_one_update(algo):
    # 8 environments x 32 steps = 256 transitions per update.
    shape = RunShape(num_envs=8, unroll_length=32, num_updates=100)
    got = _refusal(algo, shape, buffer_size=128, min_replay=64, batch_size=32)
    assert re.match(
        rf"{algo}\.buffer_size=128 holds fewer transitions than the 256 one "
        r"update adds \(num_envs x unroll_length\)",
        got,
    )


def test_r2d2s_buffer_counts_sequences_one_per_environment_and_update():
    # 128 sequences hold an update's 8 (one per environment); 128 transitions
    # would not hold 8 x 32, which is no rule of R2D2's.
    shape = RunShape(num_envs=8, unroll_length=32, num_updates=100)
    _validate("r2d2", shape, buffer_size=128, min_replay=64, batch_size=32)


@pytest.mark.parametrize("algo", REPLAY_LEARNERS)
def test_sizes_equal_to_the_buffer_are_taken(algo):
    # The rules are "at most buffer_size": a batch of the whole buffer, and
    # learning once it is full, are legal.
    _validate(algo, buffer_size=256, min_replay=256, batch_size=256)


@pytest.mark.parametrize("algo", ["dqn", "apex", "sac"])
def test_a_transition_buffer_of_exactly_one_update_is_taken(algo):
    # 8 environments x 32 steps = 256 transitions: a 256 buffer holds them.
    shape = RunShape(num_envs=8, unroll_length=32, num_updates=100)
    _validate(algo, shape, buffer_size=256, min_replay=64, batch_size=32)


@pytest.mark.parametrize("algo", REPLAY_LEARNERS)
def test_a_target_rate_of_zero_is_refused_by_every_replay_learner(algo):
    # τ = 0 keeps the initial, random target network(s) for the whole run:
    # SAC's `tau` as DQN's, Ape-X's and R2D2's `target_tau`, one rule.
    field = "tau" if algo == "sac" else "target_tau"
    got = _refusal(algo, **{field: 0.0})
    fix = f"--{algo}.{field.replace('_', '-')} 0.005 ({algo}.{field}=0.005 in Python)"
    if algo != "sac":  # no target_every: SAC moves its targets every step
        fix += (
            f" with --{algo}.target-every 1 ({algo}.target_every=1 in Python), "
            "or 1 for copies"
        )
    assert got == (
        f"{algo}.{field}=0.0 must be in (0, 1]: 0 never updates the target "
        f"network; e.g. {fix}."
    )
    _validate(algo, **{field: 1.0})  # a copy every update is legal


# τ's range is (0, 1] at both ends: above 1 the target overshoots the online
# network, refused in the same words as 0.
@pytest.mark.parametrize("algo", ["dqn", "apex", "sac", "r2d2"])
def test_a_target_rate_above_one_is_refused(algo):
    field = "tau" if algo == "sac" else "target_tau"
    record = pjd.agents.algorithm(algo)
    config = dataclasses.replace(record.default_config(), **{field: 1.5})
    with quiet_setup_warnings(), pytest.raises(ConfigError) as error:
        record.validate(config, None)
    assert str(error.value).startswith(
        f"{algo}.{field}=1.5 must be in (0, 1]: above 1 moves the target past"
    )
