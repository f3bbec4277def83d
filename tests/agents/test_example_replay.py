"""The replay variant of docs/guide/adding-an-algorithm.md, run as a user's module.

docs/examples/expected_sarsa.py is Expected SARSA as a loss on DQN's learner
(`make_dqn`'s `loss_fn`), registered from DQN's record. Its loss is checked
against NumPy on a tiny batch, and it trains on CartPole from DQN's preset
section: at `target_epsilon` 0 exactly as DQN.
"""

import functools
import importlib
import pathlib
import shutil
import sys

import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import registry
from purejaxdrl.agents.dqn import Replayed
from tests.helpers import flat

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "expected_sarsa.py"
GUIDE = ROOT / "docs" / "guide" / "adding-an-algorithm.md"
# Six updates of 8 x 4 steps; the second stores the 64th and learns, on.
SMALL = {"num_envs": 8, "unroll_length": 4, "total_steps": 8 * 4 * 6, "devices": 1}
SECTION = {"min_replay": 64, "batch_size": 16, "updates_per_step": 2}


@pytest.fixture
def expected_sarsa(tmp_path, monkeypatch):
    """The example imported as a user's module, registered in a copied registry."""
    monkeypatch.setattr(registry, "_ALGORITHMS", dict(registry._ALGORITHMS))
    shutil.copy(EXAMPLE, tmp_path / "expected_sarsa.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "expected_sarsa", raising=False)
    yield importlib.import_module("expected_sarsa")
    sys.modules.pop("expected_sarsa", None)


def test_the_guide_shows_the_module_the_tests_train():
    assert f"```python\n{EXAMPLE.read_text()}```" in GUIDE.read_text()


def _numpy_loss(q, q_next_online, q_next_target, item, weights, epsilon):
    """Expected SARSA's weighted Huber loss and δ, written out in NumPy.

    π(a|s') = (1 - ε) 1[a = argmax_b Q(s', b)] + ε / |legal(s')| on the legal
    actions (finite Q), 0 on the others; no bootstrap after a termination.
    """
    legal = np.isfinite(q_next_online)
    pi = epsilon * legal / legal.sum(-1, keepdims=True)
    rows = np.arange(len(q))
    pi[rows, np.argmax(q_next_online, -1)] += 1.0 - epsilon
    expected = np.where(legal, pi * np.where(legal, q_next_target, 0.0), 0.0).sum(-1)
    discount = np.asarray(item.discount)
    bootstrap = np.where(discount == 0, 0.0, expected)
    td = item.reward + discount * bootstrap - q[rows, item.action]
    huber = np.where(np.abs(td) <= 1, 0.5 * td**2, np.abs(td) - 0.5)
    return np.mean(weights * huber), td


@pytest.mark.parametrize("masked", [False, True], ids=["all-legal", "masked"])
def test_its_loss_is_expected_sarsa_in_numpy(expected_sarsa, masked):
    rng = np.random.default_rng(0)
    batch, dims, actions, epsilon = 6, 3, 3, 0.3
    online, target = (rng.normal(size=(dims, actions)) for _ in range(2))
    obs, next_obs = (rng.normal(size=(batch, dims)) for _ in range(2))
    action = rng.integers(0, actions - masked, batch)
    reward = 2.0 * rng.normal(size=batch)
    discount = np.array([0.81, 0.81, 0.0, 0.9, 0.81, 0.0])  # two terminations
    weights = rng.uniform(0.2, 1.0, batch)
    # With `masked`, action 2 is illegal everywhere (its Q -inf, as an action
    # mask writes it); the terminations' next observations are inf.
    next_obs[discount == 0] = np.inf

    def head(params, x):
        q = x @ params
        return q.at[:, 2].set(-jnp.inf) if masked else q

    f32 = functools.partial(jnp.asarray, dtype=jnp.float32)
    item = Replayed(f32(obs), jnp.asarray(action, jnp.int32), f32(reward),
                    f32(discount), f32(next_obs))  # fmt: skip
    config = expected_sarsa.ExpectedSarsaConfig(target_epsilon=epsilon)
    got, got_td = expected_sarsa.loss(
        f32(online), f32(target), item, f32(weights), apply=head, config=config
    )
    with np.errstate(invalid="ignore", divide="ignore"):  # the inf rows
        q, q_next_online = obs @ online, next_obs @ online
        q_next_target = next_obs @ target
        if masked:
            q[:, 2] = q_next_online[:, 2] = q_next_target[:, 2] = -np.inf
        want, want_td = _numpy_loss(
            q, q_next_online, q_next_target, item, weights, epsilon
        )
    assert np.isfinite(want_td).all() and (np.abs(want_td) > 1).any()
    assert (np.abs(want_td) < 1).any()  # both sides of the Huber loss
    np.testing.assert_allclose(got_td, want_td, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def _config(algo: str, **section):
    config = pjd.load_preset("cartpole", algo=algo).config
    return pjd.apply_overrides(config, {**SMALL, algo: {**SECTION, **section}})


@pytest.mark.timeout(300)
def test_it_trains_from_dqns_section_and_at_epsilon_0_is_dqn(expected_sarsa):
    assert registry.algorithm("expected_sarsa") is expected_sarsa.ALGORITHM
    preset = pjd.load_preset("cartpole", algo="expected_sarsa")
    assert (preset.tuned, preset.section) == (True, "dqn")
    dqn = pjd.train(_config("dqn"), console=False)
    same = pjd.train(_config("expected_sarsa", target_epsilon=0.0), console=False)
    np.testing.assert_allclose(
        flat(same.state.agent.params), flat(dqn.state.agent.params), rtol=1e-5,
        atol=1e-6,
    )  # fmt: skip
    other = pjd.train(_config("expected_sarsa", target_epsilon=0.5), console=False)
    assert other.state.agent.grad_steps == 2 * 5  # five updates learnt
    assert np.isfinite(other.history[-1]["loss/total"])
    assert not np.allclose(flat(other.state.agent.params), flat(dqn.state.agent.params))
    with pytest.raises(
        pjd.ConfigError, match=r"expected_sarsa.target_epsilon=2.0 must be in \[0, 1\]"
    ):
        pjd.validate(_config("expected_sarsa", target_epsilon=2.0))
