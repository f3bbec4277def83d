"""A resume may change how the updates are chunked and unrolled, not which run.

`num_logs` sets the chunks (one compiled scan each) and `scan_unroll` the
rollout loop's unrolling; neither changes an update: every update's keys
come from the one before it. So a resume may change them without
`--override` (`field_roles.FREE_ON_RESUME`), and one stopped at a checkpoint
and resumed with others ends bit for bit as the run straight through. The
host runner's placement stays bound (its actor pools sample with their own
keys).
"""

import pathlib

import jax
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.config import ConfigError

# 8 updates in 4 chunks of 2.
TINY = {"num_envs": 4, "unroll_length": 8, "total_steps": 4 * 8 * 8, "num_logs": 4}


def _config(**overrides):
    base = pjd.load_preset("cartpole").config
    return pjd.apply_overrides(base, {**TINY, "devices": 1, **overrides})


def _leaves(result) -> list[np.ndarray]:
    return [np.asarray(x) for x in jax.tree.leaves(result.state.agent)]


@pytest.fixture(scope="module")
def stopped(tmp_path_factory) -> pathlib.Path:
    """The run stopped by its first evaluation, with a checkpoint (update 4:
    the chunk queued behind the evaluated one runs first)."""
    root = tmp_path_factory.mktemp("runs")
    stop = {"episodes": 1, "every": 1, "stop_at": 0.0}  # any return reaches 0
    result = pjd.train(
        _config(run_dir=str(root), eval=stop), write_files=True, console=False
    )
    assert result.updates == 4 and result.stopped_by.startswith("eval.stop_at")
    return pathlib.Path(result.run_dir)


def test_a_resume_with_other_chunks_and_unrolling_is_the_run_straight_through(
    stopped, tmp_path
):
    straight = pjd.train(_config(), console=False)
    changes = {"num_logs": 1, "scan_unroll": 2, "eval": {"stop_at": None}}
    config, said = pjd.resume_config(stopped, changes)  # no allow_changes
    assert "num_logs: 4 -> 1" in said and "scan_unroll: 0 -> 2" in said
    resumed = pjd.train(config, resume=stopped, console=False)
    assert resumed.updates == 8
    # It did run other chunks: the last 4 updates in one, not two.
    assert [r["updates"] for r in resumed.history] == [2, 4, 8]
    assert [r["updates"] for r in straight.history] == [2, 4, 6, 8]
    for x, y in zip(_leaves(straight), _leaves(resumed), strict=True):
        np.testing.assert_array_equal(x, y)  # bit for bit
    assert not (stopped / "overrides.jsonl").exists()  # no --override needed


@pytest.mark.parametrize(
    "overrides, field",
    [
        ({"host": {"actor_devices": 2}}, "host.actor_devices"),
        ({"ppo": {"learning_rate": 1e-3}}, "ppo.learning_rate"),
    ],
)
def test_fields_that_change_the_updates_still_need_override(stopped, overrides, field):
    with pytest.raises(ConfigError, match=f"changes that alter the run \\({field}: "):
        pjd.resume_config(stopped, overrides)


def test_resume_config_without_overrides_resumes_the_saved_config(stopped):
    # A plain resume needed an empty overrides mapping (a TypeError without).
    config, said = pjd.resume_config(stopped)
    assert said == [] and config == pjd.resume_config(stopped, {})[0]
