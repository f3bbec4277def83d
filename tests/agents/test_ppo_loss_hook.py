"""PPO's `loss_fn` hook: what a variant's loss is given, and what it may return.

A variant's loss is called with the mesh axis (`axis_name`) and the update's
index (`step`), so that a statistic of its minibatch can be made global and a
coefficient can follow a schedule: the guide's promises, checked on a run.
"""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import ppo, registry
from purejaxdrl.config import ConfigError
from tests.helpers import flat

SMALL = {
    "num_envs": 8,
    "unroll_length": 16,
    "total_steps": 8 * 16 * 3,
    "devices": 1,
    "num_logs": 3,
}


def _register(name: str, loss_fn) -> None:
    registry.register(
        dataclasses.replace(
            registry.algorithm("ppo"),
            name=name,
            make_agent=functools.partial(ppo.make_ppo, loss_fn=loss_fn),
            validate=functools.partial(ppo.validate, name=name),
            preset_section="ppo",
        )
    )


def _config(name: str, **changes):
    config = pjd.load_preset("cartpole", algo=name).config
    # Advantages scaled only by the loss below, not standardised before it.
    own = {name: {"normalize_advantages": False}}
    return pjd.apply_overrides(config, {**SMALL, **changes, **own})


def _global_std(x: jax.Array, axis_name: str | None) -> jax.Array:
    """The standard deviation of `x` over every device's share of the minibatch."""

    def mean(v: jax.Array) -> jax.Array:
        v = jnp.mean(v)
        return v if axis_name is None else jax.lax.pmean(v, axis_name)

    centre = mean(x)
    return jnp.sqrt(mean(jnp.square(x - centre)))


def _scaled_loss(params, batch, key, *, axis_name, **context):
    """PPO's loss on advantages divided by their (global) standard deviation."""
    advantage = batch.advantage / (_global_std(batch.advantage, axis_name) + 1e-8)
    return ppo.loss(
        params, batch._replace(advantage=advantage), key, axis_name=axis_name, **context
    )


@pytest.fixture
def own_registry():
    with registry.registered():  # what a test registers is gone after it
        yield


@pytest.mark.timeout(300)
def test_a_loss_statistic_over_axis_name_trains_the_same_on_two_devices(own_registry):
    _register("ppo_scaled", _scaled_loss)
    one = pjd.train(_config("ppo_scaled"), console=False)
    two = pjd.train(_config("ppo_scaled", devices=2), console=False)
    np.testing.assert_allclose(
        flat(two.state.agent.params), flat(one.state.agent.params), atol=2e-6
    )
    # What the axis is for: the same statistic of each device's share alone
    # trains other parameters (PPO's own loss differs by ~3e-8 here).
    local = functools.partial(_scaled_loss, axis_name=None)
    _register("ppo_local", lambda *args, axis_name, **kw: local(*args, **kw))
    alone = pjd.train(_config("ppo_local", devices=2), console=False)
    gap = np.max(np.abs(flat(alone.state.agent.params) - flat(one.state.agent.params)))
    assert gap > 1e-5, gap


def test_a_loss_is_given_the_updates_index_for_a_schedule(own_registry):
    def counting_loss(params, batch, key, *, step, **context):
        total, metrics = ppo.loss(params, batch, key, step=step, **context)
        return total, {**metrics, "step": jnp.asarray(step, jnp.float32)}

    _register("ppo_counting", counting_loss)
    result = pjd.train(_config("ppo_counting"), console=False)
    assert [row["step"] for row in result.history] == [0.0, 1.0, 2.0]


def test_a_losss_metric_that_is_no_scalar_is_named(own_registry):
    def histogram_loss(params, batch, key, **context):
        total, metrics = ppo.loss(params, batch, key, **context)
        return total, {**metrics, "adv_hist": batch.advantage.reshape(-1)[:3]}

    _register("ppo_hist", histogram_loss)
    with pytest.raises(ConfigError, match=r"metric 'adv_hist' of shape \(3,\)"):
        pjd.train(_config("ppo_hist"), console=False)
