"""PPO's loss and the metrics it logs, against a NumPy evaluation of their definitions.

`test_ppo.py` checks the update's parameters and its total; these check each
metric a run logs (the policy and value losses, the entropy, the approximate
KL and the clip fraction), which no parameter depends on.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl.agents import PPOConfig, ppo
from purejaxdrl.agents.optim import stack_metrics, unstack_metrics
from tests.agents.helpers import setup

N = 64
EPS = 0.1


def _case(seed: int = 0):
    """(network, params, batch) whose ratios fall below, inside and above 1 ± ε."""
    _, network, obs_example = setup()
    params = network.init(jax.random.key(seed), obs_example)
    rng = np.random.default_rng(seed)
    obs = rng.normal(size=(N, obs_example.shape[0])).astype(np.float32)
    action = rng.integers(0, 2, size=N).astype(np.int32)
    logits, value = (np.asarray(x, np.float64) for x in network.apply(params, obs))
    logp = _log_softmax(logits)[np.arange(N), action]
    batch = ppo.Batch(
        observation=jnp.asarray(obs),
        action=jnp.asarray(action),
        # The behaviour policy's log-probabilities, 0.4 either side of the learner's.
        log_prob=jnp.asarray(logp + rng.uniform(-0.4, 0.4, N), jnp.float32),
        value=jnp.asarray(value + rng.uniform(-0.5, 0.5, N), jnp.float32),
        advantage=jnp.asarray(rng.normal(size=N), jnp.float32),
        target=jnp.asarray(rng.normal(size=N), jnp.float32),
    )
    return network, params, batch, logits, value


def _log_softmax(logits):
    z = logits - logits.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def _reference(batch, logits, value, config):
    """The loss's terms by their definitions (Schulman et al., 2017), in float64."""
    a, old_logp, v_old, adv, target = (
        np.asarray(x, np.float64)
        for x in (
            batch.action,
            batch.log_prob,
            batch.value,
            batch.advantage,
            batch.target,
        )
    )
    logp_all = _log_softmax(logits)
    logp = logp_all[np.arange(N), a.astype(int)]
    ratio = np.exp(logp - old_logp)
    eps = config.clip_eps
    policy = -np.mean(np.minimum(ratio * adv, np.clip(ratio, 1 - eps, 1 + eps) * adv))
    unclipped = (value - target) ** 2
    if config.clip_value:
        moved = v_old + np.clip(value - v_old, -eps, eps)
        value_loss = 0.5 * np.mean(np.maximum(unclipped, (moved - target) ** 2))
    else:
        value_loss = 0.5 * np.mean(unclipped)
    entropy = np.mean(-np.sum(np.exp(logp_all) * logp_all, axis=-1))
    total = policy + config.value_cost * value_loss - config.entropy_cost * entropy
    return ratio, {
        "loss/total": total,
        "loss/policy": policy,
        "loss/value": value_loss,
        "entropy": entropy,
        # KL(old || new) = E_old[log old - log new], its k3 estimate r - 1 - log r.
        "approx_kl": np.mean(ratio - 1 - np.log(ratio)),
        "clip_fraction": np.mean(np.abs(ratio - 1) > eps),
    }


@pytest.mark.parametrize("clip_value", [True, False])
def test_each_logged_metric_is_its_definition(clip_value):
    config = PPOConfig(
        clip_eps=EPS, value_cost=0.7, entropy_cost=0.03, clip_value=clip_value
    )
    network, params, batch, logits, value = _case()
    total, metrics = ppo.loss(
        params, batch, jax.random.key(1), network=network, config=config
    )
    ratio, expected = _reference(batch, logits, value, config)
    # The case reaches both clips and leaves ratios inside them.
    assert (ratio < 1 - EPS).sum() >= 5 and (ratio > 1 + EPS).sum() >= 5
    assert (np.abs(ratio - 1) < EPS).sum() >= 5
    assert set(metrics) == set(expected)
    for name, want in expected.items():
        np.testing.assert_allclose(metrics[name], want, rtol=2e-5, err_msg=name)
    np.testing.assert_allclose(total, expected["loss/total"], rtol=2e-5)


def test_stacked_metrics_keep_their_names_order_and_float32():
    metrics = {"b": jnp.float32(0.1234567), "a": jnp.asarray(3, jnp.int32), "c": 2.5}
    stacked = stack_metrics(metrics)
    assert stacked.shape == (3,) and stacked.dtype == jnp.float32
    back = unstack_metrics(list(metrics), stacked)
    assert list(back) == ["b", "a", "c"]
    np.testing.assert_array_equal(
        [float(v) for v in back.values()], np.float32([0.1234567, 3.0, 2.5])
    )
