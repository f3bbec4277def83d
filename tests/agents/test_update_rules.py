"""Three update rules, each checked on hand-computed numbers: double Q-learning's
selection (the online network chooses a', the target network values it),
R2D2's sequence priority η max|δ| + (1 - η) mean|δ|, and SAC's Polyak step
(target <- τ online + (1 - τ) target). Mutation testing found each guarded by
one agent-level test; these are the second, small ones."""

import jax
import jax.numpy as jnp
import numpy as np
import optax

from purejaxdrl.agents import RunShape, dqn
from purejaxdrl.agents.dqn import Replayed
from purejaxdrl.agents.r2d2 import R2D2Config, make_r2d2
from purejaxdrl.agents.sac import SACState, apply_gradients
from purejaxdrl.replay import sum_tree
from purejaxdrl.types import Transition
from tests.helpers import linear_q_network


def test_double_q_lets_the_online_table_choose_and_the_target_table_value():
    # van Hasselt et al. (2016). Tabular Q: one-hot observations times a
    # table [S, A]. At each next state the two tables' greedy actions differ.
    online = np.array([[0.2, -0.4, 0.7], [1.0, 3.0, 2.0]], np.float32)
    target = np.array([[-1.0, 2.0, 0.3], [5.0, 0.5, 4.0]], np.float32)
    eye = np.eye(2, dtype=np.float32)
    item = Replayed(
        observation=jnp.asarray(eye[[0, 1]]),
        action=jnp.array([2, 0], jnp.int32),
        reward=jnp.array([1.0, -2.0]),
        discount=jnp.array([0.9, 0.81]),  # γ and γ² (a 2-step transition)
        next_observation=jnp.asarray(eye[[1, 0]]),
    )
    # Item 0: s' = 1, online argmax 1, target[1, 1] = 0.5, Q(0, 2) = 0.7:
    #   δ = 1 + 0.9 * 0.5 - 0.7 = 0.75 (target's own argmax: 1 + 4.5 - 0.7 = 4.8).
    # Item 1: s' = 0, online argmax 2, target[0, 2] = 0.3, Q(1, 0) = 1.0:
    #   δ = -2 + 0.81 * 0.3 - 1.0 = -2.757 (target's argmax: -2 + 1.62 - 1 = -1.38).
    td = dqn.td_errors(lambda p, x: x @ p, online, target, item)
    np.testing.assert_allclose(td, [0.75, -2.757], rtol=1e-6)


def test_r2d2_priority_mixes_max_and_mean_of_hand_computed_td_errors():
    # Kapturowski et al. (2019): p = η max_t |δ_t| + (1 - η) mean_t |δ_t|.
    # With Q ≡ 0 (zero weights, online and target), 1-step targets, no
    # rescaling and no episode end, δ_t = r_t; the priority is computed with
    # the parameters before the step, and stored as p^α (α = 1 here).
    obs, num_envs, length = 3, 2, 3
    config = R2D2Config(n_step=1, value_rescaling=False, priority_eta=0.9,
                        priority_alpha=1.0, buffer_size=4 * num_envs,
                        batch_size=num_envs, min_replay=num_envs,
                        updates_per_step=1, target_every=1)  # fmt: skip
    run = RunShape(num_envs=num_envs, unroll_length=length, num_updates=4)
    network = linear_q_network(obs, 2)
    agent = make_r2d2(config, network, np.zeros(obs, np.float32), run)
    state = agent.init(jax.random.key(0))
    zeros = jax.tree.map(jnp.zeros_like, state.params)
    state = state._replace(params=zeros, target_params=zeros)
    reward = np.array([[1.0, 0.2], [-3.0, 0.2], [0.5, -0.8]], np.float32)  # [T, E]
    shape = (length, num_envs)
    rng = np.random.default_rng(0)
    observation = rng.normal(size=(*shape, obs)).astype(np.float32)
    steps = np.zeros(shape, np.float32)
    traj = Transition(
        observation, rng.integers(0, 2, shape).astype(np.int32), reward,
        np.ones(shape, np.float32), np.zeros(shape, bool), steps, steps, steps,
        observation[::-1].copy(), {}, np.zeros(shape, bool), (),
    )  # fmt: skip
    new, metrics = jax.jit(agent.update)(state, traj, jax.random.key(1))
    assert int(metrics["learner/grad_steps"]) == 1
    # Env 0: |δ| = [1, 3, 0.5]: 0.9 * 3 + 0.1 * 1.5 = 2.85 (η swapped: 1.65).
    # Env 1: |δ| = [0.2, 0.2, 0.8]: 0.9 * 0.8 + 0.1 * 0.4 = 0.76 (swapped: 0.44).
    want = np.array([2.85, 0.76])
    leaves = jax.vmap(sum_tree.leaves, (0, None))(new.buffer.nodes, jnp.arange(1))
    np.testing.assert_allclose(leaves[:, 0], want, rtol=1e-6)
    # New sequences entered at the largest priority so far, 1 at the start.
    np.testing.assert_allclose(new.buffer.max_priority[:, 0], [2.85, 1.0], rtol=1e-6)


def test_sac_target_critic_moves_tau_of_the_way_to_the_stepped_critic():
    # Haarnoja et al. (2018): ψ' <- τ ψ + (1 - τ) ψ', with ψ the critic after
    # this step's gradient update. SGD at rate 1 makes that update p - g.
    sgd = optax.sgd(1.0)
    actor = {"w": jnp.array([1.0, 2.0])}
    critic = {"w": jnp.array([4.0, -2.0])}
    log_alpha = jnp.float32(0.5)
    state = SACState(
        params={"actor": actor, "critic": critic},
        target_critic={"w": jnp.array([0.0, 1.0])},
        opt_state=(sgd.init(actor), sgd.init(critic), sgd.init(log_alpha)),
        log_alpha=log_alpha,
        step=jnp.int32(0),
        grad_steps=jnp.int32(0),
        buffer=None,
    )
    grads = ({"w": jnp.array([0.5, 0.5])}, {"w": jnp.array([1.0, 1.0])}, 0.25)
    optimizers = (sgd, sgd, sgd)
    new = apply_gradients(state, grads, jnp.bool_(True), optimizers, 0.25)
    # Critic [4, -2] - [1, 1] = [3, -3]; target 0.25 [3, -3] + 0.75 [0, 1] =
    # [0.75, 0]. (τ on the old target: [2.25, -2]; from the critic before the
    # step: [1, 0.25].)
    np.testing.assert_allclose(new.params["critic"]["w"], [3.0, -3.0])
    np.testing.assert_allclose(new.target_critic["w"], [0.75, 0.0], atol=1e-7)
    np.testing.assert_allclose(new.params["actor"]["w"], [0.5, 1.5])
    np.testing.assert_allclose(new.log_alpha, 0.25)
    assert int(new.grad_steps) == 1
    # Before learning is ready nothing moves, the target included.
    kept = apply_gradients(state, grads, jnp.bool_(False), optimizers, 0.25)
    np.testing.assert_allclose(kept.target_critic["w"], [0.0, 1.0])
    np.testing.assert_allclose(kept.params["critic"]["w"], [4.0, -2.0])
    assert int(kept.grad_steps) == 0
