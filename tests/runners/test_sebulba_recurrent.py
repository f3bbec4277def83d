"""A recurrent policy on host environments: what the learner re-unrolls from
the actors' batches is what the actors computed, and it learns."""

import queue
import threading

import jax
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents.actor_critic import learner_bootstrap, learner_outputs
from purejaxdrl.runners.actor import Actor, ParamsBox, initial_carry
from purejaxdrl.training.experiment import make_host_experiment

pytest.importorskip("envpool")

pytestmark = pytest.mark.timeout(300)


def _config(algo, core, **overrides):
    config = pjd.load_preset("cartpole_envpool", algo).config
    return pjd.apply_overrides(
        config,
        {
            "devices": 1,
            "network": {"core": core, "core_size": 16, "hidden_sizes": [16]},
            **overrides,
        },
    )


def _batches(exp, params, count):
    # One actor on the experiment's first pool, acting with `params` only
    # (policy lag 0), until it has made `count` batches.
    stop, out = threading.Event(), queue.Queue()
    box = ParamsBox(stop)
    box.publish(0, [params])
    env = exp.runner.envs[0]
    actor = Actor(
        env,
        exp.runner.policy,
        initial_carry(exp.agent, env.num_envs),
        box,
        out,
        exp.config.unroll_length,
        jax.random.key(1),
        device=0,
        first_env=0,
        first_batch=0,
        deterministic=False,
        stop=stop,
    )
    thread = threading.Thread(target=actor.run, daemon=True)
    thread.start()
    batches = []
    while len(batches) < count and actor.error is None:
        try:
            batches.append(out.get(timeout=0.1))
        except queue.Empty:
            continue
    stop.set()
    box.wake()
    thread.join(timeout=60)
    assert actor.error is None, actor.error
    return [b.transitions for b in batches]


@pytest.mark.parametrize("core", ["gru", "lstm"])
def test_the_learner_re_unrolls_what_asynchronous_actors_computed(core):
    # An asynchronous pool (each recv returns 4 of 8 environments, whichever
    # finished first) and a 30-step time limit: columns advance at their own
    # pace, batches start mid-episode, episodes end by termination and by
    # truncation, and reset steps come between them.
    config = _config(
        "impala",
        core,
        num_envs=8,
        unroll_length=16,
        env={"options": {"batch_size": 4, "max_episode_steps": 30}},
    )
    exp = make_host_experiment(config)
    params = exp.runner.init(jax.random.key(0)).agent.params
    trajs = _batches(exp, params, 4)
    net = exp.network
    outputs = jax.jit(learner_outputs, static_argnums=0)
    bootstrap = jax.jit(learner_bootstrap, static_argnums=0)
    for traj in trajs:
        policy, value = outputs(net, params, traj)
        log_prob = net.distribution.log_prob(policy, traj.action)
        np.testing.assert_allclose(log_prob, traj.log_prob, atol=1e-6, rtol=0)
        np.testing.assert_allclose(value, traj.value, atol=1e-5, rtol=0)
        # Final observations stepped from the state after each step: the
        # actors' bootstrap values, truncations included.
        boot = bootstrap(net, params, traj, value)
        np.testing.assert_allclose(boot, traj.bootstrap_value, atol=1e-5, rtol=0)
    joined = jax.tree.map(lambda *x: np.concatenate(x), *trajs[1:])
    assert (joined.discount == 0).any() and joined.truncated.any()
    assert joined.reset.any() and not joined.reset.all()
    # Later batches start mid-episode: their start states matter (the same
    # check from zero states fails).
    later = trajs[-1]
    assert not later.reset[0].all()
    zeroed = later._replace(core_state=jax.tree.map(np.zeros_like, later.core_state))
    policy, _ = outputs(net, params, zeroed)
    log_prob = net.distribution.log_prob(policy, later.action)
    # (An untrained policy is near uniform: the gap is small, but far above
    # the 1e-6 the equality above allows.)
    assert np.abs(log_prob - later.log_prob).max() > 1e-5
    exp.runner.close()


def test_a_recurrent_learner_on_two_devices_updates_as_on_one():
    # Deterministic mode: the same batches reach the learner on either
    # mesh. Sharded over two devices, each half of the batch must be unrolled
    # from its own start states (a wrong split changes every gradient).
    overrides = {
        "num_envs": 8,
        "unroll_length": 16,
        "total_steps": 8 * 16 * 6,
        "num_logs": 2,
        "host": {"deterministic": True},
    }
    one = pjd.train(_config("impala", "gru", devices=2, **overrides))
    two = pjd.train(_config("impala", "gru", devices=3, **overrides))
    other = pjd.train(_config("impala", "gru", devices=2, seed=1, **overrides))
    assert (one.num_devices, two.num_devices) == (1, 2)  # the learner's
    assert one.updates == two.updates == 6
    leaves = [_params(r) for r in (one, two, other)]
    for a, b, _ in zip(*leaves, strict=True):
        # Two devices sum the gradient in another order: float32 rounding.
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    # ... far below what another seed's batches make of the same updates.
    assert max(np.abs(a - c).max() for a, _, c in zip(*leaves, strict=True)) > 1e-2


def _params(result):
    return [
        np.asarray(x)
        for x in jax.tree.leaves(jax.device_get(result.state.agent.params))
    ]


@pytest.mark.slow
def test_recurrent_impala_learns_cartpole_with_a_learner_on_two_devices():
    # 3 devices: the actors on one, the learner sharded over two (each with
    # its half of the batch's start states).
    config = _config(
        "impala",
        "gru",
        devices=3,
        total_steps=600_000,
        num_logs=5,
        network={"core": "gru", "core_size": 64, "hidden_sizes": [64]},
        eval={"episodes": 8},
        host={"deterministic": True},
    )
    result = pjd.train(config)
    assert result.num_devices == 2
    assert result.mean_return >= 475, result.history[-1]
    # Evaluation plays the recurrent policy (tests/observe/test_evaluation_host.py
    # checks that it carries the core state through episodes).
    assert result.eval_return >= 475, result.eval_return
