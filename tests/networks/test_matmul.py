"""Dense layers' matmul: autodiff's gradients, the packed dot on CPU, SiLU."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

from purejaxdrl._platform import compiler_options
from purejaxdrl.networks.base import dense, silu
from purejaxdrl.networks.matmul import dot_general, matmul


def _loss(mm, x, w):
    return jnp.sum(jnp.sin(mm(x, w)))


def _numpy_grads(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # d/dx and d/dw of sum(sin(x @ w)), by hand: g = cos(x @ w).
    x2, g = x.reshape(-1, x.shape[-1]), np.cos(x @ w).reshape(-1, w.shape[1])
    return (g @ w.T).reshape(x.shape), x2.T @ g


def test_matmul_gradients_match_the_definition_with_leading_axes():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 40, 8)).astype(np.float32)
    w = rng.normal(size=(8, 16)).astype(np.float32)
    dx, dw = jax.jit(jax.grad(lambda x, w: _loss(matmul, x, w), (0, 1)))(x, w)
    ref_dx, ref_dw = _numpy_grads(x.astype(np.float64), w.astype(np.float64))
    np.testing.assert_allclose(dx, ref_dx, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dw, ref_dw, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(jax.jit(matmul)(x, w), jax.jit(jnp.matmul)(x, w))


def test_the_weight_gradient_is_a_packed_dot_on_cpu():
    # What the module is for: the compiled backward pass transposes x into a
    # buffer and hands xᵀg to XLA:CPU's library dot, not its generic one.
    x, w = jnp.ones((960, 32)), jnp.ones((32, 32))
    hlo = jax.jit(jax.grad(lambda w: _loss(matmul, x, w))).lower(w).compile().as_text()
    plain = jax.jit(jax.grad(lambda w: _loss(jnp.matmul, x, w)))
    plain_hlo = plain.lower(w).compile().as_text()
    assert "transpose" in hlo
    assert hlo.count("__ynn_fusion") > plain_hlo.count("__ynn_fusion")


def test_matmul_under_vmap_and_shard_map_with_replicated_weights():
    # A sweep vmaps the update; shard_map splits the batch over devices while
    # the weights are replicated: autodiff sums their gradient over devices.
    mesh = jax.make_mesh((2,), ("data",), (AxisType.Auto,), devices=jax.devices()[:2])
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 64, 8)).astype(np.float32)
    w = rng.normal(size=(2, 8, 4)).astype(np.float32)

    def grads(mm):
        def per_device(x, w):
            run = jax.vmap(lambda x, w: jax.grad(lambda w: _loss(mm, x, w))(w))
            return run(x, w)

        sharded = jax.shard_map(
            per_device, mesh=mesh, in_specs=(P(None, "data"), P()), out_specs=P()
        )
        return jax.jit(sharded)(x, w)

    np.testing.assert_allclose(grads(matmul), grads(jnp.matmul), rtol=1e-5, atol=1e-5)


def test_dense_layers_take_other_products_to_lax():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 3)).astype(np.float32)
    w = rng.normal(size=(3, 2)).astype(np.float32)
    high = dot_general(x, w, (((1,), (0,)), ((), ())), precision="highest")
    np.testing.assert_allclose(high, x @ w, rtol=1e-6)
    batched = dot_general(
        x[None], w[None], (((2,), (1,)), ((0,), (0,)))
    )  # a batched product is not a dense layer's
    np.testing.assert_allclose(batched[0], x @ w, rtol=1e-6)
    layer = dense(2, 1.0)
    params = layer.init(jax.random.key(0), x)
    ref = nn.Dense(2).apply(params, x)
    np.testing.assert_array_equal(layer.apply(params, x), ref)


@pytest.mark.parametrize(("mode", "atol"), [("optimized", 2e-6), ("fast", 3e-6)])
def test_silu_is_flaxs_to_float32_rounding(mode, atol, monkeypatch):
    # Compiled as training programs are in each PUREJAXDRL_COMPILE mode. Below
    # x = -15 or so tanh rounds to -1: 0 where x σ(x) is under 2e-6; fast mode's
    # loop emitters stop at -1 + 1.8e-7, -2.7e-6 at x = -30.
    monkeypatch.setenv("PUREJAXDRL_COMPILE", mode)
    options = compiler_options(jax.default_backend())

    def compiled(f):
        return jax.jit(jax.vmap(f), compiler_options=options)

    x = jnp.linspace(-30.0, 30.0, 20001)
    np.testing.assert_allclose(
        compiled(silu)(x), compiled(nn.silu)(x), rtol=1e-6, atol=atol
    )
    ours, theirs = compiled(jax.grad(silu)), compiled(jax.grad(nn.silu))
    np.testing.assert_allclose(ours(x), theirs(x), rtol=1e-6, atol=1e-5)
