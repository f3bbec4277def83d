"""Sweep fields: names resolved, values checked and applied, static keys."""

import dataclasses

import pytest

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError
from purejaxdrl.sweeps.fields import (
    Field,
    checked_value,
    resolve_field,
    setting_config,
    static_key,
)

BASE = pjd.load_preset("cartpole").config  # PPO


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("seed", "cannot be swept: seeds are their own axis"),
        ("impala.learning_rate", "belongs to impala, and a sweep of ppo"),
        ("checkpoint.every", "apply to the whole sweep"),
        ("learning_rat", "did you mean 'learning_rate'?"),
        # Each value would be the same run, compiled again.
        ("eval.every", "'eval.every' cannot be swept: sweeps and PBT play no eval"),
        ("eval.episodes", "play no evaluation episodes; drop it"),
        ("host.queue_size", "'host.queue_size' cannot be swept: sweeps and PBT "),
        ("host.queue_size", "train device environments only; drop it"),
        ("scan_unroll", "'scan_unroll' cannot be swept: it changes only speed"),
        ("scan-unroll", "changes only speed, not what a run learns; pass --scan-un"),
        # Another task: its returns would be ranked against this one's.
        ("env.id", "'env.id' cannot be swept: a sweep trains one environment, "),
        (
            "env.id",
            "do not rank against each other; run one sweep per --env / --env.id",
        ),
        ("env.imports", "'env.imports' cannot be swept: a sweep trains one env"),
    ],
)
def test_fields_a_sweep_may_not_vary_are_refused_by_name(name, message):
    with pytest.raises(ConfigError, match=message):
        resolve_field(BASE, name)


def test_the_same_environment_seen_or_limited_otherwise_may_be_swept():
    # The same task seen through running statistics, with entries hidden, or
    # with its own options (a time limit): one study, not another environment.
    field = resolve_field(BASE, "env.normalize_observations")
    assert field == Field("env.normalize_observations", dynamic=False)
    for name in ("env.hide_observations", "env.options"):
        assert resolve_field(BASE, name) == Field(name, dynamic=False)


def test_checked_values_are_the_validated_configs_values():
    lr = Field("ppo.learning_rate", dynamic=True)
    assert checked_value(BASE, lr, "3e-4", "--grid") == 3e-4
    sizes = Field("network.hidden_sizes", dynamic=False)
    assert checked_value(BASE, sizes, [32, 32], "--grid") == (32, 32)
    with pytest.raises(ConfigError, match=r"^--sample learning_rate: .*> 0"):
        checked_value(BASE, lr, -1.0, "--sample learning_rate")


def test_a_setting_is_applied_path_by_path():
    config = setting_config(
        BASE, {"ppo.learning_rate": 0.01, "network.hidden_sizes": (16,)}
    )
    assert config.ppo.learning_rate == 0.01
    assert config.network.hidden_sizes == (16,)
    assert config.ppo.clip_eps == BASE.ppo.clip_eps
    assert setting_config(BASE, {}) == BASE


def test_static_key_ignores_dynamic_fields_and_the_seed():
    other = setting_config(BASE, {"ppo.learning_rate": 0.01, "ppo.gamma": 0.9})
    assert static_key(dataclasses.replace(other, seed=7)) == static_key(BASE)
    epochs = setting_config(BASE, {"ppo.num_epochs": BASE.ppo.num_epochs + 1})
    assert static_key(epochs) != static_key(BASE)


def test_pbt_names_its_own_flag_for_fields_it_cannot_explore():
    from purejaxdrl.sweeps.pbt.inputs import PBT_FLAGS, PBT_WORDING

    with pytest.raises(
        ConfigError,
        match=r"^--explore field 'eval\.every' cannot be swept: sweeps and PBT "
        r"play no evaluation episodes; drop it\.$",
    ):
        resolve_field(BASE, "eval.every", PBT_FLAGS)
    # From Python, the keyword argument: `pbt(explore={...})`.
    with pytest.raises(ConfigError, match=r"^explore field 'eval\.every' cannot"):
        resolve_field(BASE, "eval.every", PBT_WORDING)


def test_an_unknown_field_is_named_in_lower_case_with_the_python_way_to_list():
    # sw21 #6: "Unknown sweep field ...", pointing a Python caller only at a
    # command line's help page.
    with pytest.raises(ConfigError) as e:
        resolve_field(BASE, "bogus")
    algo = BASE.algo
    assert str(e.value) == (
        f"unknown sweep field 'bogus': `purejaxdrl train --algo {algo} --help` "
        f"lists every field (help(pjd.TrainConfig) and dataclasses.fields("
        f"config.{algo}) in Python; {algo}'s may be given without '{algo}.')."
    )
    assert {f.name for f in dataclasses.fields(getattr(BASE, algo))} >= {
        "learning_rate"
    }  # what it names lists the algorithm's fields
