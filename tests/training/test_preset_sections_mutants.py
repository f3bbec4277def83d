"""A user's algorithm on a preset: the section it reads, the warning, the target.

Each preset here is written out in the test, and the expected section, config
and message are read off it by hand.
"""

import dataclasses
import warnings

import jax
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import PPOConfig, registry
from purejaxdrl.setup_warnings import SetupWarning, forget_warnings
from purejaxdrl.training.presets.load import read_preset

ENV = "env: {id: CartPole-v1}\n"
PPO = (
    "ppo:\n"
    "  target: {mean_return: 100, env_steps: 1000}\n"
    "  num_envs: 4\n"
    "  ppo: {learning_rate: 0.001, clip_eps: 0.3}\n"
)
DQN = (
    "dqn:\n"
    "  target: {mean_return: 50, env_steps: 2000}\n"
    "  total-steps: 4000\n"
    "  network.hidden_sizes: [8]\n"
    "  dqn: {learning_rate: 0.002}\n"
)


@pytest.fixture
def mine():
    """register(name, preset_section=None, config_type=PPOConfig): PPO renamed."""
    forget_warnings()

    def register(name, preset_section=None, config_type=PPOConfig):
        registry.register(
            dataclasses.replace(
                registry.algorithm("ppo"),
                name=name,
                preset_section=preset_section,
                config_type=config_type,
            )
        )

    with registry.registered():  # what a test registers is gone after it
        yield register


def _preset(tmp_path, text, name="p"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(ENV + text)
    return str(path)


def _load(path, algo):
    """(preset, the SetupWarnings' messages) of reading `path` for `algo`.

    Read, not validated: `_LeanConfig` has no field PPO's validate checks.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        preset = read_preset(path, algo=algo)
    said = [str(w.message) for w in caught if issubclass(w.category, SetupWarning)]
    return preset, said


def test_a_variant_takes_its_bases_section_as_its_own_and_leaves_the_base(
    mine, tmp_path
):
    mine("variant", preset_section="ppo")
    preset, said = _load(_preset(tmp_path, PPO + DQN), "variant")
    assert said == []
    assert (preset.tuned, preset.section) == (True, "ppo")
    assert (preset.target_return, preset.target_steps) == (None, None)
    config = preset.config
    assert config.num_envs == 4
    assert (config.variant.learning_rate, config.variant.clip_eps) == (0.001, 0.3)
    # The hyper-parameters are the variant's, not PPO's too.
    assert config.ppo == PPOConfig()


def test_a_bad_value_in_the_bases_section_names_it_and_the_reader(mine, tmp_path):
    mine("variant", preset_section="ppo")
    path = _preset(tmp_path, "ppo:\n  num_envs: 4\n  ppo: {num_epochs: abc}\n")
    with pytest.raises(pjd.ConfigError) as error:
        pjd.load_preset(path, algo="variant")
    message = str(error.value)
    assert message.startswith("Preset ")
    assert ", section ppo (read by variant): " in message and "abc" in message
    assert "\n" not in message


def test_hyper_parameters_that_are_no_mapping_are_refused_for_a_variant_too(
    mine, tmp_path
):
    mine("variant", preset_section="ppo")
    path = _preset(tmp_path, "ppo:\n  num_envs: 4\n  ppo: 5\n")
    with pytest.raises(pjd.ConfigError) as built_in:
        pjd.load_preset(path, algo="ppo")
    with pytest.raises(pjd.ConfigError) as variant:
        pjd.load_preset(path, algo="variant")
    assert "ppo=5" in str(built_in.value)
    assert "variant=5" in str(variant.value)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class _LeanConfig:
    """Two of PPO's fields: learning_rate and num_minibatches."""

    learning_rate: float | jax.Array = 2.5e-4
    num_minibatches: int = jax.tree.static(default=4)


def test_one_field_the_config_lacks_is_named_in_the_singular(mine, tmp_path):
    mine("lean", preset_section="ppo", config_type=_LeanConfig)
    path = _preset(tmp_path, PPO)
    with pytest.raises(pjd.ConfigError) as error:
        pjd.load_preset(path, algo="lean")
    assert str(error.value) == (
        f"Preset {path!r}: lean reads its ppo section (preset_section='ppo'), "
        "which sets ppo.clip_eps, no field of _LeanConfig; give _LeanConfig that "
        "field (derive it from PPOConfig), or register lean without "
        "preset_section and set its fields yourself."
    )


def test_the_warning_lists_the_run_fields_and_sections_left(mine, tmp_path):
    # Dotted (network.hidden_sizes) and dashed (total-steps) keys are named as
    # the field they set, each field once, targets and hyper-parameters not.
    mine("own")
    path = _preset(tmp_path, DQN + PPO)
    preset, said = _load(path, "own")
    assert (preset.tuned, preset.section, preset.target_return) == (False, "", None)
    assert preset.config.own == PPOConfig()
    assert said == [
        f"Preset {path!r} has no own section: own trains with its own defaults, and "
        "the preset's tuned run fields (total_steps, network, num_envs) and "
        "sections (dqn, ppo) are not applied; to read its ppo section, register "
        "own with preset_section='ppo', or set them yourself (--total-steps, "
        "--network.*, --num-envs on the command line; apply_overrides in Python)."
    ]
    # Once per preset and algorithm: again nothing, another algorithm its own.
    assert _load(path, "own")[1] == []
    mine("other")
    assert len(_load(path, "other")[1]) == 1


def test_the_warnings_fix_names_only_a_built_in_the_config_derives_from(mine, tmp_path):
    set_yourself = "; set them yourself ({} on the command line; apply_overrides "
    set_yourself += "in Python)."
    # A config that is no PPOConfig: no preset_section to suggest.
    mine("lean", config_type=_LeanConfig)
    (said,) = _load(_preset(tmp_path, DQN + PPO), "lean")[1]
    flags = "--total-steps, --network.*, --num-envs"
    assert said.endswith(
        "sections (dqn, ppo) are not applied" + set_yourself.format(flags)
    )
    # A section of a user's algorithm is no preset_section to name either.
    mine("variant", preset_section="ppo")
    mine("own")
    text = "variant:\n  num_envs: 4\n  variant: {clip_eps: 0.3}\n"
    (said,) = _load(_preset(tmp_path, text, "users"), "own")[1]
    assert said.endswith(
        "sections (variant) are not applied" + set_yourself.format("--num-envs")
    )


def test_a_variant_on_a_preset_without_its_base_says_to_pick_one(mine, tmp_path):
    mine("variant", preset_section="ppo")
    path = _preset(tmp_path, DQN)
    preset, said = _load(path, "variant")
    assert (preset.tuned, preset.section) == (False, "")
    assert said == [
        f"Preset {path!r} has no variant section nor a ppo section (its "
        "preset_section): variant trains with its own defaults, and the preset's "
        "tuned run fields (total_steps, network) and sections (dqn) are not "
        "applied; pick a preset with a ppo section (purejaxdrl list), or set them "
        "yourself (--total-steps, --network.* on the command line; apply_overrides "
        "in Python)."
    ]


def test_an_environment_alone_warns_of_nothing(mine, tmp_path):
    mine("own")
    preset, said = _load(_preset(tmp_path, "description: just the env\n"), "own")
    assert said == [] and not preset.tuned
    assert preset.config.env.id == "CartPole-v1"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (
            "{mean_return: -.inf, env_steps: 10}",
            "target.mean_return=-inf is not finite",
        ),
        ("{mean_return: true, env_steps: 10}", "target.mean_return=True is not a numb"),
        ("{mean_return: 1, env_steps: true}", "env_steps=True is not a positive integ"),
        ("{env_steps: 10}", "dqn.target has no mean_return; e.g. target: {"),
        ("{}", "dqn.target has no mean_return; e.g. target: {"),
    ],
)
def test_a_target_that_is_no_score_is_refused(tmp_path, target, message):
    path = _preset(tmp_path, f"dqn: {{target: {target}}}\n")
    with pytest.raises(pjd.ConfigError) as error:
        pjd.load_preset(path, "dqn")
    assert message in str(error.value)


def test_a_targets_steps_in_exponent_notation_are_an_int_and_of_is_training(
    tmp_path,
):
    path = _preset(tmp_path, "dqn: {target: {mean_return: 1, env_steps: 1.0e+3}}\n")
    preset = pjd.load_preset(path, "dqn")
    assert type(preset.target_steps) is int and preset.target_steps == 1000
    assert (preset.target_of, preset.target_measured) == ("training", True)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class _BoolDefault(PPOConfig):
    """A dynamic float field whose default is a bool (True), which is no float leaf."""

    kl_cost: float | jax.Array = True


def test_registering_refuses_a_bool_default_and_a_preset_section_of_no_name(mine):
    with pytest.raises(
        pjd.ConfigError, match=r"field mine\.kl_cost: its default True is not a number"
    ):
        mine("mine", config_type=_BoolDefault)
    with pytest.raises(
        pjd.ConfigError, match=r"preset_section=\['ppo'\] is not a built-in algorithm"
    ):
        mine("mine", preset_section=["ppo"])
    assert "mine" not in registry.names()


def test_a_section_that_is_no_mapping_is_no_tuned_section_to_warn_of(mine, tmp_path):
    # dqn's section is empty (null): the warning names only ppo's.
    mine("own")
    path = _preset(tmp_path, "dqn:\n" + PPO)
    (said,) = _load(path, "own")[1]
    assert "tuned run fields (num_envs) and sections (ppo) are not applied" in said


def test_a_bases_section_that_is_no_mapping_is_refused_for_a_variant_too(
    mine, tmp_path
):
    # It was read as no section at all: the variant trained its own defaults,
    # with no warning, where PPO's run is refused.
    mine("variant", preset_section="ppo")
    path = _preset(tmp_path, "ppo: [num_envs, 4]\n")
    with pytest.raises(pjd.ConfigError, match="its 'ppo' section is a list"):
        pjd.load_preset(path, algo="ppo")
    with pytest.raises(pjd.ConfigError) as error:
        pjd.load_preset(path, algo="variant")
    assert str(error.value) == (
        f"Preset {path!r}: its 'ppo' section (which variant reads, its "
        "preset_section) is a list, not a mapping; write it as ppo: "
        "{num_envs: 4, ...}."
    )


def test_switching_to_a_users_algorithm_names_no_preset_section_it_lacks(mine):
    # Every shipped preset can train it, but none has its section: no
    # "start from pjd.load_preset('cartpole', algo='mine')" (mut15 #4).
    mine("mine")
    cartpole = pjd.load_preset("cartpole").config
    with warnings.catch_warnings():
        warnings.simplefilter("error", SetupWarning)
        assert pjd.apply_overrides(cartpole, {"algo": "mine"}).algo == "mine"


def test_a_switch_on_cartpole_names_no_masked_memory_task():
    # cartpole_masked trains r2d2 on CartPole-v1 with observations hidden:
    # another task, not this config's tuned run (mut15 #6).
    from purejaxdrl.training.presets.choice import section_fix, switched_algo

    cartpole = pjd.load_preset("cartpole").config
    assert switched_algo(cartpole, dataclasses.replace(cartpole, algo="r2d2")) == ""
    assert section_fix(cartpole, "r2d2") == "algo='r2d2'"
