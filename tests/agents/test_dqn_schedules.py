"""DQN's schedules: the target network's cadence and rules, and β's annealing.

Each is checked against values derived here by hand: the target network moves
τ of the way to the online one every `target_every` gradient steps (Mnih et
al., 2015, copies: τ = 1; Polyak averaging: τ < 1), and prioritised replay's
importance weights use β annealed linearly from `beta_start` to 1 over the
run (Schaul et al., 2016), and an annealed learning rate falls per learning
update, every gradient step of an update at the same rate.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from purejaxdrl.agents import RunShape, dqn, dqn_config, r2d2
from purejaxdrl.agents.dqn import DQNState, Learner, Replayed, make_dqn
from purejaxdrl.config import ConfigError
from purejaxdrl.replay import make_prioritised_buffer
from purejaxdrl.setup_warnings import forget_warnings
from purejaxdrl.types import Transition
from tests.helpers import linear_q_network, third_update_steps_at_four_fifths

DIMS, ACTIONS = 3, 2


@pytest.fixture(autouse=True)
def _fresh_warnings():
    forget_warnings()  # each test sees its warnings, whatever ran before


def _unroll(key, t, b):
    keys = jax.random.split(key, 4)
    obs = jax.random.normal(keys[0], (t, b, DIMS))
    final = jax.random.normal(keys[1], (t, b, DIMS))
    action = jax.random.randint(keys[2], (t, b), 0, ACTIONS)
    reward = jax.random.normal(keys[3], (t, b))
    ones, zeros = jnp.ones((t, b)), jnp.zeros((t, b))
    return Transition(obs, action, reward, ones, jnp.zeros((t, b), bool),
                      zeros, zeros, zeros, final, {})  # fmt: skip


@pytest.mark.parametrize(("every", "tau"), [(3, 1.0), (2, 0.25), (1, 0.1)])
def test_target_moves_tau_of_the_way_every_target_every_gradient_steps(every, tau):
    # One gradient step per update once 32 transitions are stored (the second
    # update on): after gradient step g the target is
    # τ params_g + (1 - τ) target_{g-1} where g % target_every == 0, and
    # target_{g-1} otherwise; nothing moves before learning starts. (A copy,
    # τ = 1, is params + 0 target in float32, which fused arithmetic may
    # round by an ulp: close, not bit-equal.)
    t, b = 4, 4
    config = dqn_config.DQNConfig(
        n_step=1, buffer_size=64, batch_size=8, min_replay=32, updates_per_step=1,
        target_every=every, target_tau=tau, learning_rate=0.05,
    )  # fmt: skip
    run = RunShape(num_envs=b, unroll_length=t, num_updates=20)
    agent = make_dqn(
        config, linear_q_network(DIMS, ACTIONS), np.zeros(DIMS, np.float32), run
    )
    update = jax.jit(agent.update)
    state = agent.init(jax.random.key(0))
    initial = jax.tree.map(np.asarray, state.params)
    state, _ = update(state, _unroll(jax.random.key(1), t, b), jax.random.key(2))
    assert int(state.grad_steps) == 0
    for name in ("w", "b"):
        np.testing.assert_array_equal(state.params[name], initial[name])
        np.testing.assert_array_equal(state.target_params[name], initial[name])
    moved = 0
    for g in range(1, 10):
        before = jax.tree.map(np.asarray, state)
        key = jax.random.key(10 + g)
        state, _ = update(state, _unroll(key, t, b), jax.random.fold_in(key, 1))
        assert int(state.grad_steps) == g
        for name in ("w", "b"):
            params, old = np.asarray(state.params[name]), before.target_params[name]
            assert not np.array_equal(params, before.params[name])  # it learns
            if g % every == 0:
                want = tau * params + (1 - tau) * old
                moved += 1
            else:
                want = old
            np.testing.assert_allclose(
                state.target_params[name], want, rtol=1e-6, atol=1e-7
            )
    assert moved == 2 * (9 // every)


@pytest.mark.parametrize(
    ("step", "beta"), [(0, 0.4), (4, 0.4 + 0.6 * 4 / 10), (10, 1.0), (15, 1.0)]
)
def test_importance_weights_use_beta_annealed_from_beta_start_to_one(step, beta):
    # The loss at update u is mean_i w_i huber(δ_i) over the drawn items, with
    # w_i = (N P(i))^-β / max_j w_j, P(i) = p_i^α / Σ_k p_k^α and
    # β = β0 + (1 - β0) min(u / num_updates, 1). Linear Q, in NumPy.
    n, batch, alpha = 8, 4, 0.6
    config = dqn_config.DQNConfig(
        prioritised=True, beta_start=0.4, priority_alpha=alpha, updates_per_step=1,
        batch_size=batch, buffer_size=n, min_replay=1, n_step=1,
    )  # fmt: skip
    rng = np.random.default_rng(0)
    online, target = (rng.normal(size=(DIMS, ACTIONS)) for _ in range(2))
    obs, next_obs = (rng.normal(size=(n, DIMS)) for _ in range(2))
    action = rng.integers(0, ACTIONS, n)
    reward = 3.0 * rng.normal(size=n)
    discount = np.full(n, 0.9)
    priority = np.array([0.1, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0])

    f32 = lambda x: jnp.asarray(x, jnp.float32)  # noqa: E731
    item = Replayed(f32(obs), jnp.asarray(action, jnp.int32), f32(reward),
                    f32(discount), f32(next_obs))  # fmt: skip
    buffer = make_prioritised_buffer(n, batch, alpha=alpha)
    replay = buffer.add(buffer.init(jax.tree.map(lambda x: x[0], item)), item,
                        f32(priority))  # fmt: skip
    state = DQNState(f32(online), f32(target), (), jnp.int32(step), jnp.int32(0),
                     replay)  # fmt: skip
    sgd = optax.sgd(0.0)
    state = state._replace(opt_state=sgd.init(state.params))
    learner = Learner(config, buffer, sgd, lambda p, x: x @ p, 10, None)
    key = jax.random.key(3)
    _, metrics = dqn.learn(state, key, jnp.bool_(True), learner)

    # The items drawn with the same key (which items is the buffer's business;
    # their weights are this test's).
    drawn = np.asarray(buffer.sample(replay, jax.random.split(key, 1)[0]).index)
    prob = priority**alpha / np.sum(priority**alpha)
    w = (n * prob[drawn]) ** -beta
    w = w / w.max()
    best = np.argmax(next_obs @ online, -1)
    boot = (next_obs @ target)[np.arange(n), best]
    td = (reward + discount * boot - (obs @ online)[np.arange(n), action])[drawn]
    huber = np.where(np.abs(td) <= 1, 0.5 * td**2, np.abs(td) - 0.5)
    assert len(set(drawn.tolist())) > 1 and np.ptp(w) > 0.1  # weights matter
    np.testing.assert_allclose(metrics["loss/total"], np.mean(w * huber), rtol=1e-5)


def test_target_tau_zero_is_refused_by_dqn_apex_and_r2d2():
    # τ = 0 keeps the initial, random target network for the whole run.
    for name in ("dqn", "apex"):
        with pytest.raises(ConfigError) as info:
            dqn_config.validate(dqn_config.DQNConfig(target_tau=0.0), name=name)
        assert str(info.value) == (
            f"{name}.target_tau=0.0 must be in (0, 1]: 0 never updates the target "
            f"network; e.g. --{name}.target-tau 0.005 ({name}.target_tau=0.005 in "
            f"Python) with --{name}.target-every 1 ({name}.target_every=1 in "
            "Python), or 1 for copies."
        )
    with pytest.raises(ConfigError, match=r"^r2d2.target_tau=0.0 must be in \(0, 1\]"):
        r2d2.validate(r2d2.R2D2Config(target_tau=0.0))
    for tau in (-0.1, 1.5, float("nan")):
        with pytest.raises(ConfigError, match=r"dqn.target_tau=.* must be in \(0, 1\]"):
            dqn_config.validate(dqn_config.DQNConfig(target_tau=tau))
    dqn_config.validate(dqn_config.DQNConfig(target_tau=1e-4))


def test_target_every_beyond_the_runs_gradient_steps_warns_once():
    # 16 environments x 4 steps = 64 transitions an update; min_replay 256 is
    # stored by update 3 (counted from 0), so 32 updates learn in 29, at 4
    # gradient steps each: 116 steps. The target first moves after step
    # target_every: at 116 or more, no TD target ever uses a moved target.
    shape = RunShape(num_envs=16, unroll_length=4, num_updates=32)
    base = {"min_replay": 256, "buffer_size": 50_000, "batch_size": 32}
    config = dqn_config.DQNConfig(updates_per_step=4, target_every=116, **base)
    with pytest.warns(UserWarning) as record:
        dqn_config.validate(config, shape)
        dqn_config.validate(config, shape)  # each check of a run: still once
    (message,) = [str(w.message) for w in record]
    # The budget that makes 117 steps: 3 + 116 // 4 + 1 = 33 updates of 64.
    assert message == (
        "dqn.target_every=116 is not less than the run's 116 gradient steps: no "
        "TD target would use an updated target network, all would bootstrap from "
        "the initial one; lower it, e.g. --dqn.target-every 115 "
        "(dqn.target_every=115 in Python), or raise the budget to at least "
        "--total-steps 2112 (total_steps=2112 in Python)."
    )
    # 33 updates take 30 x 4 = 120 > 116 steps, so that budget is quiet.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dqn_config.validate(config, shape._replace(num_updates=33), name="apex")
        dqn_config.validate(
            dqn_config.DQNConfig(updates_per_step=4, target_every=115, **base), shape
        )
        dqn_config.validate(config)  # without a run shape nothing is known
        # The agent factory's check: the run's own has warned already.
        dqn_config.validate(config, shape, warn=False)


def test_r2d2_target_every_counts_its_sequences():
    # R2D2 stores one sequence per environment and update: 8 a update, 16
    # by update 1, so 10 updates learn in 9, at 1 gradient step each.
    shape = RunShape(num_envs=8, unroll_length=10, recurrent=True, num_updates=10)
    sizes = {"min_replay": 16, "buffer_size": 64, "batch_size": 8}
    config = r2d2.R2D2Config(target_every=9, updates_per_step=1, **sizes)
    with pytest.warns(
        UserWarning, match=r"^r2d2.target_every=9 is not less than .* 9 "
    ):
        r2d2.validate(config, shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r2d2.validate(r2d2.R2D2Config(target_every=8, **sizes), shape)


def test_an_annealed_rate_falls_per_learning_update_and_holds_over_its_steps():
    # 6 updates of 2 envs x 4 steps; learning starts at the second (min_replay
    # 16), so the rate decays over the 5 learning updates, and each takes its
    # 2 gradient steps at one rate: the third update (the second that learns)
    # steps at 0.8 of it, as a constant-rate learner at 0.8 does from the same
    # state. Decaying over all 6 updates would step at 5/6, counting gradient
    # steps at 0.6 then 0.4 (tests/agents/test_r2d2.py checks R2D2's alike).
    run = RunShape(num_envs=2, unroll_length=4, num_updates=6)
    on = dqn_config.DQNConfig(anneal_lr=True, learning_rate=1e-2, n_step=1,
                              updates_per_step=2, min_replay=16, buffer_size=64,
                              batch_size=8, target_every=8)  # fmt: skip

    def update(config):
        agent = make_dqn(config, linear_q_network(DIMS, ACTIONS), jnp.zeros(DIMS), run)
        return agent, jax.jit(agent.update)

    metrics = third_update_steps_at_four_fifths(
        update, on, lambda t: _unroll(jax.random.key(10 + t), 4, 2)
    )
    np.testing.assert_array_equal(metrics["learner/grad_steps"], 4)
