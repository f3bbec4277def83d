"""Invalid-action masks: an env's `Discrete.legal`, applied by the networks.

References are NumPy computations on the legal actions only; the probe env
(`tests.probe.MaskedProbeEnv`) makes action 2 illegal at odd steps while paying
most for it, so an agent that ignored the mask would take it.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import rl
from purejaxdrl.agents import make_agent
from purejaxdrl.agents.dqn import DQNConfig
from purejaxdrl.agents.registry import algorithm
from purejaxdrl.env.base import Box
from purejaxdrl.networks import make_actor_critic, make_q_network
from purejaxdrl.observe.evaluation import mode_action
from purejaxdrl.replay import sum_tree
from purejaxdrl.runners.rollout import reset_actors, unroll
from tests.probe import MaskedProbeEnv

NET = pjd.NetworkConfig(hidden_sizes=(32, 32))
OBS_SPEC = Box((7,))
OBS = np.zeros(7, np.float32)


def _env_obs(masked=True):
    # Every observation of an episode, t = 0..3: [4, 7].
    env = MaskedProbeEnv(masked)
    return jnp.stack([env._observe(jnp.int32(t)) for t in range(env.length)])


@functools.cache
def _networks(masked=True):
    spec = MaskedProbeEnv(masked).action_spec(())
    actor_critic = make_actor_critic(NET, OBS_SPEC, spec)
    q_network = make_q_network(NET, OBS_SPEC, spec, dueling=False)
    return actor_critic, q_network


def _favour_action_2(params, bias):
    # The policy (or Q) head's bias: without the mask action 2 always wins.
    head = dict(params["params"]["Dense_0"])
    head["bias"] = jnp.asarray([0.0, 0.0, bias], jnp.float32)
    return {"params": {**params["params"], "Dense_0": head}}


def _numpy_masked_categorical(logits, legal):
    # log-softmax and entropy over the legal actions only, in float64; a row
    # with none legal counts all as legal (what `mask_logits` promises).
    logits = np.asarray(logits, np.float64)
    legal = np.asarray(legal) | ~np.asarray(legal).any(-1, keepdims=True)
    z = np.where(legal, logits, -np.inf)
    top = z.max(-1, keepdims=True)
    logp = z - top - np.log(np.exp(z - top).sum(-1, keepdims=True))
    p = np.exp(logp)
    entropy = -np.where(legal, p * np.where(legal, logp, 0.0), 0.0).sum(-1)
    return logp, p, entropy, legal


def test_log_prob_entropy_and_gradients_match_numpy_on_legal_actions():
    keys = jax.random.split(jax.random.key(0), 3)
    logits = 3.0 * jax.random.normal(keys[0], (64, 5))
    legal = np.array(jax.random.bernoulli(keys[1], 0.5, (64, 5)))
    legal[:4] = False  # rows with no legal action: all count as legal
    logp_ref, p_ref, entropy_ref, legal_ref = _numpy_masked_categorical(logits, legal)
    # A legal action per row, drawn from the reference probabilities.
    rng = np.random.default_rng(0)
    actions = np.array([rng.choice(5, p=row) for row in p_ref])
    dist = rl.categorical()

    def objective(logits):
        masked = rl.mask_logits(logits, jnp.asarray(legal))
        log_prob = dist.log_prob(masked, jnp.asarray(actions))
        return jnp.sum(log_prob + dist.entropy(masked, None)), (log_prob, masked)

    grad, (log_prob, masked) = jax.grad(objective, has_aux=True)(logits)
    rows = np.arange(64)
    np.testing.assert_allclose(log_prob, logp_ref[rows, actions], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        dist.entropy(masked, None), entropy_ref, rtol=1e-5, atol=1e-6
    )
    # d log p_a / dz = onehot(a) - p; dH / dz_i = -p_i (log p_i + H); both 0
    # at illegal actions, whose p is 0.
    onehot = np.eye(5)[actions]
    safe_logp = np.where(legal_ref, logp_ref, 0.0)
    grad_ref = onehot - p_ref - p_ref * (safe_logp + entropy_ref[:, None])
    assert np.all(np.isfinite(grad)) and np.all(np.isfinite(log_prob))
    np.testing.assert_allclose(grad, grad_ref, atol=2e-5)
    assert np.all(np.asarray(grad)[~legal_ref] == 0.0)


def test_network_log_probs_and_entropy_are_those_of_the_legal_actions():
    masked, _ = _networks(masked=True)
    unmasked, _ = _networks(masked=False)
    params = _favour_action_2(masked.init(jax.random.key(1), OBS), 5.0)
    obs = _env_obs()
    raw = np.asarray(unmasked.apply(params, obs)[0])
    legal = np.asarray(MaskedProbeEnv().legal(obs))
    logp_ref, _, entropy_ref, _ = _numpy_masked_categorical(raw, legal)
    logits, value = masked.apply(params, obs)
    np.testing.assert_allclose(value, unmasked.apply(params, obs)[1])
    dist = masked.distribution
    for action in (0, 1):  # legal everywhere
        got = dist.log_prob(logits, jnp.full(4, action))
        np.testing.assert_allclose(got, logp_ref[:, action], rtol=1e-5)
    np.testing.assert_allclose(dist.entropy(logits, None), entropy_ref, rtol=1e-5)
    # The mask only removes actions: legal ones keep their raw logits.
    np.testing.assert_array_equal(np.asarray(logits)[legal], raw[legal])


def test_epsilon_greedy_draws_legal_actions_uniformly_and_keeps_its_stream():
    q = jnp.asarray([5.0, -jnp.inf, 1.0, -jnp.inf, 0.0])
    keys = jax.random.split(jax.random.key(2), 6000)
    draws = np.asarray(jax.vmap(rl.epsilon_greedy, (0, None, None))(keys, q, 1.0))
    counts = np.bincount(draws, minlength=5)
    assert counts[1] == counts[3] == 0
    np.testing.assert_allclose(counts[[0, 2, 4]] / 6000, 1 / 3, atol=0.03)
    greedy = jax.vmap(rl.epsilon_greedy, (0, None, None))(keys[:50], q, 0.0)
    assert np.all(np.asarray(greedy) == 0)
    # Without illegal actions, the draw a plain randint would make.
    full = jnp.arange(5.0)
    got = jax.vmap(rl.epsilon_greedy, (0, None, None))(keys[:200], full, 1.0)
    want = jax.vmap(lambda k: jax.random.randint(jax.random.split(k)[1], (), 0, 5))(
        keys[:200]
    )
    np.testing.assert_array_equal(got, np.asarray(want))


@functools.cache
def _agent(algo, masked=True, **overrides):
    actor_critic, q_network = _networks(masked)
    if algo in ("dqn", "apex"):
        fields = dict(
            prioritised=algo == "apex", dueling=False, n_step=1, gamma=0.5,
            buffer_size=256, batch_size=32, min_replay=64,
        )  # fmt: skip
        config = DQNConfig(**{**fields, **overrides})
        network = q_network
    else:
        record_config = algorithm(algo).default_config()
        config = pjd.apply_overrides(record_config, dict(overrides))
        network = actor_critic
    agent = make_agent(
        algo, config, network, OBS, num_updates=1000, axis_name=None,
        num_envs=16, unroll_length=8,
    )  # fmt: skip
    return agent, network


def _rollout(agent, acting, key, num_envs=16, length=8, masked=True):
    env = MaskedProbeEnv(masked)
    key_reset, key_unroll = jax.random.split(key)
    actor = reset_actors(env, (), key_reset, jnp.arange(num_envs, dtype=jnp.int32))
    return unroll(env, (), agent, acting, actor, key_unroll, length)[1]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("algo", ["ppo", "dqn"])
def test_masked_policy_never_samples_or_picks_an_illegal_action(algo):
    agent, network = _agent(algo)
    _, unmasked_net = _agent(algo, masked=False)
    state = agent.init(jax.random.key(3))
    params = _favour_action_2(state.params, 10.0)
    # DQN acts with ε = 1 at its first update: every action a random legal one.
    acting = (params, *agent.acting_params(state)[1:]) if algo == "dqn" else params
    traj = jax.jit(functools.partial(_rollout, agent, length=64))(
        acting, jax.random.key(4)
    )
    assert float(traj.info["illegal"].sum()) == 0.0
    odd = np.asarray(traj.observation[..., 1] + traj.observation[..., 3]) > 0
    action = np.asarray(traj.action)
    assert np.all(action[odd] != 2) and np.any(action[~odd] == 2)
    assert np.all(np.isfinite(traj.log_prob))
    # Greedy: action 2 where legal (its bias), else the best legal one; the
    # same parameters without the mask pick action 2 everywhere.
    obs = _env_obs()
    raw = np.asarray(unmasked_net.apply(params, obs)[0])
    want = [2, raw[1, :2].argmax(), 2, raw[3, :2].argmax()]
    np.testing.assert_array_equal(mode_action(network)(params, obs), want)
    np.testing.assert_array_equal(mode_action(unmasked_net)(params, obs), [2] * 4)


@pytest.mark.timeout(120)
def test_ppo_update_on_masked_data_is_finite_with_ratio_one_at_lag_zero():
    # One epoch of one minibatch: the loss is evaluated once, at the acting
    # parameters, so its ratio is exactly 1 when the learner re-applies the
    # actor's mask (approx KL 0, nothing clipped).
    agent, network = _agent("ppo", num_epochs=1, num_minibatches=1)
    state = agent.init(jax.random.key(5))
    state = state._replace(params=_favour_action_2(state.params, 5.0))
    traj = jax.jit(functools.partial(_rollout, agent))(state.params, jax.random.key(6))
    dist = network.distribution
    log_prob = dist.log_prob(
        network.apply(state.params, traj.observation)[0], traj.action
    )
    np.testing.assert_allclose(log_prob, traj.log_prob, atol=1e-6)
    new, metrics = jax.jit(agent.update)(
        state, traj._replace(info={}), jax.random.key(7)
    )
    assert all(np.isfinite(v) for v in jax.device_get(metrics).values())
    assert abs(float(metrics["approx_kl"])) < 1e-7
    assert float(metrics["clip_fraction"]) == 0.0
    flat = jax.flatten_util.ravel_pytree(new.params)[0]
    assert np.all(np.isfinite(flat)) and not np.allclose(
        flat, jax.flatten_util.ravel_pytree(state.params)[0]
    )


@pytest.mark.timeout(120)
@pytest.mark.parametrize("algo", ["a2c", "impala"])
def test_other_actor_critic_updates_on_masked_data_are_finite(algo):
    agent, _ = _agent(algo)
    state = agent.init(jax.random.key(5))
    traj = jax.jit(functools.partial(_rollout, agent))(
        agent.acting_params(state), jax.random.key(6)
    )
    _, metrics = jax.jit(agent.update)(state, traj._replace(info={}), jax.random.key(7))
    assert all(np.isfinite(v) for v in jax.device_get(metrics).values())


@pytest.mark.timeout(120)
def test_q_targets_never_bootstrap_from_an_illegal_action():
    # Ape-X's initial priorities are |r + γ max_a Q(x', a) - Q(x, a_t)|: with
    # the mask the max is over legal actions only, though the illegal action's
    # raw Q (bias 100) dwarfs them. Learning has not started (64 < min_replay
    # 128), so the drawn items' priorities are rewritten with double-Q TD errors
    # that equal these while the target network is the online one.
    agent, network = _agent("apex", min_replay=128, updates_per_step=1)
    _, unmasked = _networks(masked=False)
    state = agent.init(jax.random.key(8))
    params = _favour_action_2(state.params, 100.0)
    state = state._replace(params=params, target_params=params)
    acting = (params, *agent.acting_params(state)[1:])
    traj = jax.jit(functools.partial(_rollout, agent, num_envs=8))(
        acting, jax.random.key(9)
    )
    state, metrics = jax.jit(agent.update)(
        state, traj._replace(info={}), jax.random.key(10)
    )
    obs = np.asarray(traj.observation).reshape(-1, 7)
    final = np.asarray(traj.final_observation).reshape(-1, 7)
    q = np.asarray(unmasked.apply(params, obs)[0])
    q_next = np.asarray(unmasked.apply(params, final)[0])
    legal_next = np.asarray(MaskedProbeEnv().legal(final))
    taken = q[np.arange(64), np.asarray(traj.action).reshape(-1)]
    reward = np.asarray(traj.reward).reshape(-1)
    discount = np.asarray(traj.discount).reshape(-1)
    best = np.where(legal_next, q_next, -np.inf).max(-1)
    td = reward + 0.5 * discount * best - taken
    config = DQNConfig(prioritised=True)
    want = (np.abs(td) + config.priority_eps) ** config.priority_alpha
    got = sum_tree.leaves(state.buffer.nodes, jnp.arange(64))
    np.testing.assert_allclose(got, want, rtol=2e-5)
    # The unmasked max would have bootstrapped from the illegal action's Q.
    bad = reward + 0.5 * discount * q_next.max(-1) - taken
    assert np.max(np.abs(np.abs(bad) - np.abs(td))) > 10.0
    assert all(np.isfinite(v) for v in jax.device_get(metrics).values())


@pytest.mark.timeout(120)
def test_dqn_update_on_masked_data_is_finite():
    agent, _ = _agent("dqn", min_replay=32, updates_per_step=2)
    state = agent.init(jax.random.key(11))
    traj = jax.jit(functools.partial(_rollout, agent))(
        agent.acting_params(state), jax.random.key(12)
    )
    new, metrics = jax.jit(agent.update)(
        state, traj._replace(info={}), jax.random.key(13)
    )
    assert float(metrics["learner/grad_steps"]) == 2.0
    assert all(np.isfinite(v) for v in jax.device_get(metrics).values())
    assert np.all(np.isfinite(jax.flatten_util.ravel_pytree(new.params)[0]))
