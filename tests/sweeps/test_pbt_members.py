"""Every PBT member's policy outlives the process: its statistics and export."""

import shutil

import flax.serialization
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents.registry import algorithm
from purejaxdrl.env.normalization import normalize

pytestmark = pytest.mark.timeout(600)


def _assert_trees_equal(actual, expected) -> None:
    """Same structure (jax.tree.map checks it) and the same values, bit for bit."""
    jax.tree.map(
        lambda a, e: np.testing.assert_array_equal(np.asarray(a), np.asarray(e)),
        actual,
        expected,
    )


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A population of 2 on normalised observations, its directory written."""
    config = pjd.load_preset("cartpole").config  # PPO, 512 steps per update
    base = pjd.apply_overrides(
        config,
        {
            "total_steps": config.steps_per_update * 2,
            "num_logs": 2,
            "devices": 1,
            "run_dir": str(tmp_path_factory.mktemp("runs")),
            "env": {"normalize_observations": True},
        },
    )
    space = {"learning_rate": ("loguniform", 1e-4, 1e-2)}
    result = pjd.pbt(
        base, explore=space, population=2, ready=1, write_files=True, console=False
    )
    # Members act on their own observations: their statistics differ, so
    # the wrong member's would show.
    assert not np.allclose(result.final_stats[0].mean, result.final_stats[1].mean)
    return result


def test_a_loaded_pbt_run_has_every_members_statistics(trained):
    loaded = pjd.load_pbt(trained.run_dir)
    assert loaded.final_stats == [None, None]  # read when asked for
    for member in range(2):
        _assert_trees_equal(loaded.stats(member), trained.final_stats[member])
    assert loaded.stats(1) is loaded.final_stats[1]
    assert trained.stats(1) is trained.final_stats[1]  # live: what it holds


def test_any_member_of_a_loaded_run_exports_a_policy_that_acts_as_it(trained, tmp_path):
    # With observations normalised, a member's parameters act only beside its
    # statistics; `policy/` holds the best member's, export_member any one's.
    loaded = pjd.load_pbt(trained.run_dir)
    out = pjd.sweeps.export_member(loaded, 1, tmp_path / "member-1")
    policy = pjd.load_policy(out)
    assert policy.spec["normalize_observations"] is True
    _assert_trees_equal(policy.params, trained.final_params[1])
    blob = flax.serialization.msgpack_restore((out / "params.msgpack").read_bytes())
    np.testing.assert_array_equal(
        blob["obs_stats"]["mean"], trained.final_stats[1].mean
    )
    # Member 1 as it acted live: its network on observations normalised by
    # its own statistics, greedy (a categorical's mode is the argmax).
    base = trained.base
    env = pjd.env.make("CartPole-v1")
    specs = (env.observation_spec(env.default_params), env.action_spec(None))
    network, _ = algorithm("ppo").make_networks(base.algo_config, base.network, *specs)
    obs = jax.random.normal(jax.random.key(0), (64, 4)) * 2.0
    normalised = normalize(trained.final_stats[1], obs)
    logits = network.apply(trained.final_params[1], normalised)[0]
    actions = policy.mode(obs)
    np.testing.assert_array_equal(actions, jnp.argmax(logits, axis=-1))
    raw = jnp.argmax(network.apply(trained.final_params[1], obs)[0], axis=-1)
    assert (actions != raw).any()  # the statistics change what it does

    with pytest.raises(pjd.ConfigError, match="already holds an exported policy"):
        pjd.sweeps.export_member(loaded, 1, out)
    pjd.sweeps.export_member(loaded, 0, out, overwrite=True)
    _assert_trees_equal(pjd.load_policy(out).params, trained.final_params[0])
    with pytest.raises(IndexError, match="member=2"):
        pjd.sweeps.export_member(loaded, 2, tmp_path / "none")
    with pytest.raises(pjd.ConfigError, match="is a file"):
        pjd.sweeps.export_member(loaded, 1, trained.run_dir / "pbt.yaml")


def test_a_directory_written_before_members_statistics_refuses_them(trained, tmp_path):
    # Such a directory holds no members' statistics: exported without them, a
    # member's policy would act on raw observations, and nothing would say so.
    old = tmp_path / "old"
    shutil.copytree(trained.run_dir, old)
    for stats in (old / "params").glob("member-*.obs-stats.msgpack"):
        stats.unlink()
    loaded = pjd.load_pbt(old)
    with pytest.raises(pjd.ConfigError) as e:
        loaded.stats(1)
    assert str(e.value) == (
        f"member 1's observation statistics are not in {old / 'params'} (a PBT "
        "directory written before they were saved); its best member's policy, "
        f"with its own, is {old / 'policy'}."
    )
    with pytest.raises(pjd.ConfigError, match="member 0's observation statistics"):
        pjd.sweeps.export_member(loaded, 0, tmp_path / "out")
    assert not (tmp_path / "out").exists()
