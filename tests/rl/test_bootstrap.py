import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import rl


def value_fn(params, obs):
    return obs @ params


@pytest.mark.parametrize("truncation_rate", [0.0, 0.1, 0.6])
def test_bootstrap_values_by_definition(truncation_rate):
    # 0.6 truncates more steps than there are environments: several passes.
    rng = np.random.default_rng(0)
    t, b, d = 6, 3, 4
    params = rng.normal(size=d).astype(np.float32)
    next_values = rng.normal(size=(t, b)).astype(np.float32)
    final_obs = rng.normal(size=(t, b, d)).astype(np.float32)
    discount = (rng.random((t, b)) > 0.2).astype(np.float32)
    truncated = (rng.random((t, b)) < truncation_rate) & (discount == 1.0)
    assert truncated.sum() > b or truncation_rate < 0.5

    got = jax.jit(rl.bootstrap_values, static_argnums=0)(
        value_fn,
        jnp.asarray(params),
        jnp.asarray(next_values),
        jnp.asarray(discount),
        jnp.asarray(truncated),
        jnp.asarray(final_obs),
    )
    # The value of the final observation where the step was truncated, 0 where
    # it terminated, and the next step's value where the episode went on.
    want = np.where(
        truncated, final_obs @ params, np.where(discount == 0.0, 0.0, next_values)
    )
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
