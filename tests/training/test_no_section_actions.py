"""A preset without the algorithm's section, where the algorithm cannot act there."""

import pytest

from purejaxdrl import cli
from purejaxdrl.training.presets.load import NoSectionError, read_preset

SAC_PRESETS = (
    "cartpole_balance, cheetah_run, hopper_hop, humanoid_walk, inverted_pendulum, "
    "pendulum_swingup, walker_walk"
)


def test_sac_on_cartpoles_id_says_its_actions_are_discrete(capsys):
    # No --env: the preset is named as the default it started from, not by
    # its installed file's path, which the user never typed (fh20 #11).
    status = cli.main(["train", "--algo", "sac"])
    assert status == 2
    assert capsys.readouterr().err == (
        "purejaxdrl: error: The default preset, cartpole (--env cartpole), has no "
        "'sac' section, nor "
        "could one train its environment: sac needs continuous actions, "
        "CartPole-v1's are discrete; pick --algo ppo (algo='ppo' in Python) or "
        "another of its (impala, a2c, dqn, apex, pqn), or an --env with "
        "continuous actions and a sac "
        f"section ({SAC_PRESETS}).\n"
    )
    # With the id alone, a continuous-control preset is the closest start
    # (`preset_choice`), and the first refusal is the one that matters.
    status = cli.main(["train", "--env.id", "CartPole-v1", "--algo", "sac"])
    assert status == 2
    # Its record's action_kinds refuse it before its networks are made.
    assert capsys.readouterr().err == (
        "purejaxdrl: error: sac needs continuous actions, CartPole-v1's are "
        "discrete; pick --algo ppo (algo='ppo' in Python) or another that acts "
        "in them (impala, a2c, dqn, apex, r2d2, pqn), or an --env with "
        "continuous actions.\n"
    )


def test_a_users_file_whose_sections_tell_the_kind(tmp_path):
    dqn_only = tmp_path / "mine.yaml"
    dqn_only.write_text("env: {id: Acrobot-v1}\ndqn: {}\n")
    with pytest.raises(NoSectionError) as error:
        read_preset(str(dqn_only), "sac")
    assert error.value.for_flags(None, None) == (
        f"Preset {str(dqn_only)!r} has no 'sac' section, nor could one train its "
        "environment: sac needs continuous actions, Acrobot-v1's are discrete; "
        "pick --algo dqn (algo='dqn' in Python), or an --env with continuous "
        "actions and a sac section "
        f"({SAC_PRESETS})."
    )


def test_where_the_sections_do_not_tell_the_kind_it_says_how_to_add_one(tmp_path):
    ppo_only = tmp_path / "mine.yaml"
    ppo_only.write_text("env: {id: Acrobot-v1}\nppo: {}\n")
    with pytest.raises(NoSectionError) as error:
        read_preset(str(ppo_only), "sac")
    assert error.value.for_flags(None, None).startswith(
        f"Preset {str(ppo_only)!r} has no 'sac' section, so it has no tuned sac "
        "settings; to train sac on Acrobot-v1, add a section 'sac:'"
    )


def test_a_preset_named_is_called_by_its_path_not_the_default():
    # Only a command that named no --env started from "the default preset".
    with pytest.raises(NoSectionError) as error:
        read_preset("cartpole", "sac")
    named = f"Preset {str(error.value.path)!r} has no 'sac' section, nor could"
    assert str(error.value).startswith(named), str(error.value)
    assert error.value.for_flags("cartpole", None).startswith(named)
    assert error.value.for_flags(None, None).startswith(
        "The default preset, cartpole (--env cartpole), has no 'sac' section"
    )


def test_another_id_than_the_presets_gets_the_generic_refusal():
    with pytest.raises(NoSectionError) as error:
        read_preset("cartpole", "sac")
    line = error.value.for_flags("cartpole", "Pendulum-v1")
    assert "to train sac on Pendulum-v1, copy that file" in line
    assert "discrete" not in line


HOST_SAC = (
    "algo='sac' keeps a replay buffer, which the host-env runner (env.id={!r}) "
    "does not run yet; use one that keeps none (ppo, impala, a2c, pqn (discrete "
    "actions)), e.g. --algo ppo (algo='ppo' in Python), or a device environment."
)


def test_a_host_id_is_told_the_host_runners_rule_not_to_add_a_section():
    # hr17 #2: "write a my.yaml holding 'sac: {}'", which the host runner then
    # refused; the refusal that decides comes first, in every form.
    with pytest.raises(NoSectionError) as error:
        read_preset("cartpole_envpool", "sac")
    said = HOST_SAC.format("envpool:CartPole-v1")
    assert str(error.value) == f"{said} From Python: pass another algo= or preset."
    assert error.value.for_flags("cartpole_envpool", None) == said
    with pytest.raises(NoSectionError) as error:
        read_preset("cartpole", "sac")
    line = error.value.for_flags(None, "gymnasium:Pendulum-v1")
    assert line == HOST_SAC.format("gymnasium:Pendulum-v1")
