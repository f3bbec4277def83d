"""The config of a user's algorithm, as docs/guide/adding-an-algorithm.md builds it.

The guide's PPO-KL block runs here as written (registered into a copy of the
registry) and its loss is called on a stand-in for PPO's; the run settings a
preset gives a user's algorithm are the guide's numbers.
"""

import pathlib
import re

import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import ppo, registry

GUIDE = (
    pathlib.Path(__file__).resolve().parents[2] / "docs/guide/adding-an-algorithm.md"
)
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


@pytest.fixture
def ppo_kl(monkeypatch):
    """The guide's PPO-KL block run, its registration undone after the test."""
    monkeypatch.setattr(registry, "_ALGORITHMS", dict(registry._ALGORITHMS))
    (code,) = [b for b in BLOCK.findall(GUIDE.read_text()) if "PPOKLConfig" in b]
    namespace: dict = {}
    exec(compile(code, str(GUIDE), "exec"), namespace)
    return namespace


def test_the_kl_penalty_is_in_the_logged_total(ppo_kl, monkeypatch):
    # PPO's loss stood in for: its total 2.0, its approximate KL 0.1.
    def ppo_loss(params, batch, key, *, network, config):
        return jnp.float32(2.0), {"loss/total": jnp.float32(2.0), "approx_kl": 0.1}

    monkeypatch.setattr(ppo, "loss", ppo_loss)
    config = ppo_kl["PPOKLConfig"](kl_cost=0.5)
    total, metrics = ppo_kl["kl_loss"](None, None, None, network=None, config=config)
    # The objective minimised is 2.0 + 0.5 x 0.1; the total logged is the same.
    np.testing.assert_allclose(total, 2.05, rtol=1e-6)
    np.testing.assert_allclose(metrics["loss/total"], total, rtol=0)
    np.testing.assert_allclose(metrics["loss/kl_penalty"], 0.05, rtol=1e-6)
    assert registry.algorithm("ppo_kl").config_type is ppo_kl["PPOKLConfig"]


def test_a_preset_gives_a_users_algorithm_the_default_run_settings(ppo_kl):
    # Run settings live in each algorithm's section of a preset: a user's
    # algorithm, which has none, gets TrainConfig's, not the preset's PPO's.
    user = pjd.load_preset("breakout_minatar", algo="ppo_kl").config
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
