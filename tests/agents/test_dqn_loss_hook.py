"""DQN's `loss_fn` hook: what a variant's loss is given, what it must return.

`make_dqn(..., loss_fn=...)` replaces the objective of DQN's learner (and
Ape-X's): the loss is given the drawn batch, its importance weights, the
network's first output and the config, and its TD errors are the drawn
items' new priorities. A loss that is no scalar is refused in one line.
"""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import dqn, dqn_config, registry
from purejaxdrl.agents.dqn import DQNState, Learner
from purejaxdrl.config import ConfigError
from tests.agents.test_dqn_mutants import EPS, TD, _leaves, _prioritised

SMALL = {"num_envs": 8, "unroll_length": 4, "total_steps": 8 * 4 * 6, "devices": 1}


def test_the_loss_is_given_the_batch_and_its_td_errors_are_the_priorities():
    batch = 2
    config = dqn_config.DQNConfig(
        prioritised=True, prefetch=False, priority_alpha=1.0, priority_eps=EPS,
        updates_per_step=1, batch_size=batch, buffer_size=len(TD), min_replay=1,
        n_step=1,
    )  # fmt: skip
    # Added with unequal priorities |δ| + ε, so the drawn items' importance
    # weights are not all 1 (a loss given ones would show).
    added = np.abs(TD) + EPS
    buffer, w, replay = _prioritised(batch, added)
    seen = {}

    def spy(params, target_params, item, weights, *, apply, config):
        seen.update(item=item, weights=weights, config=config, target=target_params)
        seen["apply"] = apply
        total, td = dqn.loss(
            params, target_params, item, weights, apply=apply, config=config
        )
        return total, jnp.full_like(td, -2.0)  # the priorities: |-2| + ε

    sgd = optax.sgd(0.0)
    state = DQNState(w, w + 1.0, sgd.init(w), jnp.int32(0), jnp.int32(0), replay)
    learner = Learner(config, buffer, sgd, lambda p, x: x @ p, 10, None, spy)
    key = jax.random.key(0)
    with jax.disable_jit():  # the loss sees values to keep, not tracers
        new, metrics = dqn.learn(state, key, jnp.bool_(True), learner)
    drawn = buffer.sample(replay, jax.random.split(key, 1)[0])
    # What the loss was given: the drawn items, their weights [B] (each
    # (N P(i))^-β / max, β = β0 at update 0, by hand), Q = s W, the config.
    assert seen["config"] is config
    np.testing.assert_array_equal(seen["item"].action, drawn.item.action)
    obs = drawn.item.observation
    np.testing.assert_allclose(seen["apply"](w, obs), obs @ w, rtol=1e-6)
    np.testing.assert_array_equal(seen["target"], w + 1.0)
    probability = added[np.asarray(drawn.index)] / added.sum()  # α = 1
    np.testing.assert_allclose(drawn.probability, probability, rtol=1e-5)
    w_i = (len(TD) * probability) ** -config.beta_start
    assert not np.allclose(w_i / w_i.max(), 1.0)
    np.testing.assert_allclose(seen["weights"], w_i / w_i.max(), rtol=1e-5)
    # What it returned: its total is the logged loss, its TD errors the
    # drawn items' priorities (the others keep theirs, |δ| + ε).
    np.testing.assert_allclose(metrics["loss/total"], _weighted_huber(
        np.asarray(w), drawn.item, w_i / w_i.max()), rtol=1e-5)  # fmt: skip
    priority = added.copy()
    priority[np.asarray(drawn.index)] = 2.0 + EPS
    np.testing.assert_allclose(_leaves(new.buffer), priority, rtol=1e-6)  # α = 1


def _weighted_huber(w: np.ndarray, item, weights: np.ndarray) -> float:
    """DQN's loss by hand in NumPy: mean_i weights_i huber(δ_i), Q = s W,
    target W + 1, double Q's bootstrap (a' by the online network)."""
    obs, next_obs = np.asarray(item.observation), np.asarray(item.next_observation)
    rows, action = np.arange(len(obs)), np.asarray(item.action)
    best = (next_obs @ w).argmax(-1)
    bootstrap = (next_obs @ (w + 1.0))[rows, best]
    td = np.asarray(item.reward) + np.asarray(item.discount) * bootstrap
    td = td - (obs @ w)[rows, action]
    huber = np.where(np.abs(td) <= 1.0, 0.5 * td**2, np.abs(td) - 0.5)
    return float(np.mean(weights * huber))


@pytest.fixture
def own_registry(monkeypatch):
    monkeypatch.setattr(registry, "_ALGORITHMS", dict(registry._ALGORITHMS))


def _register(name: str, loss_fn) -> None:
    registry.register(
        dataclasses.replace(
            registry.algorithm("dqn"),
            name=name,
            make_agent=functools.partial(dqn.make_dqn, name=name, loss_fn=loss_fn),
            validate=functools.partial(dqn.validate, name=name),
            preset_section="dqn",
        )
    )


def _config(name: str):
    config = pjd.load_preset("cartpole", algo=name).config
    return pjd.apply_overrides(
        config, {**SMALL, name: {"min_replay": 64, "batch_size": 32}}
    )


@pytest.mark.timeout(300)
def test_a_per_sample_loss_is_refused_in_one_line(own_registry):
    def per_sample(params, target_params, item, weights, *, apply, config):
        td = dqn.td_errors(apply, params, target_params, item)
        return weights * optax.huber_loss(td), td  # no mean: [B]

    _register("dqn_per_sample", per_sample)
    with pytest.raises(ConfigError) as error:
        pjd.train(_config("dqn_per_sample"), console=False)
    message = str(error.value)
    assert "\n" not in message
    assert message == (
        "a loss returned a total of shape (32,), but the loss differentiated "
        "must be a scalar (a gradient is of one number); return its mean, e.g. "
        "jnp.mean(x)."
    )
