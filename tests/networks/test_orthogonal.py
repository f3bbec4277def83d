"""The orthogonal initialiser: flax's values, and no batched QR under `vmap`.

A batched QR on CPU can hang a program (see `networks.base.orthogonal`).
"""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import jaxprs_in_params

import purejaxdrl as pjd
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.networks.base import orthogonal


def _qr_operands(jaxpr) -> list:
    """The operand shapes of every QR in `jaxpr`, nested programs included."""
    shapes = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "qr":
            shapes.append(eqn.invars[0].aval.shape)
        for sub in jaxprs_in_params(eqn.params):
            shapes += _qr_operands(sub)
    return shapes


def test_vmapped_orthogonal_draws_flaxs_matrices_one_at_a_time():
    keys = jax.random.split(jax.random.key(0), 3)
    ours = jax.jit(jax.vmap(lambda k: orthogonal(2.0)(k, (6, 4))))(keys)
    flax = [nn.initializers.orthogonal(2.0)(k, (6, 4)) for k in keys]
    np.testing.assert_array_equal(ours, np.stack(flax))
    nested = jax.random.split(jax.random.key(1), (2, 3))
    init = jax.vmap(jax.vmap(lambda k: orthogonal()(k, (4, 5))))
    assert init(nested).shape == (2, 3, 4, 5)
    assert _qr_operands(jax.make_jaxpr(init)(nested).jaxpr) == [(5, 4)]


def test_a_vmapped_recurrent_network_init_has_no_batched_qr():
    # A sweep's init vmaps agents over runs: dense layers and a GRU core.
    net = pjd.networks.make_actor_critic(
        pjd.NetworkConfig(core="gru", hidden_sizes=(32,)), Box((5,)), Discrete(3)
    )
    keys = jax.random.split(jax.random.key(0), 2)
    jaxpr = jax.make_jaxpr(jax.vmap(lambda k: net.init(k, jnp.zeros(5))))(keys)
    shapes = _qr_operands(jaxpr.jaxpr)
    assert shapes and all(len(s) == 2 for s in shapes)
