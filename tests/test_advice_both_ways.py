"""Refusals reached from Python and the command line alike name both spellings.

A rule checked once cannot tell which caller gave the value: its fix names the
flag and, in the same words, the keyword argument or config field
(`config_docs.both_ways`). A grid's values given as one string are named as
that mistake.
"""

import dataclasses

import jax
import pytest

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError
from purejaxdrl.sweeps.fields import resolve_field
from purejaxdrl.sweeps.pbt.inputs import no_exploit_note
from purejaxdrl.sweeps.pbt.operators import PBTConfig
from purejaxdrl.sweeps.search import random_draws
from purejaxdrl.sweeps.spec import grid_axis, seed_list

BASE = pjd.load_preset("cartpole").config  # PPO, seed 0


def _refusal(call, *args, **kwargs) -> str:
    with pytest.raises(ConfigError) as e:
        call(*args, **kwargs)
    text = str(e.value)
    assert "\n" not in text  # one line
    return text


def test_config_field_checks_name_the_flag_and_the_field():
    bad = dataclasses.replace(BASE, num_envs="x")
    assert _refusal(pjd.training.validate, bad) == (
        "num_envs='x' is not an integer; pass e.g. --num-envs 4 (num_envs=4 in Python)."
    )
    gamma = _refusal(pjd.apply_overrides, BASE, {"ppo.anneal_lr": "maybe"})
    assert gamma.endswith(
        "pass e.g. --ppo.anneal-lr true (ppo.anneal_lr=True in Python)."
    )
    out_of_range = pjd.apply_overrides(BASE, {"ppo.gamma": 2.0})
    assert _refusal(pjd.training.validate, out_of_range).endswith(
        "e.g. --ppo.gamma 0.99 (ppo.gamma=0.99 in Python)."
    )
    seed = pjd.apply_overrides(BASE, {"seed": 2**40})
    assert _refusal(pjd.training.validate, seed).endswith(
        "pass e.g. --seed 1 (seed=1 in Python)."
    )


def test_a_mesh_too_large_names_make_mesh_too():
    n = jax.local_device_count()
    assert f"pass at most --devices {n} (devices={n} or make_mesh({n}) in Python)" in (
        _refusal(pjd.parallel.make_mesh, n + 8)
    )


def test_sweep_arguments_name_the_keyword_argument():
    assert _refusal(seed_list, BASE, 0) == (
        "seeds=0 must be >= 1; e.g. --seeds 8 (seeds=8 in Python)."
    )
    sample = {"learning_rate": ("loguniform", 1e-4, 1e-3)}
    assert "--samples N (num_samples=N in Python)" in _refusal(
        random_draws, BASE, sample, 0, 0, []
    )
    assert "{FIELD: (KIND, LOW, HIGH)} in Python); or pass --samples 0" in _refusal(
        random_draws, BASE, {}, 3, 0, []
    )
    empty = _refusal(grid_axis, BASE, "learning_rate", [], [])
    assert empty.endswith(
        "e.g. --grid learning_rate=V1,V2 (grid={'learning_rate': [V1, V2]} in Python)."
    )
    other = _refusal(resolve_field, BASE, "dqn.learning_rate")
    assert other.endswith("or pass --algo dqn (algo='dqn' in Python).")


def test_a_grid_given_as_one_string_is_named_as_that_mistake():
    text = _refusal(grid_axis, BASE, "learning_rate", "1e-3,1e-4", [])
    assert text == (
        "grid={'learning_rate': '1e-3,1e-4'} gives the values as one string; "
        "pass a list, e.g. --grid learning_rate=1e-3,1e-4 (grid={'learning_rate': "
        "[0.001, 0.0001]} in Python)."
    )
    # A list-valued field keeps its own refusal, which names its grid form.
    listed = _refusal(grid_axis, BASE, "network.hidden_sizes", "64,64", [])
    assert "each value of a list-valued field's grid is one setting's list" in listed
    # One number as a string is one value, refused as a lone number is.
    assert "'1e-3'} is one value, not a list of values" in _refusal(
        grid_axis, BASE, "learning_rate", "1e-3", []
    )


def test_pbt_notes_name_the_ready_argument():
    note = no_exploit_note(PBTConfig(ready=4), 8, 4, 4)
    assert note.endswith("pass at most --pbt.ready 3 (ready=3 in Python)")
    note = no_exploit_note(PBTConfig(ready=5), 4, 100, 5)
    assert note.endswith(
        "pass at most --pbt.ready 4 (ready=4 in Python); or pass --num-logs 7 "
        "(num_logs=7 in Python)"
    )


def test_the_first_minibatch_refusal_offers_a_count_the_devices_take():
    # 3 minibatches over --devices 4: 9 environments split unevenly; 12 trains.
    bad = pjd.apply_overrides(
        BASE, {"num_envs": 8, "ppo.num_minibatches": 3, "devices": 4}
    )
    text = _refusal(pjd.training.validate, bad)
    assert (
        "make num_envs a multiple of 3 on each of --devices 4 (devices=4 in Python), "
        "e.g. --num-envs 12 "
        "(num_envs=12 in Python)" in text
    )
    fixed = pjd.apply_overrides(bad, {"num_envs": 12})
    pjd.training.validate(fixed)
    assert pjd.parallel.split_share(12, 4, 3) is not None  # the per-device rule
    # With the devices left to the run, the least multiple.
    free = pjd.apply_overrides(bad, {"devices": 0})
    assert "e.g. --num-envs 9 (num_envs=9 in Python)" in _refusal(
        pjd.training.validate, free
    )


def test_the_minibatch_refusal_offers_the_nearest_divisor_of_the_unroll():
    # pq18 #4: 7 minibatches of a 64-step unroll over 32 environments. Its
    # second fix, a divisor of unroll_length, gave no value and no spelling;
    # 8 (of 1, 2, 4, 8, 16, 32, 64) is the nearest to 7.
    pqn = pjd.load_preset("cartpole", "pqn").config
    bad = pjd.apply_overrides(pqn, {"pqn.num_minibatches": 7})
    assert (bad.num_envs, bad.unroll_length) == (32, 64)
    assert _refusal(pjd.training.validate, bad) == (
        "pqn.num_minibatches=7 with unroll_length=64 needs num_envs divisible by "
        "7, got num_envs=32; make num_envs a multiple of 7, e.g. --num-envs 35 "
        "(num_envs=35 in Python), or make num_minibatches a divisor of "
        "unroll_length, e.g. --pqn.num-minibatches 8 (pqn.num_minibatches=8 in "
        "Python)."
    )
    pjd.training.validate(pjd.apply_overrides(bad, {"pqn.num_minibatches": 8}))
    # Halfway between two divisors (4 and 8 of 64): the smaller.
    six = pjd.apply_overrides(pqn, {"pqn.num_minibatches": 6, "num_envs": 31})
    assert "e.g. --pqn.num-minibatches 4 (pqn" in _refusal(pjd.training.validate, six)


def test_a_host_run_s_minibatch_refusal_counts_its_learner_devices():
    # A host-env run's devices are its learner's: 3 minibatches over
    # --host.learner-devices 2 need 12 environments (6 each), not 9.
    host = pjd.load_preset("cartpole_envpool", "ppo").config
    bad = pjd.apply_overrides(
        host, {"num_envs": 8, "ppo.num_minibatches": 3, "host.learner_devices": 2}
    )
    text = _refusal(pjd.training.validate, bad)
    assert (
        "make num_envs a multiple of 3 on each of --host.learner-devices 2 "
        "(host.learner_devices=2 in Python), e.g. --num-envs 12 (num_envs=12 in Python)"
        in text
    )
    fixed = pjd.apply_overrides(bad, {"num_envs": 12})
    pjd.training.validate(fixed)
    assert pjd.parallel.split_share(12, 2, 3) is not None  # the per-device rule
    # The run's own devices do not count on a host run.
    devices = pjd.apply_overrides(bad, {"host.learner_devices": 0, "devices": 4})
    assert "e.g. --num-envs 9 (num_envs=9 in Python)" in _refusal(
        pjd.training.validate, devices
    )


@pytest.mark.parametrize("bad", ["abc", ["64", "abc"], (64.5, 3)])
def test_a_bad_item_of_a_list_field_gets_the_list_s_example(bad):
    text = _refusal(pjd.apply_overrides, BASE, {"network.hidden_sizes": bad})
    assert text == (
        f"network.hidden_sizes={bad!r} is not a list of integers; pass e.g. "
        "--network.hidden-sizes 64 64 (network.hidden_sizes=(64, 64) in Python)."
    )
    # Followed, both spellings take: Python's tuple, and the command line's
    # items as its parser gives them.
    for example in [(64, 64), ["64", "64"]]:
        fixed = pjd.apply_overrides(BASE, {"network.hidden_sizes": example})
        assert fixed.network.hidden_sizes == (64, 64)
