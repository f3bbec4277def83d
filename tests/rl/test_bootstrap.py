import jax
import jax.numpy as jnp
import numpy as np
import pytest

from purejaxdrl import rl


def value_fn(params, obs):
    return obs @ params


def _case(truncation_rate):
    """Random inputs, and the bootstrap values by definition."""
    rng = np.random.default_rng(0)
    t, b, d = 6, 3, 4
    params = rng.normal(size=d).astype(np.float32)
    next_values = rng.normal(size=(t, b)).astype(np.float32)
    final_obs = rng.normal(size=(t, b, d)).astype(np.float32)
    discount = (rng.random((t, b)) > 0.2).astype(np.float32)
    truncated = (rng.random((t, b)) < truncation_rate) & (discount == 1.0)
    assert truncated.sum() > b or truncation_rate < 0.5
    # The value of the final observation where the step was truncated, 0 where
    # it terminated, and the next step's value where the episode went on.
    want = np.where(
        truncated, final_obs @ params, np.where(discount == 0.0, 0.0, next_values)
    )
    args = (params, next_values, discount, truncated, final_obs)
    return tuple(map(jnp.asarray, args)), want


@pytest.mark.parametrize("truncation_rate", [0.0, 0.1, 0.6])
def test_bootstrap_values_by_definition(truncation_rate):
    # 0.6 truncates more steps than there are environments: several passes.
    args, want = _case(truncation_rate)
    got = jax.jit(rl.bootstrap_values, static_argnums=0)(value_fn, *args)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_every_truncated_step_gets_its_final_value_whatever_their_count(count):
    # The evaluation goes in passes of B (the environments): a count of 1 mod
    # B, which the random cases above never had, once lost its last step to an
    # off-by-one (mut23 B3: it would have bootstrapped from 0, a termination).
    rng = np.random.default_rng(count)
    t, b, d = 4, 3, 2
    params = rng.normal(size=d).astype(np.float32)
    next_values = rng.normal(size=(t, b)).astype(np.float32)
    final_obs = rng.normal(size=(t, b, d)).astype(np.float32)
    truncated = np.zeros(t * b, bool)
    truncated[rng.choice(t * b, count, replace=False)] = True
    truncated = truncated.reshape(t, b)
    want = np.where(truncated, final_obs @ params, next_values)  # by definition
    args = (params, next_values, np.ones((t, b), np.float32), truncated, final_obs)
    got = jax.jit(rl.bootstrap_values, static_argnums=0)(
        value_fn, *map(jnp.asarray, args)
    )
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_accelerators_evaluate_every_final_observation_without_a_loop(monkeypatch):
    # On a GPU a loop whose trip count depends on data copies its condition to
    # the host every iteration and waits for the device: the CPU's program
    # gathers the truncated steps in such a loop, an accelerator's has none.
    args, want = _case(0.6)
    traced = jax.jit(rl.bootstrap_values, static_argnums=0).trace(value_fn, *args)

    def program(platform):
        return traced.lower(lowering_platforms=(platform,)).as_text()

    assert "stablehlo.while" in program("cpu")
    assert "stablehlo.while" not in program("cuda")
    # The accelerator's branch, run here, gives the same values. A value
    # function of its own, so that the program is traced anew.
    monkeypatch.setattr(
        jax.lax, "platform_dependent", lambda *a, cpu, default: default(*a)
    )
    got = jax.jit(rl.bootstrap_values, static_argnums=0)(lambda p, o: o @ p, *args)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("branch", ["cpu", "accelerator"])
def test_a_step_both_truncated_and_terminated_bootstraps_from_nothing(
    branch, monkeypatch
):
    # The environments' contract never marks both, but a user's wrapper may;
    # a termination wins, even where its final observation is not finite.
    args, want = _case(0.1)
    params, next_values, discount, truncated, final_obs = args
    ended = discount == 0.0
    final_obs = jnp.where(ended[..., None], jnp.inf, final_obs)
    if branch == "accelerator":
        monkeypatch.setattr(
            jax.lax, "platform_dependent", lambda *a, cpu, default: default(*a)
        )
    got = jax.jit(rl.bootstrap_values, static_argnums=0)(
        lambda p, o: o @ p, params, next_values, discount, truncated | ended, final_obs
    )
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
