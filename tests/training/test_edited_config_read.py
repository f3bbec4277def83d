"""eval and export of a run whose config.yaml was edited by hand since it saved.

They name the edit once, as `train --resume` does, rather than a layout misfit
blamed on "another purejaxdrl version or config" for every checkpoint
(reviews/ck14.md #2).
"""

import shutil

import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.config import ConfigError

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
