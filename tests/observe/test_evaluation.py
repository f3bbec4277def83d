"""Evaluation episodes with the deterministic policy, beside training."""

import jax
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.observe.evaluation import make_evaluate
from purejaxdrl.observe.numbers import return_text


@pytest.mark.trains
def test_trained_cartpole_policy_evaluates_to_475_and_training_is_unchanged():
    preset = pjd.load_preset("cartpole")
    config = pjd.apply_overrides(
        preset.config, {"devices": 1, "eval": {"episodes": 16, "every": 5}}
    )
    result = pjd.train(config)
    assert result.eval_return >= 475, result.history[-1]
    evaluated = [i for i, r in enumerate(result.history) if "eval/mean_return" in r]
    last = len(result.history) - 1
    assert evaluated == sorted({*range(4, last + 1, 5), last})
    assert result.history[-1]["eval/mean_return"] == result.eval_return
    assert all(result.history[i]["eval/cut"] == 0 for i in evaluated)
    # Evaluation has its own environments and keys: training is bit for bit the
    # run without it.
    plain = pjd.train(pjd.apply_overrides(config, {"eval": {"episodes": 0}}))
    # `plain` is test_learning's seed-0 PPO run (the preset's seed; its config
    # differs only in eval.every, inert with no episodes): its learning check.
    assert plain.mean_return >= 475, plain.history[-3:]
    same = np.testing.assert_array_equal
    jax.tree.map(same, result.state.agent.params, plain.state.agent.params)
    assert all("eval/mean_return" not in r for r in plain.history)
    # eval.stop_at ends the run after the chunk queued behind the evaluation
    # that reached it, the same run up to there.
    stop_at = result.history[4]["eval/mean_return"]
    stopped = pjd.train(pjd.apply_overrides(config, {"eval": {"stop_at": stop_at}}))
    at = result.history[4]["updates"]
    assert (
        stopped.stopped_by
        == f"eval.stop_at ({return_text(stop_at)} >= {stop_at:g} at update {at})"
    )
    assert len(stopped.history) == 6 and stopped.updates == result.history[5]["updates"]
    assert stopped.history[4]["eval/mean_return"] == stop_at
    for key in ("updates", "loss/total", "episode/mean_return"):
        assert [r[key] for r in stopped.history] == [r[key] for r in result.history[:6]]


def test_the_record_counts_the_evaluation_episodes_cut_at_max_steps():
    # CartPole's pole falls after about 9 steps at the earliest: a cap of 5
    # cuts all 4 episodes, one of 600 none (the environment ends them at 500).
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"devices": 1, "num_envs": 4, "unroll_length": 8, "total_steps": 64,
         "num_logs": 1, "eval": {"episodes": 4, "max_steps": 5}},
    )  # fmt: skip
    (record,) = pjd.train(config).history
    assert record["eval/cut"] == 4 and record["eval/mean_length"] == 5
    assert record["eval/episodes"] == 4
    whole = pjd.apply_overrides(config, {"eval": {"max_steps": 600}})
    (record,) = pjd.train(whole).history
    assert record["eval/cut"] == 0 and record["eval/mean_length"] > 5


def _cartpole():
    config = pjd.apply_overrides(pjd.load_preset("cartpole").config, {"devices": 1})
    exp = pjd.training.make_experiment(config)
    state = exp.runner.init(jax.random.key(0))
    return exp, state


def test_only_the_first_episode_counts_and_long_ones_are_cut():
    exp, state = _cartpole()
    args = (state.agent.params, state.env_params, jax.random.key(3))
    evaluate = make_evaluate(exp.env, exp.network, episodes=8)
    returns, lengths, metrics, ended = jax.device_get(evaluate(*args))
    assert ended.all()  # no cap reached
    assert metrics == {}  # CartPole reports none
    # CartPole pays 1 per step: a first episode's return is its length, in
    # [1, 500] (500: truncated at the time limit, and never counted on).
    np.testing.assert_array_equal(returns, lengths)
    assert returns.shape == (8,) and np.all((lengths >= 1) & (lengths <= 500))
    np.testing.assert_array_equal(evaluate(*args).returns, returns)  # same key
    cut = make_evaluate(exp.env, exp.network, episodes=8, max_steps=5)
    short = jax.device_get(cut(*args))
    np.testing.assert_array_equal(short.lengths, np.minimum(lengths, 5))
    np.testing.assert_array_equal(short.returns, np.minimum(returns, 5))


def test_an_episode_ending_on_the_capped_step_ended_and_only_longer_ones_were_cut():
    exp, state = _cartpole()
    args = (state.agent.params, state.env_params, jax.random.key(3))
    whole = jax.device_get(make_evaluate(exp.env, exp.network, episodes=8)(*args))
    # The cap is one episode's own length: that episode ends on the capped
    # step itself (so it was not cut); only the episodes longer than it were.
    cap = int(np.sort(whole.lengths)[len(whole.lengths) // 2])
    capped = make_evaluate(exp.env, exp.network, episodes=8, max_steps=cap)
    result = jax.device_get(capped(*args))
    assert (result.lengths == cap).any() and (whole.lengths > cap).any(), whole
    np.testing.assert_array_equal(result.ended, whole.lengths <= cap)
