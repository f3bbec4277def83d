"""R2D2: value rescaling, sequence targets against a per-step NumPy reference,
the weighted loss, importance weights of the drawn sequences in a gradient
step, written priorities, burn-in without gradient,
per-environment replay shards on any device count."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

import purejaxdrl as pjd
from purejaxdrl import env as envs
from purejaxdrl.agents import RunShape
from purejaxdrl.agents.r2d2 import R2D2Config, loss, make_r2d2
from purejaxdrl.agents.r2d2_sequences import Sequence, sequence_td, time_major
from purejaxdrl.agents.replay_sizes import learning_updates
from purejaxdrl.networks import make_q_network
from purejaxdrl.parallel import make_mesh
from purejaxdrl.replay import make_prioritised_buffer, sum_tree
from purejaxdrl.replay.env_shards import make_env_shards
from purejaxdrl.rl.value_rescaling import rescale, unscale
from purejaxdrl.types import Transition
from tests.helpers import flat, third_update_steps_at_four_fifths, tiny_config, trained

pytestmark = pytest.mark.timeout(300)


def _h(x, eps):
    # The paper's definition, in float64.
    return np.sign(x) * (np.sqrt(np.abs(x) + 1.0) - 1.0) + eps * x


def _h_inverse(y, eps):
    # h is increasing: bisection in float64, independent of the closed form.
    lo, hi = np.full_like(y, -1e7), np.full_like(y, 1e7)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        below = _h(mid, eps) < y
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return 0.5 * (lo + hi)


def test_value_rescaling_is_h_and_its_inverse():
    x = np.array([-3e4, -250.0, -7.5, -1.0, -0.01, 0.0, 0.3, 1.0, 42.0, 9e3])
    for eps in (1e-3, 1e-2):
        np.testing.assert_allclose(
            rescale(x.astype(np.float32), eps), _h(x, eps), rtol=1e-6, atol=1e-7
        )
        y = _h(x, eps)
        np.testing.assert_allclose(
            unscale(y.astype(np.float32), eps), _h_inverse(y, eps), rtol=2e-6,
            atol=1e-6,
        )  # fmt: skip


T, S, OBS, BURN = 9, 3, 4, 3


@functools.cache
def _network(core="gru"):
    env = envs.make("CartPole-v1")
    params = env.default_params
    config = pjd.NetworkConfig(hidden_sizes=(8,), core=core, core_size=6)
    return make_q_network(
        config, env.observation_spec(params), env.action_spec(params), dueling=True
    )


def _sequences(core="gru", seed=0) -> Sequence:
    """S sequences of T steps with a termination and a truncation mid-sequence."""
    rng = np.random.default_rng(seed)
    discount = np.ones((T, S), np.float32)
    truncated = np.zeros((T, S), bool)
    discount[5, 0] = 0.0  # sequence 0 terminates at step 5
    truncated[2, 1] = True  # sequence 1 is cut by a time limit at step 2
    truncated[7, 2], discount[4, 2] = True, 0.0
    done = (discount == 0) | truncated
    reset = np.concatenate([np.zeros((1, S), bool), done[:-1]])
    start = _network(core).initial_state(S)
    start = jax.tree.map(lambda x: rng.normal(size=x.shape).astype(np.float32), start)
    return Sequence(
        observation=rng.normal(size=(T, S, OBS)).astype(np.float32),
        action=rng.integers(0, 2, (T, S)).astype(np.int32),
        reward=rng.normal(size=(T, S)).astype(np.float32),
        discount=discount,
        truncated=truncated,
        reset=reset,
        final_observation=rng.normal(size=(T, S, OBS)).astype(np.float32),
        core_state=start,
    )


def _td(config, net, params, target_params, seq):
    eps = config.rescale_eps if config.value_rescaling else None
    return sequence_td(
        net, params, target_params, seq, burn_in=config.burn_in,
        n_step=config.n_step, gamma=config.gamma, rescale_eps=eps,
    )  # fmt: skip


def _reference_td(config, net, params, target_params, seq):
    """δ by the paper's definition, one step and one sequence at a time.

    With value rescaling the target is h(G + γ_boot h^-1(Q')), else G + γ_boot Q'.
    """
    T, S = seq.reward.shape  # the module's sizes, or any others

    def per_step_q(p):
        q, q_final = np.zeros((T, S, 2)), np.zeros((T, S, 2))
        for s in range(S):
            state = jax.tree.map(lambda x, s=s: x[s : s + 1], seq.core_state)
            for t in range(T):
                reset = np.array([seq.reset[t, s]])
                state, (q_t, _) = net.step(p, state, seq.observation[t, s][None], reset)
                q[t, s] = q_t[0]
                no = np.zeros(1, bool)
                _, (qf, _) = net.step(p, state, seq.final_observation[t, s][None], no)
                q_final[t, s] = qf[0]
        return q, q_final

    (q, online_final), (_, target_final) = per_step_q(params), per_step_q(target_params)
    eps, gamma, n = config.rescale_eps, config.gamma, config.n_step
    td = np.zeros((T - config.burn_in, S))
    for s in range(S):
        for t in range(config.burn_in, T):
            ret, boot, last = 0.0, 1.0, t
            for j in range(n):
                k = t + j
                if k >= T:
                    break
                ret += boot * seq.reward[k, s]
                boot *= gamma * seq.discount[k, s]
                last = k
                if seq.discount[k, s] == 0 or seq.truncated[k, s]:
                    break
            best = np.argmax(online_final[last, s])
            bootstrap = target_final[last, s, best]
            if config.value_rescaling:
                target = _h(ret + boot * _h_inverse(np.array(bootstrap), eps), eps)
            else:
                target = ret + boot * bootstrap
            td[t - config.burn_in, s] = target - q[t, s, seq.action[t, s]]
    return td


@pytest.mark.parametrize(
    "core, rescaling", [("gru", True), ("lstm", True), ("mingru", True), ("gru", False)]
)
def test_sequence_td_errors_match_a_per_step_reference(core, rescaling):
    config = R2D2Config(burn_in=BURN, n_step=3, gamma=0.9, value_rescaling=rescaling)
    net = _network(core)
    params = net.init(jax.random.key(0), jnp.zeros(OBS))
    target_params = net.init(jax.random.key(1), jnp.zeros(OBS))
    seq = _sequences(core)
    td = _td(config, net, params, target_params, seq)
    expected = _reference_td(config, net, params, target_params, seq)
    np.testing.assert_allclose(td, expected, atol=2e-5, rtol=1e-5)


def test_loss_weights_each_sequences_mean_squared_td_error():
    # R2D2 with prioritised replay: L = mean_i w_i 0.5 mean_t δ_{t,i}^2 with
    # the importance weights w_i; δ from the per-step NumPy reference.
    config = R2D2Config(burn_in=BURN, n_step=2, gamma=0.9)
    net = _network()
    params = net.init(jax.random.key(0), jnp.zeros(OBS))
    target_params = net.init(jax.random.key(1), jnp.zeros(OBS))
    seq = _sequences()
    weights = np.array([0.2, 1.0, 0.55], np.float32)
    objective = jax.jit(functools.partial(loss, network=net, config=config))
    got, _ = objective(params, target_params, seq, jnp.asarray(weights))
    td = _reference_td(config, net, params, target_params, seq)
    assert np.ptp(np.mean(td**2, axis=0)) > 0.1  # the weights matter
    want = np.mean(weights * 0.5 * np.mean(td**2, axis=0))
    np.testing.assert_allclose(got, want, rtol=1e-5)


def _trajectory(net, length: int, num_envs: int, seed: int) -> Transition:
    """An unroll [T, E] of random steps; environment 0 terminates at step 2."""
    rng = np.random.default_rng(seed)
    shape = (length, num_envs)
    discount = np.ones(shape, np.float32)
    discount[2, 0] = 0.0
    normal = functools.partial(rng.normal, size=(*shape, OBS))
    return Transition(
        normal().astype(np.float32), rng.integers(0, 2, shape).astype(np.int32),
        rng.normal(size=shape).astype(np.float32), discount,
        np.zeros(shape, bool), np.zeros(shape, np.float32),
        np.zeros(shape, np.float32), np.zeros(shape, np.float32),
        normal().astype(np.float32), {},
        np.concatenate([np.zeros((1, num_envs), bool), discount[:-1] == 0]),
        net.initial_state(num_envs),
    )  # fmt: skip


def test_written_priorities_mix_the_max_and_mean_absolute_td_error():
    # Kapturowski et al. (2019): p = η max_t |δ_t| + (1 - η) mean_t |δ_t| of
    # each drawn sequence, computed with the parameters before the step, and
    # stored as p^α. One update: every shard holds one sequence, all drawn.
    num_envs, length, burn = 4, 5, 2
    config = R2D2Config(burn_in=burn, n_step=2, gamma=0.9, priority_eta=0.6,
                        buffer_size=4 * num_envs, batch_size=2 * num_envs,
                        min_replay=num_envs, updates_per_step=1)  # fmt: skip
    net = _network()
    run = RunShape(num_envs=num_envs, unroll_length=length, num_updates=4)
    agent = make_r2d2(config, net, np.zeros(OBS, np.float32), run)
    state = agent.init(jax.random.key(0))
    state = state._replace(target_params=net.init(jax.random.key(1), jnp.zeros(OBS)))
    traj = _trajectory(net, length, num_envs, seed=0)
    new, metrics = jax.jit(agent.update)(state, traj, jax.random.key(2))
    assert int(metrics["learner/grad_steps"]) == 1
    # The stored sequences, [E, T, ...] in slot 0 of each shard, time-major.
    stored = jax.tree.map(lambda x: x[:, 0], new.buffer.ring.items)
    seq = time_major(stored)
    td = np.abs(_reference_td(config, net, state.params, state.target_params, seq))
    assert td.shape == (length, num_envs)
    p = 0.6 * td.max(axis=0) + 0.4 * td.mean(axis=0)
    leaves = jax.vmap(sum_tree.leaves, (0, None))(new.buffer.nodes, jnp.arange(1))
    np.testing.assert_allclose(leaves[:, 0], p**config.priority_alpha, rtol=1e-5)
    np.testing.assert_allclose(
        new.buffer.max_priority[:, 0], np.maximum(p, 1.0), rtol=1e-5
    )


def test_a_gradient_step_weights_each_drawn_sequence_by_its_importance_weight():
    # Kapturowski et al. (2019), as Schaul et al. (2016): the loss of a drawn
    # sequence i is weighted by w_i = (N P(i))^-β / max_j w_j, with P(i) its
    # probability within its environment's shard of N sequences. Reference:
    # P from the priorities set here, δ from the per-step reference (the
    # gradient through `sequence_td`, whose δ equal it), and Adam's first
    # step, which (clipping out of reach) moves each parameter by
    # -lr g / (|g| + ε): with a large ε nearly linear in g, so the step tells
    # the weights apart, not only signs.
    from purejaxdrl.agents.r2d2_sequences import with_burn_in

    num_envs, length, per_env, per_batch = 2, 4, 4, 2
    alpha, beta, lr, adam_eps = 1.0, 0.6, 1.0, 10.0
    config = R2D2Config(
        burn_in=1, n_step=2, gamma=0.9, priority_alpha=alpha,
        importance_exponent=beta, buffer_size=per_env * num_envs,
        batch_size=per_batch * num_envs, min_replay=num_envs, updates_per_step=1,
        learning_rate=lr, adam_eps=adam_eps, max_grad_norm=1e6, target_every=4,
    )  # fmt: skip
    net = _network()
    run = RunShape(num_envs=num_envs, unroll_length=length, num_updates=8)
    agent = make_r2d2(config, net, np.zeros(OBS, np.float32), run)
    state = jax.jit(agent.init)(jax.random.key(0))
    # The agent's shards (pure functions of these sizes): three unrolls
    # stored, then priorities far apart, different in each shard.
    shards = make_env_shards(
        make_prioritised_buffer(per_env, per_batch, alpha=alpha), num_envs
    )

    @jax.jit
    def store(buffer, tail, traj, first):  # what `update` stores
        seqs, tail = with_burn_in(net, state.params, tail, traj, first)
        return shards.add(buffer, seqs), tail

    buffer, tail = state.buffer, state.tail
    trajs = [_trajectory(net, length, num_envs, seed=k) for k in range(4)]
    for k, traj in enumerate(trajs[:3]):
        buffer, tail = store(buffer, tail, traj, jnp.bool_(k == 0))
    priority = np.array([[0.2, 3.0, 1.0], [2.0, 0.1, 4.0]], np.float32)
    slots = jnp.asarray(np.broadcast_to(np.arange(3), priority.shape), jnp.int32)
    buffer = jax.jit(shards.set_priorities)(buffer, slots, jnp.asarray(priority))
    state = state._replace(
        buffer=buffer, tail=tail, step=jnp.int32(3),
        target_params=jax.jit(net.init)(jax.random.key(1), jnp.zeros(OBS)),
    )  # fmt: skip
    # The update stores the fourth unroll in slot 3 with each shard's largest
    # priority so far, then draws from the full shards. The key is the first
    # whose draw holds a sequence of low probability (a weight far below 1).
    priority = np.concatenate([priority, priority.max(1, keepdims=True)], axis=1)
    probability = priority**alpha / (priority**alpha).sum(axis=1, keepdims=True)
    full, _ = store(buffer, tail, trajs[3], jnp.bool_(False))
    rows, sample = np.arange(num_envs)[:, None], jax.jit(shards.sample)
    for seed in range(64):
        key = jax.random.key(seed)
        step_key = jax.random.split(key, 1)[0]
        index = np.asarray(sample(full, step_key, jnp.arange(num_envs)).index)
        if probability[rows, index].min() < 0.05:
            break
    new, metrics = jax.jit(agent.update)(state, trajs[3], key)
    assert int(metrics["learner/grad_steps"]) == 1
    jax.tree.map(np.testing.assert_array_equal, new.buffer.ring.items, full.ring.items)
    # Those are the slots the step drew: their priorities, and only theirs,
    # were rewritten.
    leaves = jax.vmap(sum_tree.leaves, (0, None))
    moved = ~np.isclose(
        leaves(new.buffer.nodes, jnp.arange(per_env)),
        leaves(full.nodes, jnp.arange(per_env)),
    )
    for env in range(num_envs):
        assert set(np.flatnonzero(moved[env])) == set(index[env])
    p_drawn = probability[rows, index].reshape(-1)  # environment-major
    w = (per_env * p_drawn) ** -beta
    w = w / w.max()
    assert w.min() < 0.5  # the weights matter
    drawn = jax.tree.map(
        lambda x: x[rows, index].reshape(-1, *x.shape[2:]), full.ring.items
    )
    seq = time_major(drawn)

    @jax.jit
    def reference(params, weights):
        td = _td(config, net, params, state.target_params, seq)
        return jnp.mean(weights * 0.5 * jnp.mean(td**2, axis=0))

    def adam_step(weights):  # Adam's first step: m = g, v = g² (bias-corrected)
        g = flat(jax.grad(reference)(state.params, jnp.asarray(weights)))
        return -lr * g / (np.abs(g) + adam_eps)

    # The δ it differentiates: the per-step NumPy reference's.
    td = _td(config, net, state.params, state.target_params, seq)
    ref_td = _reference_td(config, net, state.params, state.target_params, seq)
    np.testing.assert_allclose(td, ref_td, atol=2e-5, rtol=1e-5)
    want = np.mean(w * 0.5 * np.mean(ref_td**2, axis=0))
    np.testing.assert_allclose(reference(state.params, jnp.asarray(w)), want, rtol=1e-5)
    unweighted = reference(state.params, jnp.ones_like(w))
    assert abs(unweighted - want) > 0.1 * abs(want)
    np.testing.assert_allclose(metrics["loss/total"], want, rtol=1e-5)
    step = adam_step(w)
    assert np.abs(step - adam_step(np.ones_like(w))).max() > 1e-3
    np.testing.assert_allclose(
        flat(new.params), flat(state.params) + step, rtol=0, atol=2e-6
    )


def test_burn_in_steps_get_no_gradient():
    config = R2D2Config(burn_in=BURN, n_step=2)
    net = _network()
    params = net.init(jax.random.key(0), jnp.zeros(OBS))
    target_params = net.init(jax.random.key(1), jnp.zeros(OBS))
    seq = _sequences()

    def loss(params, obs):
        td = _td(config, net, params, target_params, seq._replace(observation=obs))
        return jnp.mean(td**2)

    d_params, d_obs = jax.grad(loss, argnums=(0, 1))(params, seq.observation)
    d_obs = np.asarray(d_obs)
    assert np.all(d_obs[:BURN] == 0.0)  # the burn-in's inputs: none at all
    assert np.all(np.abs(d_obs[BURN:]).sum(-1) > 0)
    # The same gradient as a loss whose start state is a constant: the burn-in
    # contributes the state only, never a parameter gradient.
    head = jax.tree.map(lambda x: x[:BURN], seq)
    start, _ = net.unroll(params, seq.core_state, head.observation, head.reset)
    start = jax.tree.map(np.asarray, start)

    def loss_from(params):
        tail = jax.tree.map(lambda x: x[BURN:], seq)
        _, (q, _) = net.unroll(params, start, tail.observation, tail.reset)
        td_target = _td(config, net, params, target_params, seq)
        q_taken = jnp.take_along_axis(q, tail.action[..., None], -1)[..., 0]
        # δ = target - q with the target held fixed, as sequence_td's.
        target = jax.lax.stop_gradient(td_target + q_taken)
        return jnp.mean((target - q_taken) ** 2)

    expected = jax.grad(loss_from)(params)
    flat = lambda tree: np.asarray(ravel_pytree(tree)[0])  # noqa: E731
    np.testing.assert_allclose(flat(d_params), flat(expected), atol=1e-6, rtol=1e-5)
    assert np.abs(flat(d_params)).max() > 1e-4


SMALL = {
    "algo": "r2d2",
    "num_envs": 8,
    "unroll_length": 8,
    "total_steps": 8 * 8 * 6,
    "r2d2": {"burn_in": 2, "buffer_size": 32, "batch_size": 16, "min_replay": 16,
             "updates_per_step": 2, "target_every": 3, "learning_rate": 1e-3},
    "network": {"core": "gru", "core_size": 8, "hidden_sizes": [16]},
    "env": {"hide_observations": [1, 3]},
}  # fmt: skip


def _trained(num_devices: int):
    return trained(tiny_config(SMALL), num_devices, 6)[:3]


@pytest.mark.parametrize("num_devices", [pytest.param(2, marks=pytest.mark.slow), 8])
def test_same_parameters_on_any_device_count(num_devices):
    exp, one, metrics = _trained(1)
    _, many, _ = _trained(num_devices)
    # Learning from the second update on (2 sequences per shard): 5 x 2 steps.
    assert metrics["learner/grad_steps"][-1] == 10
    assert learning_updates(16, 8, 6) == 5  # what `anneal_lr` decays over
    init = exp.runner.init(jax.random.key(0))
    assert np.abs(flat(one.agent.params) - flat(init.agent.params)).max() > 1e-4
    np.testing.assert_allclose(
        flat(many.agent.params), flat(one.agent.params), atol=1e-5, rtol=0
    )
    # The replay shards, gathered, hold the same sequences and priorities.
    np.testing.assert_array_equal(
        many.agent.buffer.ring.items.observation,
        one.agent.buffer.ring.items.observation,
    )
    np.testing.assert_allclose(
        many.agent.buffer.nodes, one.agent.buffer.nodes, rtol=1e-5, atol=1e-6
    )


def test_stored_sequences_overlap_by_the_burn_in_from_the_actors_state():
    # Two unrolls by the actors with fixed parameters, then what R2D2 stores:
    # each sequence is the unroll before's last `burn_in` steps and the
    # unroll, from the state the actors had before those steps.
    from purejaxdrl.agents.r2d2_sequences import empty_tail, with_burn_in
    from purejaxdrl.runners.rollout import unroll

    exp, state, _ = _trained(1)
    net, burn, length = exp.network, SMALL["r2d2"]["burn_in"], SMALL["unroll_length"]
    acting = exp.agent.acting_params(state.agent)
    params = acting[0]

    @jax.jit
    def act(actor, key):
        return unroll(exp.env, state.env_params, exp.agent, acting, actor, key, length)

    # A run's first unroll (from fresh environments and the zero state).
    fresh = jax.device_get(exp.runner.init(jax.random.key(3)).actor)
    actor, first = act(fresh, jax.random.key(1))
    _, second = act(actor, jax.random.key(2))
    obs = np.zeros(exp.env.observation_spec(state.env_params).shape, np.float32)
    tail = empty_tail(obs, burn, net, SMALL["num_envs"])
    seq1, tail = with_burn_in(net, params, tail, first, jnp.bool_(True))
    seq2, _ = with_burn_in(net, params, tail, second, jnp.bool_(False))
    assert seq2.reward.shape == (SMALL["num_envs"], burn + length)
    np.testing.assert_array_equal(
        seq2.observation[:, :burn], np.swapaxes(first.observation[-burn:], 0, 1)
    )
    np.testing.assert_array_equal(
        seq2.action[:, burn:], np.swapaxes(second.action, 0, 1)
    )

    def q_values(seq):  # the learner's unroll of stored sequences, [E, T]
        steps = jax.tree.map(
            lambda x: np.swapaxes(x, 0, 1), seq._replace(core_state=())
        )
        q = net.unroll(params, seq.core_state, steps.observation, steps.reset)[1][0]
        return np.swapaxes(np.asarray(q), 0, 1)

    def actors_q(traj):  # from the start state the actors had
        return np.swapaxes(
            np.asarray(
                net.unroll(params, traj.core_state, traj.observation, traj.reset)[1][0]
            ),
            0,
            1,
        )

    # After its burn-in a stored sequence's Q-values are the actors': the
    # first from the zero state (its tail is no experience), the second from
    # the state re-unrolled over the first unroll.
    np.testing.assert_allclose(q_values(seq1)[:, burn:], actors_q(first), atol=1e-5)
    np.testing.assert_allclose(q_values(seq2)[:, burn:], actors_q(second), atol=1e-5)
    # Mid-episode, that state matters (from a zero state they differ).
    zeroed = seq2._replace(core_state=jax.tree.map(jnp.zeros_like, seq2.core_state))
    assert np.abs(q_values(zeroed)[:, burn:] - actors_q(second)).max() > 1e-3


def test_a_burn_in_of_the_whole_unroll_is_the_unroll_before_from_its_start():
    # The paper's 40 + 40: burn_in == unroll_length. Each stored sequence is
    # the whole unroll before, from the state the actors had at its start,
    # then the unroll; as with a shorter burn-in (the test above), its
    # Q-values after the burn-in are the actors'.
    from purejaxdrl.agents.r2d2_sequences import empty_tail, with_burn_in
    from purejaxdrl.runners.rollout import unroll

    length = SMALL["unroll_length"]
    config = tiny_config({**SMALL, "r2d2": {**SMALL["r2d2"], "burn_in": length}})
    exp = pjd.training.make_experiment(config, make_mesh(1))
    state = jax.device_get(exp.runner.init(jax.random.key(0)))
    net, num_envs = exp.network, SMALL["num_envs"]
    acting = exp.agent.acting_params(state.agent)
    params = acting[0]

    @jax.jit
    def act(actor, key):
        return unroll(exp.env, state.env_params, exp.agent, acting, actor, key, length)

    actor, first = act(state.actor, jax.random.key(1))
    actor, second = act(actor, jax.random.key(2))
    _, third = act(actor, jax.random.key(3))
    obs = np.zeros(exp.env.observation_spec(state.env_params).shape, np.float32)
    tail = empty_tail(obs, length, net, num_envs)
    _, tail = with_burn_in(net, params, tail, first, jnp.bool_(True))
    seq, tail = with_burn_in(net, params, tail, second, jnp.bool_(False))
    later, _ = with_burn_in(net, params, tail, third, jnp.bool_(False))
    assert seq.reward.shape == (num_envs, 2 * length)
    np.testing.assert_array_equal(
        seq.observation, np.swapaxes(np.concatenate([first.observation,
                                                     second.observation]), 0, 1)
    )  # fmt: skip
    # Mid-episode, the state the second unroll started from is not the zero one.
    assert max(np.abs(x).max() for x in jax.tree.leaves(second.core_state)) > 1e-3
    for stored, start in ((seq, first), (later, second)):
        jax.tree.map(np.testing.assert_array_equal, stored.core_state, start.core_state)

    def q_values(seq):  # the learner's unroll of stored sequences, [E, T]
        steps = jax.tree.map(
            lambda x: np.swapaxes(x, 0, 1), seq._replace(core_state=())
        )
        q = net.unroll(params, seq.core_state, steps.observation, steps.reset)[1][0]
        return np.swapaxes(np.asarray(q), 0, 1)[:, length:]

    def actors_q(traj):  # from the start state the actors had
        q = net.unroll(params, traj.core_state, traj.observation, traj.reset)[1][0]
        return np.swapaxes(np.asarray(q), 0, 1)

    np.testing.assert_allclose(q_values(seq), actors_q(second), atol=1e-5)
    np.testing.assert_allclose(q_values(later), actors_q(third), atol=1e-5)
    # And the run trains: two updates, the second learning (16 sequences).
    _, metrics = exp.runner.chunk(2)(exp.runner.init(jax.random.key(0)))
    assert np.isfinite(np.asarray(metrics["loss/total"])).all()
    assert np.asarray(metrics["learner/grad_steps"])[-1] == 2


def test_an_annealed_rate_falls_per_learning_update_and_holds_over_its_steps():
    # As DQN's: 6 updates of one sequence per environment, learning from the
    # second (min_replay 4 of 2 environments): the rate decays over the 5
    # learning updates, each taking its 2 gradient steps at one rate, so the
    # third update steps at 0.8 of it, as a constant-rate learner at 0.8 does
    # from the same state (5/6 if it decayed over every update; 0.6 then 0.4
    # per gradient step).
    num_envs, length = 2, 4
    on = R2D2Config(burn_in=1, n_step=2, gamma=0.9, buffer_size=4 * num_envs,
                    batch_size=num_envs, min_replay=2 * num_envs,
                    updates_per_step=2, anneal_lr=True, learning_rate=1e-2,
                    target_every=8)  # fmt: skip
    assert learning_updates(2 * num_envs, num_envs, 6) == 5
    net = _network()
    run = RunShape(num_envs=num_envs, unroll_length=length, num_updates=6)

    def update(config):
        agent = make_r2d2(config, net, np.zeros(OBS, np.float32), run)
        return agent, jax.jit(agent.update)

    metrics = third_update_steps_at_four_fifths(
        update, on, lambda t: _trajectory(net, length, num_envs, seed=t)
    )
    assert int(metrics["learner/grad_steps"]) == 4
