"""The registry's algorithm sections, as TrainConfig holds them, match its records."""

import dataclasses
import typing

import pytest

import purejaxdrl as pjd
from purejaxdrl.agents.registry import AlgorithmConfigs, algorithms, names
from purejaxdrl.training.config import RunFields


def test_the_sections_are_exactly_the_registered_algorithms_in_order():
    hints = typing.get_type_hints(AlgorithmConfigs)
    sections = [f.name for f in dataclasses.fields(AlgorithmConfigs)]
    assert sections == list(names())
    defaults = AlgorithmConfigs()
    for record in algorithms():
        assert hints[record.name] is record.config_type, record.name
        assert getattr(defaults, record.name) == record.default_config()


def test_train_config_is_a_declared_class_with_the_run_fields_first():
    hints = typing.get_type_hints(pjd.TrainConfig)
    assert hints["ppo"] is pjd.agents.PPOConfig and hints["num_envs"] is int
    order = [f.name for f in dataclasses.fields(pjd.TrainConfig)]
    run = [f.name for f in dataclasses.fields(RunFields)]
    assert order == run + list(names())


@pytest.mark.parametrize("record", algorithms(), ids=lambda r: r.name)
def test_algo_config_is_the_selected_algorithms_section(record):
    config = pjd.apply_overrides(pjd.TrainConfig(), {"algo": record.name})
    assert config.algo_config is getattr(config, record.name)
    assert isinstance(config.algo_config, record.config_type)


def test_algo_config_of_an_unknown_algorithm_names_the_known_ones():
    config = dataclasses.replace(pjd.TrainConfig(), algo="ppo2")
    with pytest.raises(pjd.ConfigError, match="algo='ppo2' is not a known algorithm"):
        _ = config.algo_config


def test_registered_takes_out_what_was_registered_within_it():
    from purejaxdrl.agents import registry
    from purejaxdrl.training.config import config_class

    ppo = registry.algorithm("ppo")
    mine = dataclasses.replace(ppo, name="mine")
    before = registry.names()
    with registry.registered(mine):
        assert registry.algorithm("mine") is mine
        assert config_class()().mine == ppo.default_config()
        # Registered within by `register` itself (a module imported there).
        registry.register(dataclasses.replace(ppo, name="other"))
        assert registry.names() == (*before, "mine", "other")
    assert registry.names() == before and config_class() is pjd.TrainConfig


def test_registered_puts_back_a_replaced_record_even_after_an_error():
    from purejaxdrl.agents import registry

    ppo = registry.algorithm("ppo")
    first = dataclasses.replace(ppo, name="mine", summary="first")
    with registry.registered(first):
        with (
            pytest.raises(RuntimeError),
            registry.registered(dataclasses.replace(first, summary="second")),
        ):
            assert registry.algorithm("mine").summary == "second"
            raise RuntimeError
        assert registry.algorithm("mine") is first
        # A record register refuses registers nothing, and leaves as it came.
        refused = pytest.raises(pjd.ConfigError, match="is a built-in algorithm's")
        with refused, registry.registered(ppo):
            pass
        assert registry.algorithm("ppo") is ppo
    assert "mine" not in registry.names()


def test_registered_takes_back_the_records_before_one_register_refuses():
    from purejaxdrl.agents import registry
    from purejaxdrl.training.config import config_class

    ppo = registry.algorithm("ppo")
    good = dataclasses.replace(ppo, name="good")
    before = registry.names()
    # `good` is registered, then `ppo` (a built-in's name) is refused: the
    # with-block never runs, and `good` must not stay in the process.
    refused = pytest.raises(pjd.ConfigError, match="is a built-in algorithm's")
    with refused, registry.registered(good, ppo):
        pytest.fail("the block of a refused registration ran")
    assert registry.names() == before and config_class() is pjd.TrainConfig
