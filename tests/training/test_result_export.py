"""`result.export(out)` refuses the folders `result.policy(out)` refuses."""

import hashlib
import inspect
import pickle

import numpy as np
import pytest

import purejaxdrl as pjd


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.timeout(300)
def test_export_refuses_an_earlier_policy_and_a_run_directory(tmp_path):
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "ppo").config,
        {"num_envs": 4, "unroll_length": 4, "total_steps": 4 * 4 * 2,
         "num_logs": 1, "devices": 1, "run_dir": str(tmp_path / "runs"),
         "env": {"normalize_observations": True},
         "ppo": {"num_minibatches": 1, "num_epochs": 1}},
    )  # fmt: skip
    result = pjd.train(config, write_files=True, console=False)
    out = tmp_path / "policy"
    assert result.export(out) == out
    written = _digest(out / "params.msgpack")
    # A second export into the same folder is refused, as `policy(out)` is,
    # with the same message, and leaves the first export as it was.
    with pytest.raises(pjd.ConfigError) as refused:
        result.export(out)
    with pytest.raises(pjd.ConfigError) as refused_by_policy:
        result.policy(out)
    assert str(refused.value) == str(refused_by_policy.value)
    assert str(refused.value).startswith(f"out={str(out)!r} already holds")
    assert "\n" not in str(refused.value)
    assert _digest(out / "params.msgpack") == written
    assert result.export(out, overwrite=True) == out
    # The run's directory is refused even with overwrite: its params.msgpack
    # is the run's own (the checkpointed parameters `export_policy` reads).
    own = result.run_dir / "params.msgpack"
    before = _digest(own)
    for overwrite in (False, True):
        with pytest.raises(pjd.ConfigError, match="is a run directory"):
            result.export(result.run_dir, overwrite=overwrite)
    assert _digest(own) == before
    assert not (result.run_dir / "policy.json").exists()
    # What was exported is the run's final policy.
    obs = np.zeros((3, *result.policy().spec["observation_shape"]), np.float32)
    np.testing.assert_array_equal(
        pjd.load_policy(out).mode(obs), result.policy().mode(obs)
    )


def test_export_shows_only_its_own_parameters_and_the_result_pickles(tmp_path):
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "ppo").config,
        {"num_envs": 4, "unroll_length": 4, "total_steps": 4 * 4,
         "num_logs": 1, "devices": 1,
         "ppo": {"num_minibatches": 1, "num_epochs": 1}},
    )  # fmt: skip
    result = pjd.train(config, console=False)
    # What help() and a notebook's tooltip show: not the run's arrays.
    parameters = inspect.signature(result.export).parameters
    assert list(parameters) == ["out", "overwrite"]
    assert parameters["overwrite"].kind is inspect.Parameter.KEYWORD_ONLY
    assert parameters["overwrite"].default is False
    # A TrainResult pickles (to hand to another process), its export with it.
    again = pickle.loads(pickle.dumps(result))
    assert again.export(tmp_path / "policy") == tmp_path / "policy"
    obs = np.zeros((3, 4), np.float32)
    np.testing.assert_array_equal(
        pjd.load_policy(tmp_path / "policy").mode(obs), result.policy().mode(obs)
    )
