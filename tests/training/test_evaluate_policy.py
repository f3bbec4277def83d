"""`pjd.evaluate_policy`: an exported policy scored from Python as `eval` scores it."""

import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.training import policy_eval


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
