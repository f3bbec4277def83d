"""Recurrent PPO: stored start states, sequence minibatches, devices, sweeps, eval."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

import purejaxdrl as pjd
from purejaxdrl.agents import ppo
from purejaxdrl.agents.base import RunShape
from purejaxdrl.observe.evaluation import make_evaluate
from purejaxdrl.runners.rollout import unroll
from purejaxdrl.sweeps.program import sweep
from tests.helpers import flat, trained

pytestmark = pytest.mark.timeout(300)

# 32 envs x 8 steps in 4 minibatches of 8 whole sequences: on 8 devices each
# holds 4 environments, one of each minibatch.
SMALL = {
    "num_envs": 32,
    "unroll_length": 8,
    "total_steps": 32 * 8 * 3,
    "ppo": {"num_minibatches": 4, "num_epochs": 2},
    "network": {"core": "gru", "core_size": 16, "hidden_sizes": [16]},
    "env": {"hide_observations": [1, 3]},
}


def _config(**overrides):
    return pjd.apply_overrides(pjd.TrainConfig(), {**SMALL, **overrides})


def _trained(num_devices: int, core: str = "gru"):
    config = _config(network={**SMALL["network"], "core": core})
    return trained(config, num_devices, 3)[:2]


@pytest.mark.parametrize(
    "core",
    ["gru"] + [pytest.param(c, marks=pytest.mark.slow) for c in ("lstm", "mingru")],
)
def test_learner_re_unroll_gives_the_actors_log_probs_at_lag_0(core):
    exp, state = _trained(1, core)
    params = state.agent.params

    @jax.jit
    def act(actor, key):
        return unroll(exp.env, state.env_params, exp.agent, params, actor, key, 40)

    actor, traj = act(state.actor, jax.random.key(1))
    assert traj.reset.any() and (traj.reset.sum(0) < 40).all()  # mid-unroll starts
    # The stored start state is the state the previous unroll ended with.
    _, traj2 = act(actor, jax.random.key(2))
    jax.tree.map(np.testing.assert_array_equal, traj2.core_state, actor.core)
    net = exp.network
    batch = ppo.Batch(
        traj.observation, traj.action, traj.log_prob, traj.value,
        advantage=traj.value, target=traj.value,  # unused here
        reset=traj.reset, core_state=traj.core_state,
    )  # fmt: skip
    # As the learner sees them: minibatches of whole sequences, from their starts.
    minibatches = ppo.sequence_split(4)(batch, jax.random.key(3))
    for m in range(4):
        mb = jax.tree.map(lambda x, m=m: x[m], minibatches)
        _, (policy, value) = jax.jit(net.unroll)(
            params, mb.core_state, mb.observation, mb.reset
        )
        log_prob = net.distribution.log_prob(policy, mb.action)
        # Float32 rounding only (XLA fuses the actor's and the learner's passes
        # differently): a wrong state or reset flag is off by far more.
        np.testing.assert_allclose(log_prob, mb.log_prob, atol=1e-6, rtol=0)
        np.testing.assert_allclose(value, mb.value, atol=1e-5, rtol=0)


class _Steps(NamedTuple):
    x: jax.Array  # [T, B]
    core_state: jax.Array  # [B]


def _sequence_minibatches(b, m, key, devices=1, **options):
    """`sequence_split` of 3 steps of `b` labelled environments on `devices`
    devices (each a contiguous slice): per global minibatch, its environments
    (from the start states) and their steps."""
    t = 3
    times, envs = np.meshgrid(np.arange(t), np.arange(b), indexing="ij")
    batch = _Steps(jnp.asarray(100 * times + envs), jnp.arange(b))
    split = ppo.sequence_split(m, axis_name="data", **options)
    # Compiled, as PPO runs it: an eager shard_map dispatches op by op, some
    # 4 s a call on CPU against 0.5 s to compile the program.
    out = jax.jit(
        jax.shard_map(
            split,
            mesh=Mesh(np.array(jax.devices()[:devices]), ("data",)),
            in_specs=(_Steps(P(None, "data"), P("data")), P()),
            out_specs=_Steps(P(None, None, "data"), P(None, "data")),
        )
    )(batch, key)
    assert out.x.shape == (m, t, b // m)
    # Whole sequences: each minibatch's steps are its environments' steps.
    np.testing.assert_array_equal(
        out.x, 100 * np.arange(t)[None, :, None] + np.asarray(out.core_state)[:, None]
    )
    return [tuple(np.asarray(envs_in).tolist()) for envs_in in out.core_state]


def test_sequence_split_deals_each_block_of_m_environments_anew_for_each_key():
    b, m = 16, 4
    partitions = set()
    for seed in range(4):
        minibatches = _sequence_minibatches(b, m, jax.random.key(seed))
        assert sorted(sum(minibatches, ())) == list(range(b))
        for envs_in in minibatches:  # one environment of each block of M
            assert sorted(e // m for e in envs_in) == list(range(b // m))
        partitions.add(frozenset(minibatches))
    # Which environments share a minibatch changes with the key: environment
    # j is no longer always in minibatch j % M.
    assert len(partitions) == 4
    fixed = _sequence_minibatches(b, m, jax.random.key(0), shuffle_groups=False)
    assert {frozenset(e % m for e in envs_in) for envs_in in fixed} == {
        frozenset([g]) for g in range(m)
    }
    # Each device's environments a multiple of M: PPO's rule.
    with pytest.raises(ValueError, match="divisible by 4, got num_envs=6"):
        ppo.validate(ppo.PPOConfig(num_minibatches=4), RunShape(6, recurrent=True))


def test_sequence_split_without_regrouping_still_shuffles_the_minibatch_order():
    # shuffle_groups=False keeps environment j with the environments j' = j
    # (mod M), but the minibatches still come in an order shuffled with the
    # key (the docstring's promise): else every epoch steps on group 0 first.
    b, m = 8, 4
    firsts = set()
    for seed in range(8):
        fixed = _sequence_minibatches(b, m, jax.random.key(seed), shuffle_groups=False)
        assert sorted(envs_in[0] for envs_in in fixed) == list(range(m))
        firsts.add(fixed[0][0])
    assert len(firsts) > 1, firsts


def test_sequence_split_is_the_same_globally_on_any_device_count():
    # The same minibatches, in the same order, on 1, 2 or 4 devices.
    key = jax.random.key(5)
    reference = _sequence_minibatches(16, 4, key)
    for devices in (2, 4):
        assert _sequence_minibatches(16, 4, key, devices) == reference


@pytest.mark.parametrize(
    "num_devices, core",
    [(2, "gru"), pytest.param(8, "gru", marks=pytest.mark.slow), (8, "mingru")],
)
def test_same_parameters_on_any_device_count(num_devices, core):
    exp, one = _trained(1, core)
    _, many = _trained(num_devices, core)
    init = exp.runner.init(jax.random.key(0))
    assert np.abs(flat(one.agent.params) - flat(init.agent.params)).max() > 1e-4
    np.testing.assert_allclose(
        flat(many.agent.params), flat(one.agent.params), atol=1e-5, rtol=0
    )
    # The actors' core states, gathered, are the same too.
    jax.tree.map(
        lambda a, b: np.testing.assert_allclose(a, b, atol=1e-5),
        many.actor.core,
        one.actor.core,
    )


@pytest.mark.slow  # 90 s; tests/sweeps checks feed-forward sweeps
def test_sweep_of_recurrent_runs_equals_each_run_alone():
    config = _config(devices=1, num_logs=1)
    result = sweep(config, grid={"learning_rate": [1e-3, 2.5e-4]}, seeds=[0, 3])
    assert result.programs_compiled == 1
    for i in (0, 3):
        alone = pjd.train(pjd.apply_overrides(result.plan.run_config(i), {}))
        jax.tree.map(
            lambda a, e: np.testing.assert_allclose(a, e, atol=1e-5, rtol=0),
            jax.device_get(result.params(i)),
            jax.device_get(alone.state.agent.params),
        )


def test_evaluation_carries_the_core_state_through_each_episode():
    exp, state = _trained(1)
    net, params = exp.network, state.agent.params
    evaluate = make_evaluate(exp.env, net, episodes=2, max_steps=500)
    result = evaluate(params, state.env_params, jax.random.key(5))
    # The same episodes by hand: the environments, keys and state as evaluate's.
    key_reset, key_steps = jax.random.split(jax.random.key(5))
    env, env_params = exp.env, state.env_params
    env_state, ts = jax.vmap(env.reset, in_axes=(0, None))(
        jax.random.split(key_reset, 2), env_params
    )
    core, obs = net.initial_state(2), ts.observation
    returns, running = np.zeros(2), np.ones(2, bool)
    step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
    for t in range(500):
        core, (policy, _) = net.step(params, core, obs, jnp.zeros(2, bool))
        action = jnp.argmax(policy, axis=-1).astype(jnp.int32)
        keys = jax.random.split(jax.random.fold_in(key_steps, t), 2)
        env_state, ts = step(keys, env_state, action, env_params)
        returns += np.where(running, np.asarray(ts.reward), 0.0)
        running &= ~np.asarray(ts.last())
        obs = ts.observation
        if not running.any():
            break
    np.testing.assert_allclose(result.returns, returns)
