"""eval and export of a run whose config.yaml was edited by hand since it saved.

They name the edit once, as `train --resume` does, rather than a layout misfit
blamed on "another purejaxdrl version or config" for every checkpoint
(reviews/ck14.md #2).
"""

import json
import shutil

import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.config import ConfigError
from purejaxdrl.training.saved_config import OVERRIDES_FILE

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A tiny PPO run with a checkpoint at updates 2 and 4."""
    config = pjd.apply_overrides(
        pjd.TrainConfig(),
        {"num_envs": 4, "unroll_length": 16, "total_steps": 4 * 16 * 4,
         "num_logs": 2, "devices": 1,
         "run_dir": str(tmp_path_factory.mktemp("runs"))},
    )  # fmt: skip
    return pjd.train(config, write_files=True, console=False).run_dir


def _edited(run, tmp_path, old, new):
    copy = tmp_path / "edited"
    shutil.copytree(run, copy)
    text = (copy / "config.yaml").read_text()
    assert old in text
    (copy / "config.yaml").write_text(text.replace(old, new, 1))
    return copy


def test_export_names_a_network_edited_by_hand_once(run, tmp_path):
    edited = _edited(run, tmp_path, "hidden_sizes:\n  - 64", "hidden_sizes:\n  - 32")
    with pytest.raises(ConfigError) as e:
        pjd.export_policy(edited, tmp_path / "policy")
    message = str(e.value)
    assert "network.hidden_sizes: (64, 64) -> (32, 64)" in message
    assert message.count("hidden_sizes") == 1
    assert "version" not in message  # not blamed on another purejaxdrl
    assert not (tmp_path / "policy").exists()
    shutil.rmtree(edited)  # an edit that leaves the state alone still exports
    edited = _edited(run, tmp_path, "learning_rate: 0.00025", "learning_rate: 0.001")
    assert pjd.export_policy(edited, tmp_path / "policy").is_dir()


def test_eval_names_an_environment_edited_by_hand(run, tmp_path, capsys):
    edited = _edited(run, tmp_path, "id: CartPole-v1", "id: Acrobot-v1")
    assert cli.main(["eval", str(edited), "--episodes", "1"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert "changed by hand" in err[0]
    assert "(env.id: 'CartPole-v1' -> 'Acrobot-v1')" in err[0]
    assert err[0].endswith(  # the fix, and what it is for (mut15 #8)
        "the checkpoint cannot be read to evaluate with it; put config.yaml back "
        "as the run saved it."
    )


def test_export_names_an_algorithm_edited_by_hand(run, tmp_path):
    edited = _edited(run, tmp_path, "algo: ppo", "algo: a2c")
    with pytest.raises(ConfigError) as e:
        pjd.export_policy(edited, tmp_path / "policy")
    assert str(e.value).endswith(
        "was changed by hand since its checkpoint at update 4 was saved (algo: "
        "'ppo' -> 'a2c'), and the checkpoint cannot be read to export with it; "
        "put config.yaml back as the run saved it."
    )


def test_a_change_a_resume_overrode_is_not_blamed_on_a_hand_edit(run, tmp_path):
    # Resumed with --override from its newest checkpoint, then stopped before
    # it saved again: config.yaml differs from the checkpoint's, as it may.
    edited = _edited(run, tmp_path, "id: CartPole-v1", "id: Acrobot-v1")
    (edited / OVERRIDES_FILE).write_text(json.dumps({"resumed_at": 4}) + "\n")
    with pytest.raises(ConfigError) as e:
        pjd.export_policy(edited, tmp_path / "policy")
    assert "changed by hand" not in str(e.value)


def test_an_algorithm_edited_to_one_of_the_same_layout_is_named(run, tmp_path):
    # PPO renamed: its state fits, so only the algo row tells (mut15 #8 C2).
    import dataclasses

    from purejaxdrl.agents import registry

    with registry.registered():
        registry.register(dataclasses.replace(registry.algorithm("ppo"), name="mine"))
        edited = _edited(run, tmp_path, "algo: ppo", "algo: mine")
        with pytest.raises(ConfigError, match=r"\(algo: 'ppo' -> 'mine'\), and"):
            pjd.export_policy(edited, tmp_path / "policy")
