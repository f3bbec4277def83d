"""The config of a user's algorithm, as docs/guide/adding-an-algorithm.md builds it.

The guide's PPO-KL block runs here as written (registered into a copy of the
registry) and its loss is called on a stand-in for PPO's; the run settings a
preset gives a user's algorithm are the guide's numbers.
"""

import dataclasses
import pathlib
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import ppo, registry

GUIDE = (
    pathlib.Path(__file__).resolve().parents[2] / "docs/guide/adding-an-algorithm.md"
)
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


@pytest.fixture
def ppo_kl(monkeypatch):
    """The guide's PPO-KL block run, its registration undone after the test."""
    monkeypatch.setattr(registry, "_ALGORITHMS", dict(registry._ALGORITHMS))
    (code,) = [b for b in BLOCK.findall(GUIDE.read_text()) if "PPOKLConfig" in b]
    namespace: dict = {}
    exec(compile(code, str(GUIDE), "exec"), namespace)
    return namespace


def test_the_kl_penalty_is_in_the_logged_total(ppo_kl, monkeypatch):
    # PPO's loss stood in for: its total 2.0, its approximate KL 0.1.
    def ppo_loss(params, batch, key, *, network, config, axis_name, step):
        return jnp.float32(2.0), {"loss/total": jnp.float32(2.0), "approx_kl": 0.1}

    monkeypatch.setattr(ppo, "loss", ppo_loss)
    config = ppo_kl["PPOKLConfig"](kl_cost=0.5)
    total, metrics = ppo_kl["kl_loss"](
        None, None, None, network=None, config=config, axis_name=None, step=0
    )
    # The objective minimised is 2.0 + 0.5 x 0.1; the total logged is the same.
    np.testing.assert_allclose(total, 2.05, rtol=1e-6)
    np.testing.assert_allclose(metrics["loss/total"], total, rtol=0)
    np.testing.assert_allclose(metrics["loss/kl_penalty"], 0.05, rtol=1e-6)
    assert registry.algorithm("ppo_kl").config_type is ppo_kl["PPOKLConfig"]


def test_a_preset_gives_a_users_algorithm_the_default_run_settings(ppo_kl):
    # Run settings live in each algorithm's section of a preset: a user's
    # algorithm, which has none, gets TrainConfig's, not the preset's PPO's.
    user = pjd.load_preset("breakout_minatar", algo="ppo_kl").config
    tuned = pjd.load_preset("breakout_minatar", algo="ppo").config
    default = pjd.TrainConfig()
    run = ("num_envs", "unroll_length", "total_steps", "network")
    assert [getattr(user, f) for f in run] == [getattr(default, f) for f in run]
    assert user.env == tuned.env
    assert [getattr(user, f) for f in run] != [getattr(tuned, f) for f in run]
    hidden = " x ".join(str(h) for h in default.network.hidden_sizes)
    said = (
        f"the run has {default.num_envs} environments x {default.unroll_length} "
        f"steps per update, {default.total_steps:,} steps and a {hidden} "
        f"{default.network.torso.upper()}"
    )
    assert said in " ".join(GUIDE.read_text().split())


@pytest.mark.parametrize("name", ["lambda", "class", "with"])
def test_a_keyword_name_is_refused_and_later_configs_still_load(name, monkeypatch):
    # A section named `lambda` is no dataclass field: every config made
    # afterwards, a built-in algorithm's too, would fail, and there is no
    # unregistering.
    monkeypatch.setattr(registry, "_ALGORITHMS", dict(registry._ALGORITHMS))
    record = dataclasses.replace(registry.algorithm("ppo"), name=name)
    with pytest.raises(
        pjd.ConfigError, match=f"'{name}' is a Python keyword.*e.g. '{name}_"
    ):
        registry.register(record)
    assert name not in registry.names()
    assert pjd.load_preset("cartpole").config.algo == "ppo"


def test_a_registration_the_run_config_cannot_take_is_rolled_back(monkeypatch):
    # Whatever else would break the config class built from the records, it
    # is built on trial by `register`, which then takes the record back out.
    monkeypatch.setattr(registry, "_ALGORITHMS", dict(registry._ALGORITHMS))
    before = dict(registry._ALGORITHMS)
    make_dataclass = dataclasses.make_dataclass

    def broken(name, fields, **kwargs):
        if any(field[0] == "mine" for field in fields):
            raise TypeError("no such field")
        return make_dataclass(name, fields, **kwargs)

    record = dataclasses.replace(registry.algorithm("ppo"), name="mine")
    with monkeypatch.context() as patched:
        patched.setattr(dataclasses, "make_dataclass", broken)
        with pytest.raises(pjd.ConfigError, match="'mine'.*no such field.*nothing is"):
            registry.register(record)
    assert before == registry._ALGORITHMS
    assert pjd.load_preset("cartpole").config.algo == "ppo"
    # Registering a name again that fails keeps the record it had.
    registry.register(record)
    with monkeypatch.context() as patched:
        patched.setattr(dataclasses, "make_dataclass", broken)
        with pytest.raises(pjd.ConfigError, match="nothing is registered"):
            registry.register(dataclasses.replace(record, summary="again"))
    assert registry.algorithm("mine") is record
    assert pjd.load_preset("cartpole", algo="mine").config.algo == "mine"


def test_overriding_a_section_made_before_its_algorithm_was_registered_again(
    ppo_kl,
):
    # A notebook cell run again, with one more field: a config made before
    # holds the old class's section, which has no such field.
    old = pjd.load_preset("cartpole", algo="ppo_kl").config
    old_ppo = pjd.load_preset("cartpole").config

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class PPOKLConfig(ppo_kl["PPOKLConfig"]):
        extra: float | jax.Array = 2.0

    PPOKLConfig.__qualname__ = ppo_kl["PPOKLConfig"].__qualname__
    registry.register(
        dataclasses.replace(registry.algorithm("ppo_kl"), config_type=PPOKLConfig)
    )
    said = "made before 'ppo_kl' was registered again"
    with pytest.raises(pjd.ConfigError, match=said) as overriding:
        pjd.apply_overrides(old, {"ppo_kl.extra": 3.0})
    with pytest.raises(pjd.ConfigError, match=said) as running:
        pjd.training.make_experiment(old)
    assert str(overriding.value) == str(running.value)  # one wording
    # Selecting the section, or changing another field of a run of it.
    with pytest.raises(pjd.ConfigError, match=said):
        pjd.apply_overrides(old, {"seed": 3})
    with pytest.raises(pjd.ConfigError, match=said):
        pjd.apply_overrides(old_ppo, {"algo": "ppo_kl"})
    assert pjd.apply_overrides(old_ppo, {"seed": 3}).seed == 3  # not read: no matter
    # A config made afterwards takes the new field.
    new = pjd.load_preset("cartpole", algo="ppo_kl").config
    assert pjd.apply_overrides(new, {"ppo_kl.extra": 3.0}).ppo_kl.extra == 3.0
