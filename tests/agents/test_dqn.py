"""DQN / Ape-X: the loss, the fixed point, Ape-X's ε_i, the replay shards."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import RunShape, dqn
from purejaxdrl.agents.dqn import Replayed, make_dqn
from purejaxdrl.agents.q_learning import (
    exploration,
    exported_epsilon,
    exported_epsilon_greedy,
    final_epsilon,
)
from purejaxdrl.agents.replay_sizes import learning_updates
from purejaxdrl.replay import sum_tree
from purejaxdrl.rl.exploration import actor_epsilons
from purejaxdrl.types import Transition


def _config(algo, **dqn):
    config = pjd.load_preset("cartpole", algo).config
    return pjd.apply_overrides(config, {algo: dqn})


def test_apex_epsilons_follow_the_paper():
    # N = 4 actors, ε = 0.4, α = 7: ε_i = 0.4^(1 + 7 i / 3).
    got = actor_epsilons(0.4, 7.0, jnp.arange(4), 4)
    want = [0.4, 0.4 ** (10 / 3), 0.4 ** (17 / 3), 0.4**8]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_apex_logs_and_exports_the_mean_of_its_actors_epsilons():
    # Its actors explore with the fixed ε_i above, not the annealed schedule:
    # the logged ε (and an exported policy's `act`) is their mean.
    apex = _config("apex", epsilon=0.4, epsilon_alpha=7.0).apex
    want = np.mean([0.4, 0.4 ** (10 / 3), 0.4 ** (17 / 3), 0.4**8])
    logged, _ = exploration(apex, 100, 4)
    for step in (0, 50, 99):
        np.testing.assert_allclose(logged(jnp.int32(step)), want, rtol=1e-6)
    # What export keeps in policy.json (`epsilon`), at any update.
    exported = final_epsilon(apex, 50, 100, 4)
    np.testing.assert_allclose(exported, want, rtol=1e-6)
    shape = RunShape(num_envs=4, num_updates=100)
    assert exported_epsilon(apex, shape, 50) == {"epsilon": exported}
    sample = exported_epsilon_greedy(apex, {"epsilon": exported}, None)
    q = jnp.array([1.0, 0.0])  # greedy: action 0; ε picks uniformly
    acts = jax.vmap(sample, (None, 0))(q, jax.random.split(jax.random.key(0), 40_000))
    assert abs(np.mean(np.asarray(acts) == 1) - want / 2) < 0.005  # 6 std devs
    dqn = _config("dqn", epsilon_start=1.0, epsilon_end=0.1).dqn
    annealed, _ = exploration(dqn, 100, 4)
    assert float(annealed(jnp.int32(0))) == 1.0


def test_q_values_converge_to_the_discounted_sum_of_rewards():
    # Self-loops that never end, reward 1: Q -> 1 / (1 - γ) = 10 at γ = 0.9.
    config = _config("dqn", gamma=0.9, n_step=1, min_replay=64, batch_size=64,
                     target_tau=1.0,
                     buffer_size=1024, target_every=20)  # fmt: skip
    exp = pjd.training.make_experiment(config)
    run = RunShape(num_updates=1000)
    agent = make_dqn(config.dqn, exp.network, np.zeros(4, np.float32), run)
    t, b = 4, 16
    obs = jax.random.normal(jax.random.key(1), (t, b, 4))
    ones = jnp.ones((t, b))
    traj = Transition(obs, jnp.zeros((t, b), jnp.int32), ones, ones,
                      jnp.zeros((t, b), bool), 0 * ones, 0 * ones, 0 * ones,
                      obs, {})  # fmt: skip
    update = jax.jit(agent.update)
    state = agent.init(jax.random.key(0))
    for i in range(600):
        state, metrics = update(state, traj, jax.random.key(i))
    q = exp.network.apply(state.params, obs.reshape(-1, 4))[0][:, 0]
    np.testing.assert_allclose(q, 10.0, rtol=0.1)
    assert int(state.grad_steps) == 600 * config.dqn.updates_per_step


def test_apex_initial_priorities_are_the_online_networks_td_errors():
    # Ape-X's actors bootstrap from the online network's own greedy value:
    # p = |G + γ_boot max_a Q(x', a) - Q(x, a_t)| + eps, stored as p^α.
    config = _config("apex", n_step=1, gamma=0.9, min_replay=128, batch_size=4,
                     buffer_size=256, updates_per_step=1)  # fmt: skip
    exp = pjd.training.make_experiment(config)
    t, b = 4, 16
    run = RunShape(num_envs=b, unroll_length=t, num_updates=10)
    agent = make_dqn(config.apex, exp.network, np.zeros(4, np.float32), run)
    keys = jax.random.split(jax.random.key(1), 4)
    obs = jax.random.normal(keys[0], (t, b, 4))
    final = jax.random.normal(keys[1], (t, b, 4))
    action = jax.random.randint(keys[2], (t, b), 0, 2)
    reward = jax.random.normal(keys[3], (t, b))
    discount = jnp.ones((t, b)).at[1].set(0.0)  # step 1 terminates
    zeros = jnp.zeros((t, b))
    traj = Transition(obs, action, reward, discount, jnp.zeros((t, b), bool),
                      zeros, zeros, zeros, final, {})  # fmt: skip
    state = agent.init(jax.random.key(0))
    # Before learning starts the drawn items' priorities are rewritten with
    # the double-Q TD errors, which equal these while the target network is
    # still the online one.
    state, _ = agent.update(state, traj, jax.random.key(2))
    q = np.asarray(exp.network.apply(state.params, obs.reshape(-1, 4))[0])
    q_next = np.asarray(exp.network.apply(state.params, final.reshape(-1, 4))[0])
    taken = q[np.arange(t * b), np.asarray(action).reshape(-1)]
    td = (
        np.asarray(reward).reshape(-1)
        + 0.9 * np.asarray(discount).reshape(-1) * q_next.max(-1)
        - taken
    )
    want = (np.abs(td) + config.apex.priority_eps) ** config.apex.priority_alpha
    got = sum_tree.leaves(state.buffer.nodes, jnp.arange(t * b))
    np.testing.assert_allclose(got, want, rtol=2e-5)


def test_loss_is_the_weighted_huber_of_double_q_td_errors():
    # van Hasselt et al. (2016): the online network picks a' at s', the target
    # network values it; Schaul et al. (2016) / Ape-X weight each item's loss
    # by its importance weight w_i. Linear Q = s W, in NumPy.
    rng = np.random.default_rng(0)
    batch, dims, actions = 16, 4, 3
    online, target = (rng.normal(size=(dims, actions)) for _ in range(2))
    obs, next_obs = (rng.normal(size=(batch, dims)) for _ in range(2))
    action = rng.integers(0, actions, batch)
    reward = 2.0 * rng.normal(size=batch)
    discount = 0.81 * (rng.random(batch) > 0.25)  # γ^2, 0 after a termination
    weights = rng.uniform(0.1, 1.0, batch)

    best = np.argmax(next_obs @ online, -1)
    assert (best != np.argmax(next_obs @ target, -1)).sum() >= batch // 3
    boot = (next_obs @ target)[np.arange(batch), best]
    td = reward + discount * boot - (obs @ online)[np.arange(batch), action]
    assert (np.abs(td) < 1).any() and (np.abs(td) > 1).any()  # both Huber sides
    huber = np.where(np.abs(td) <= 1, 0.5 * td**2, np.abs(td) - 0.5)
    # Only Q(s, a) is differentiated: dL/dW[:, a_i] = -w_i clip(δ_i) s_i / B.
    grad = np.zeros_like(online)
    np.add.at(grad.T, action, -(weights * np.clip(td, -1, 1))[:, None] * obs / batch)

    def q_values(params, x):
        return x @ params

    f32 = functools.partial(jnp.asarray, dtype=jnp.float32)
    item = Replayed(f32(obs), jnp.asarray(action, jnp.int32), f32(reward),
                    f32(discount), f32(next_obs))  # fmt: skip
    got_td = dqn.td_errors(q_values, f32(online), f32(target), item)
    np.testing.assert_allclose(got_td, td, rtol=1e-5, atol=1e-5)
    objective = functools.partial(dqn.loss, apply=q_values, config=dqn.DQNConfig())
    (got_loss, got_td), got_grad = jax.value_and_grad(objective, has_aux=True)(
        f32(online), f32(target), item, f32(weights)
    )
    np.testing.assert_allclose(got_loss, np.mean(weights * huber), rtol=1e-5)
    np.testing.assert_allclose(got_grad, grad, rtol=1e-5, atol=1e-6)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("algo", ["dqn", "apex"])
def test_replay_shards_on_two_devices(algo):
    config = _config(algo, buffer_size=1024, min_replay=256)
    config = pjd.apply_overrides(config, {"devices": 2, "total_steps": 64 * 8})
    exp = pjd.training.make_experiment(config)
    state = exp.runner.init(jax.random.key(0))
    state, metrics = exp.runner.chunk(8)(state)
    buffer = state.agent.buffer
    ring = buffer.ring if algo == "apex" else buffer
    # Each device holds its own shard of 512 slots, 8 x 32 of them written.
    assert ring.items.observation.shape == (1024, 4)
    np.testing.assert_array_equal(ring.size, [256, 256])
    obs = np.asarray(ring.items.observation).reshape(2, 512, 4)
    assert np.all(obs[:, 256:] == 0) and np.all(np.abs(obs[:, :256]).sum(-1) > 0)
    assert not np.array_equal(obs[0, :256], obs[1, :256])
    # Learning starts once 256 transitions are stored (after update 4).
    np.testing.assert_array_equal(
        metrics["learner/grad_steps"], [0, 0, 0, 4, 8, 12, 16, 20]
    )
    # `anneal_lr` decays over the 5 updates that learn, to 0 at the run's end.
    assert learning_updates(256, 64, 8) == 5
    assert np.all(np.isfinite(metrics["loss/total"]))


@pytest.mark.parametrize("prioritised", [False, True], ids=["dqn", "apex"])
@pytest.mark.parametrize(
    ("limits", "obs_t", "reward", "discount", "next_t"),
    [
        # Time limit 3: steps t = 1, 2, 3 (truncated), 1. The transition into
        # the truncation bootstraps from the final observation [3, 0] with γ^k,
        # never from the reset one [0, 1].
        ((0, 3), [0, 1, 2, 0], [1.5, 1.5, 1, 1], [0.25, 0.25, 0.5, 0.5], [2, 3, 3, 1]),
        # Termination at 2: steps t = 1, 2 (terminated), 1, 2 (terminated):
        # no bootstrap past a termination.
        ((2, 10), [0, 1, 0, 1], [1.5, 1, 1.5, 1], [0, 0, 0, 0], [2, 2, 2, 2]),
    ],
    ids=["truncation", "termination"],
)
def test_replay_bootstraps_through_truncation_not_termination(
    prioritised, limits, obs_t, reward, discount, next_t
):
    from purejaxdrl.agents.dqn import DQNConfig
    from purejaxdrl.env.base import Box, Discrete
    from purejaxdrl.networks import NetworkConfig, make_q_network
    from purejaxdrl.runners.rollout import reset_actors, unroll
    from tests.probe import ProbeEnv, ProbeParams

    env, params = ProbeEnv(), ProbeParams(*map(jnp.int32, limits))
    network = make_q_network(NetworkConfig(), Box((2,)), Discrete(2), dueling=True)
    config = DQNConfig(prioritised=prioritised, n_step=2, gamma=0.5,
                       buffer_size=8, batch_size=4, min_replay=8)  # fmt: skip
    run = RunShape(num_envs=1, unroll_length=4, num_updates=4)
    agent = make_dqn(config, network, np.zeros(2, np.float32), run)
    state = agent.init(jax.random.key(0))
    actor = reset_actors(env, params, jax.random.key(1), jnp.arange(1))
    _, traj = unroll(env, params, agent, agent.acting_params(state), actor,
                     jax.random.key(2), 4)  # fmt: skip
    state, _ = agent.update(state, traj._replace(info={}), jax.random.key(3))
    buffer = state.buffer.ring if prioritised else state.buffer
    stored = jax.tree.map(lambda x: np.asarray(x[:4]), buffer.items)
    np.testing.assert_allclose(stored.reward, reward)
    np.testing.assert_allclose(stored.discount, discount)
    np.testing.assert_array_equal(stored.next_observation[:, 0], next_t)
    np.testing.assert_array_equal(stored.observation[:, 0], obs_t)


@pytest.mark.timeout(300)
def test_replay_run_resumes_only_on_its_device_count(tmp_path, capsys):
    from purejaxdrl import cli

    argv = ["train", "--env", "cartpole", "--algo", "apex", "--num-envs", "4",
            "--unroll-length", "8", "--total-steps", "3200", "--num-logs", "2",
            "--quiet", "--devices", "2", "--apex.buffer-size", "512",
            "--apex.min-replay", "64", "--apex.batch-size", "32",
            "--no-compile-cache", "--run-dir", str(tmp_path)]  # fmt: skip
    assert cli.main(argv) == 0, capsys.readouterr().err
    (run,) = tmp_path.iterdir()
    saved = sorted(p.name for p in (run / "checkpoints").iterdir())
    config_yaml = (run / "config.yaml").read_text()
    # With a change that --override allows: refused all the same, and the
    # run's config.yaml kept (a later plain resume must not inherit it).
    resume = ["train", "--resume", str(run), "--devices", "1", "--override",
              "--total-steps", "6400", "--no-compile-cache"]  # fmt: skip
    assert cli.main(resume) == 2
    err = capsys.readouterr().err
    assert "replay buffer in 2 shards" in err and "pass --devices 2" in err
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == saved
    assert (run / "config.yaml").read_text() == config_yaml
    # Evaluation and export restore its 2 shards onto 2 devices.
    assert cli.main(["eval", str(run), "--episodes", "1"]) == 0, capsys.readouterr()
    assert "apex on CartPole-v1, update 100: mean return" in capsys.readouterr().out


def test_apex_replay_sizes_that_do_not_split_name_its_own_section():
    # Ape-X's agent is DQN's factory: its errors named the dqn section, whose
    # flags (--dqn.batch-size) do not change an Ape-X run.
    from purejaxdrl.agents.registry import algorithm

    config = _config("apex", batch_size=33, min_replay=128, buffer_size=256)
    exp = pjd.training.make_experiment(config)
    run = RunShape(num_envs=8, unroll_length=4, num_updates=10, num_devices=2)
    with pytest.raises(ValueError, match=r"^apex\.batch_size=33 must be"):
        algorithm("apex").make_agent(
            config.apex, exp.network, np.zeros(4, np.float32), run
        )
