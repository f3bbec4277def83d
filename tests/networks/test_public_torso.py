"""`pjd.networks.Torso`: the body of the library's heads, for a head of one's own."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

import purejaxdrl as pjd
from purejaxdrl.env.base import Box, Discrete


class _QuantileHead(nn.Module):
    """A head of a user's own: N quantiles per action on the library's torso."""

    config: pjd.NetworkConfig
    actions: int
    quantiles: int

    @nn.compact
    def __call__(self, obs):
        x = pjd.networks.Torso(self.config, 1, name="torso")(obs)
        out = nn.Dense(self.actions * self.quantiles)(x)
        return out.reshape((*obs.shape[:-1], self.actions, self.quantiles))


def test_a_users_head_on_the_torso_has_the_q_networks_torso():
    config = pjd.NetworkConfig(hidden_sizes=(8, 8), activation="tanh")
    obs = jnp.ones((5, 4))
    q = pjd.networks.make_q_network(config, Box((4,)), Discrete(2), dueling=False)
    q_params = q.init(jax.random.key(0), obs)
    mine = _QuantileHead(config, actions=2, quantiles=3)
    params = mine.init(jax.random.key(0), obs)
    assert mine.apply(params, obs).shape == (5, 2, 3)
    # The same layers, named as the library's Q-network names them: the
    # torso's features agree when its parameters are the Q-network's.
    ours, theirs = params["params"]["torso"], q_params["params"]["torso"]
    assert jax.tree.structure(ours) == jax.tree.structure(theirs)
    torso = pjd.networks.Torso(config, 1)
    features = torso.apply({"params": theirs}, obs)
    by_hand = obs
    for i in range(2):
        layer = theirs[f"Dense_{i}"]
        by_hand = np.tanh(by_hand @ layer["kernel"] + layer["bias"])
    np.testing.assert_allclose(features, by_hand, rtol=1e-5, atol=1e-6)
