"""A device run's evaluation between chunks: what its call dispatches."""

import jax
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.observe.evaluation import device_evaluation, make_evaluate
from purejaxdrl.rng import make_key


@pytest.mark.timeout(300)
def test_the_evaluation_call_dispatches_compiled_programs_only(monkeypatch):
    # Its key was folded eagerly at each call: on CPU that eager op waited for
    # the chunk queued before it, stalling the host (the next chunk dispatched
    # late) and timing the wait as training, not as the evaluation's.
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"devices": 1, "num_envs": 4, "eval": {"episodes": 4, "max_steps": 30}},
    )
    exp = pjd.training.make_experiment(config)
    key = make_key(0)
    abstract = exp.runner.abstract_state(key)
    evaluate = device_evaluation(exp.env, exp.network, config.eval, abstract, key)
    evaluate = evaluate.compile()
    state = exp.runner.init(key)
    folded = []
    eager = jax.random.fold_in
    monkeypatch.setattr(jax.random, "fold_in", lambda *a: folded.append(a) or eager(*a))
    result = jax.device_get(evaluate(state, 12))
    assert folded == []
    # The same episodes as with the eagerly folded key: fold_in(key, updates).
    monkeypatch.undo()
    alone = make_evaluate(exp.env, exp.network, episodes=4, max_steps=30)
    args = (state.agent.params, state.env_params, jax.random.fold_in(key, 12))
    expected = jax.device_get(alone(*args))
    np.testing.assert_array_equal(result.returns, expected.returns)
    np.testing.assert_array_equal(result.lengths, expected.lengths)
