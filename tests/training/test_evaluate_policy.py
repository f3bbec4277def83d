"""`pjd.evaluate_policy`: an exported policy scored from Python as `eval` scores it."""

import json

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.training.policy import evaluate as policy_eval


@pytest.mark.timeout(300)
def test_an_exported_policy_scores_as_its_run_does(tmp_path, monkeypatch):
    # The run's own state through its experiment's player and the exported
    # folder through evaluate_policy: the same parameters, environments and
    # seed, so the same episodes.
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {
            "num_envs": 4,
            "unroll_length": 16,
            "total_steps": 4 * 16 * 4,
            "num_logs": 1,
            "devices": 1,
            "run_dir": str(tmp_path / "runs"),
        },
    )
    result = pjd.train(config, write_files=True, console=False)
    folder = pjd.export_policy(result.run_dir, tmp_path / "policy")
    exp = pjd.training.make_experiment(config)
    run = exp.player.evaluate(result.state, episodes=6, max_steps=40, seed=3)
    exported = pjd.evaluate_policy(folder, episodes=6, max_steps=40, seed=3)
    assert exported.returns.shape == (6,)
    np.testing.assert_array_equal(exported.returns, run.returns)
    np.testing.assert_array_equal(exported.lengths, run.lengths)
    assert exported.lengths.max() <= 40
    np.testing.assert_array_equal(exported.ended, exported.lengths < 40)
    # A loaded Policy plays as its folder does; numpy's integers are counts,
    # and the count left out is eval's (5).
    loaded = pjd.evaluate_policy(
        pjd.load_policy(folder), episodes=np.int64(6), max_steps=40, seed=3
    )
    np.testing.assert_array_equal(loaded.returns, exported.returns)
    assert pjd.evaluate_policy(folder, max_steps=40).returns.shape == (5,)
    # max_steps left out: the config's eval.max_steps (documented as 100,000;
    # policy.json has no eval section) cuts the episodes. Made 5 here, below
    # any CartPole episode's length, so that another cap would show.
    assert pjd.TrainConfig().eval.max_steps == 100_000
    short = pjd.apply_overrides(pjd.TrainConfig(), {"eval": {"max_steps": 5}})
    monkeypatch.setattr(policy_eval, "config_class", lambda: lambda: short)
    capped = pjd.evaluate_policy(folder)
    np.testing.assert_array_equal(capped.lengths, [5] * 5)
    assert not capped.ended.any()
    monkeypatch.undo()
    with pytest.raises(pjd.ConfigError, match=r"^episodes=0 must be an integer >= 1"):
        pjd.evaluate_policy(folder, episodes=0)
    with pytest.raises(
        pjd.ConfigError, match="is a run directory, not an exported policy"
    ):
        pjd.evaluate_policy(result.run_dir)


def _exported(tmp_path, **env):
    """A tiny CartPole run's exported policy folder (`env`: its env section)."""
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"num_envs": 4, "unroll_length": 8, "total_steps": 32, "num_logs": 1,
         "devices": 1, "run_dir": str(tmp_path / "runs"), "env": env},
    )  # fmt: skip
    result = pjd.train(config, write_files=True, console=False)
    return pjd.export_policy(result.run_dir, tmp_path / "policy")


def _edited(folder, **fields):
    """`folder`'s policy.json with `fields` replaced, as a hand edit would."""
    path = folder / "policy.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **fields}))


def test_a_policy_json_naming_another_environment_is_refused_as_such(tmp_path, capsys):
    folder = _exported(tmp_path, hide_observations=[1, 3])
    # Its own environment's whole observation: the policy hides [1, 3] itself.
    assert pjd.evaluate_policy(folder, episodes=2, max_steps=5).returns.shape == (2,)
    # Acrobot gives [6]: the policy takes [2] (or [4] before hiding), said
    # before playing, not as "Acrobot-v1's policy takes [2]".
    _edited(folder, env_id="Acrobot-v1")
    with pytest.raises(pjd.ConfigError) as error:
        pjd.evaluate_policy(folder)
    assert str(error.value) == (
        "policy.json's env_id 'Acrobot-v1' gives observations of shape [6], which "
        "its env_hide_observations [1, 3] leave as [4], but this policy takes [2]: "
        "policy.json was edited (env_id or env_hide_observations), or the "
        "environment changed since the export; set both back to the values it "
        "was exported with."
    )
    # The hidden list edited, env_id not: the message names the list.
    _edited(folder, env_id="CartPole-v1", env_hide_observations=[1])
    with pytest.raises(
        pjd.ConfigError, match=r"hide_observations \[1\] leave as \[3\]"
    ):
        pjd.evaluate_policy(folder)
    _edited(folder, env_hide_observations=[1, 3])
    # An id nobody registered: eval takes no --env.imports, so the advice is
    # policy.json's env_imports; one line on the command line.
    _edited(folder, env_id="NoSuchEnv-v9", env_imports=["json"])
    assert cli.main(["eval", str(folder), "--episodes", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--env.imports" not in err, err
    assert err.startswith("purejaxdrl: error: Unknown environment 'NoSuchEnv-v9'")
    assert "name that module in policy.json's env_imports (now ['json'])" in err


@pytest.mark.timeout(300)
def test_a_host_policy_naming_another_environment_is_refused_before_playing(
    tmp_path,
):
    # A Gymnasium run's policy: checked against the edited env_id's pool, as a
    # device environment's is, before any episode.
    folder = _exported(tmp_path, id="gymnasium:CartPole-v1")
    _edited(folder, env_id="gymnasium:Acrobot-v1")
    with pytest.raises(pjd.ConfigError) as error:
        pjd.evaluate_policy(folder, episodes=1, max_steps=5)
    assert str(error.value).startswith(
        "policy.json's env_id 'gymnasium:Acrobot-v1' gives observations of shape "
        "[6], but this policy takes [4]: it was trained on another environment"
    ), error.value
