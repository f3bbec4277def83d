"""The heads' and torsos' initial scales (mut24 H01, H02: none was tested).

Reference: an orthogonal(scale) kernel [in, out] with in >= out has columns of
norm `scale` (Q^T Q = I, times scale). PPO's usual init (Andrychowicz et al.,
2021; CleanRL, PureJaxRL): sqrt(2) for hidden layers, 0.01 for the policy
head, so the first policy is near uniform, and 1.0 for the value head.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.networks import heads
from purejaxdrl.networks.base import NetworkConfig


def _column_norms(kernel):
    return np.linalg.norm(np.asarray(kernel), axis=0)


def _flat(params):
    """Parameters by their path, `a/b/kernel`."""
    return {
        "/".join(str(getattr(k, "key", k)) for k in path): v
        for path, v in jax.tree_util.tree_flatten_with_path(params)[0]
    }


def _kernels(params):
    return {k: v for k, v in _flat(params).items() if k.endswith("kernel")}


@pytest.mark.parametrize("core", ["none", "gru"])
def test_actor_critic_heads_and_torso_have_ppo_scales(core):
    config = NetworkConfig(hidden_sizes=(64, 64), core=core, core_size=32)
    net = heads.make_actor_critic(config, Box((8,)), Discrete(3))
    params = net.init(jax.random.key(0), jnp.zeros(8))
    ks = _kernels(params)
    policy = [v for k, v in ks.items() if v.shape[-1] == 3]
    value = [v for k, v in ks.items() if v.shape[-1] == 1]
    assert len(policy) == 1 and len(value) == 1, list(ks)
    np.testing.assert_allclose(_column_norms(policy[0]), 0.01, rtol=1e-4)
    np.testing.assert_allclose(_column_norms(value[0]), 1.0, rtol=1e-4)
    hidden = [v for k, v in ks.items() if v.shape == (64, 64)]
    assert hidden
    for v in hidden:  # square: orthogonal times sqrt(2)
        np.testing.assert_allclose(_column_norms(v), np.sqrt(2.0), rtol=1e-4)


def test_plain_q_head_has_unit_scale():
    config = NetworkConfig(hidden_sizes=(16,))
    net = heads.make_q_network(config, Box((8,)), Discrete(3), dueling=False)
    params = net.init(jax.random.key(0), jnp.zeros(8))
    q = [v for v in _kernels(params).values() if v.shape[-1] == 3]
    assert len(q) == 1
    np.testing.assert_allclose(_column_norms(q[0]), 1.0, rtol=1e-4)


def test_sac_actor_head_has_policy_scale():
    config = NetworkConfig(hidden_sizes=(16,))
    nets = heads.make_sac_networks(config, Box((8,)), Box((2,)))
    params = nets.policy.init(jax.random.key(0), jnp.zeros(8))
    out = [v for v in _kernels(params["actor"]).values() if v.shape[-1] == 4]
    assert len(out) == 1
    np.testing.assert_allclose(_column_norms(out[0]), 0.01, rtol=1e-4)
