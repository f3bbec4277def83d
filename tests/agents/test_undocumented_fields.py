"""A user's config field without an `Attributes:` entry: warned of once, at register."""

import dataclasses
import warnings

import jax
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import registry
from purejaxdrl.setup_warnings import forget_warnings


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class Half(pjd.agents.PPOConfig):
    """PPO with one field described and one not.

    Attributes:
      kl_cost: weight of the KL penalty.

    """

    kl_cost: float | jax.Array = 0.1
    huber_scale: float | jax.Array = 1.0


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class Bare(pjd.agents.PPOConfig):
    huber_scale: float | jax.Array = 1.0
    mode: int = jax.tree.static(default=0)


def _record(config_type, name="mine"):
    ppo = registry.algorithm("ppo")
    return dataclasses.replace(ppo, name=name, config_type=config_type)


def test_an_undescribed_field_is_named_once_when_registered():
    forget_warnings()
    with pytest.warns(pjd.SetupWarning) as caught, registry.registered():
        registry.register(_record(Half))
        registry.register(_record(Half))  # a notebook cell run again
    said = [str(w.message) for w in caught if w.category is pjd.SetupWarning]
    assert said == [
        "Algorithm 'mine': Half describes no mine.huber_scale in its docstring's "
        "Attributes: section, so --help lists it without a description; add an "
        "entry per field, as docs/examples/reinforce.py's ReinforceConfig does."
    ]


def test_every_undescribed_field_is_named_and_inherited_entries_count():
    forget_warnings()
    with pytest.warns(pjd.SetupWarning) as caught, registry.registered(_record(Bare)):
        pass
    (said,) = [str(w.message) for w in caught if w.category is pjd.SetupWarning]
    # PPOConfig's own fields are described by PPOConfig (and its groups).
    assert "describes no mine.huber_scale, mine.mode in its docstring's" in said
    assert "--help lists them without" in said and "\n" not in said


def test_a_described_config_registers_without_a_word():
    forget_warnings()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with registry.registered(_record(pjd.agents.PPOConfig, name="quiet")):
            pass
