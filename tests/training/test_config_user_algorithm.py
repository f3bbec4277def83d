"""The config of a user's algorithm, as docs/guide/adding-an-algorithm.md builds it.

The guide's PPO-KL block runs here as written (registered into a copy of the
registry) and its loss is called on a stand-in for PPO's; the run settings a
preset gives a user's algorithm are the guide's numbers.
"""

import dataclasses
import pathlib
import re
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import ppo, registry
from purejaxdrl.setup_warnings import SetupWarning, forget_warnings

GUIDE = (
    pathlib.Path(__file__).resolve().parents[2] / "docs/guide/adding-an-algorithm.md"
)
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


@pytest.fixture
def ppo_kl():
    """The guide's PPO-KL block run, its registration undone after the test."""
    (code,) = [b for b in BLOCK.findall(GUIDE.read_text()) if "PPOKLConfig" in b]
    namespace: dict = {}
    with registry.registered():
        exec(compile(code, str(GUIDE), "exec"), namespace)
        yield namespace


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


# breakout_minatar.yaml's sections, and the run fields they set (read by
# hand from the file): what a user's algorithm without a section leaves.
BREAKOUT_SECTIONS = "ppo, impala, a2c, pqn"
BREAKOUT_RUN_FIELDS = "num_envs, unroll_length, total_steps, network, num_logs"


def _setup_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, SetupWarning)]


def test_a_preset_gives_a_users_algorithm_the_default_run_settings(ppo_kl):
    # Run settings live in each algorithm's section of a preset: a user's
    # algorithm, which has none, gets TrainConfig's, not the preset's PPO's,
    # and a warning names what it leaves, once.
    own = dataclasses.replace(
        registry.algorithm("ppo_kl"), name="ppo_kl_own", preset_section=None
    )
    registry.register(own)
    forget_warnings()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        preset = pjd.load_preset("breakout_minatar", algo="ppo_kl_own")
        again = pjd.load_preset("breakout_minatar", algo="ppo_kl_own")
    (said,) = _setup_warnings(caught)
    assert "\n" not in said
    assert said.startswith(
        "Preset 'breakout_minatar' has no ppo_kl_own section: ppo_kl_own trains "
        "with its own defaults, and the preset's tuned run fields "
        f"({BREAKOUT_RUN_FIELDS}) and sections ({BREAKOUT_SECTIONS}) are not "
        "applied; to read its ppo section, register ppo_kl_own with "
        "preset_section='ppo'"
    )
    assert not preset.tuned and preset.section == "" and again == preset
    user = preset.config
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


def test_the_guides_variant_trains_with_the_presets_ppo_section(ppo_kl):
    # preset_section="ppo": breakout_minatar's PPO run, its hyper-parameters
    # as ppo_kl's (kl_cost at its default), without PPO's target; no warning.
    forget_warnings()
    with warnings.catch_warnings():
        warnings.simplefilter("error", SetupWarning)
        preset = pjd.load_preset("breakout_minatar", algo="ppo_kl")
    tuned = pjd.load_preset("breakout_minatar", algo="ppo")
    config = preset.config
    assert (preset.tuned, preset.section, preset.target_return) == (True, "ppo", None)
    for field in ("num_envs", "unroll_length", "total_steps", "network", "env"):
        assert getattr(config, field) == getattr(tuned.config, field), field
    # The file's ppo values, by hand: lr 5e-4, entropy 0.05, 8 minibatches.
    kl = config.ppo_kl
    assert (kl.learning_rate, kl.entropy_cost, kl.num_minibatches) == (5e-4, 0.05, 8)
    assert (config.num_envs, config.network.hidden_sizes) == (64, (256, 256))
    for field in dataclasses.fields(tuned.config.ppo):
        assert getattr(kl, field.name) == getattr(tuned.config.ppo, field.name)
    assert kl.kl_cost == ppo_kl["PPOKLConfig"]().kl_cost
    assert registry.algorithm("ppo_kl").summary != registry.algorithm("ppo").summary


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class _LeanConfig:
    """PPO's fields but two (clip_eps, num_minibatches), which presets set."""

    learning_rate: float | jax.Array = 2.5e-4
    gamma: float | jax.Array = 0.99


def test_a_preset_section_field_the_config_lacks_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr(registry, "_ALGORITHMS", dict(registry._ALGORITHMS))
    registry.register(
        dataclasses.replace(
            registry.algorithm("ppo"),
            name="ppo_lean",
            config_type=_LeanConfig,
            preset_section="ppo",
        )
    )
    with pytest.raises(pjd.ConfigError) as error:
        pjd.load_preset("breakout_minatar", algo="ppo_lean")
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(
        "Preset 'breakout_minatar': ppo_lean reads its ppo section "
        "(preset_section='ppo'), which sets ppo.num_epochs, ppo.num_minibatches, "
    )
    assert "ppo.learning_rate" not in message and "ppo.gamma," not in message
    assert "none of them fields of _LeanConfig; give _LeanConfig those" in message
    assert "register ppo_lean without preset_section" in message


@pytest.mark.parametrize("section", ["ppx", "ppo_kl", 1])
def test_a_preset_section_that_is_no_built_in_is_refused(section, ppo_kl):
    record = dataclasses.replace(
        registry.algorithm("ppo_kl"), name="ppo_kl2", preset_section=section
    )
    with pytest.raises(
        pjd.ConfigError,
        match=rf"'ppo_kl2': preset_section={section!r} is not a built-in algorithm;"
        r".*\(one of a2c, apex, dqn, impala, ppo, pqn, r2d2, sac\)",
    ):
        registry.register(record)
    assert "ppo_kl2" not in registry.names()


def test_the_command_line_prints_the_warning_on_one_line(ppo_kl, capsys):
    from purejaxdrl import cli

    registry.register(
        dataclasses.replace(
            registry.algorithm("ppo_kl"), name="mine", preset_section=None
        )
    )
    forget_warnings()
    with warnings.catch_warnings(), pytest.raises(SystemExit):
        warnings.simplefilter("always")
        warnings.showwarning = _to_stderr  # as Python shows it, not pytest
        cli.main(["train", "--env", "breakout_minatar", "--algo", "mine", "--help"])
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if "warning" in x]
    assert line.startswith(
        "purejaxdrl: warning: Preset 'breakout_minatar' has no mine section:"
    )
    assert f"({BREAKOUT_RUN_FIELDS})" in line


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


def _to_stderr(message, category, filename, lineno, file=None, line=None):
    """Python's own showwarning: the formatted warning on stderr."""
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def test_a_resumed_runs_preset_search_warns_of_no_preset(ppo_kl):
    # A resumed run names no preset: the summary looks for the one it trains
    # as among all of them; a user's algorithm was warned, once per preset,
    # that each has no section for it (28 lines after `train --resume`).
    from purejaxdrl.cli.target import run_preset

    registry.register(
        dataclasses.replace(
            registry.algorithm("ppo_kl"), name="mine", preset_section=None
        )
    )
    config = pjd.load_preset("cartpole", "mine").config
    forget_warnings()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        run_preset(config)
    assert [str(w.message) for w in seen] == []


def test_a_users_algorithms_section_changed_on_another_run_is_fixed_by_algo_alone(
    ppo_kl,
):
    # Every shipped preset loads a user's algorithm, none with a tuned section
    # for it: pointing at cartpole's "tuned ppo_kl run" would name defaults.
    dqn = pjd.load_preset("cartpole", "dqn").config
    message = (
        "ppo_kl.kl_cost sets ppo_kl's hyper-parameters, but this run trains dqn; "
        "pass algo='ppo_kl', or drop it."
    )
    with pytest.raises(pjd.ConfigError, match=f"^{re.escape(message)}$"):
        pjd.apply_overrides(dqn, {"ppo_kl.kl_cost": 0.5})
