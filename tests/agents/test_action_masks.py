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
from jax.flatten_util import ravel_pytree

import purejaxdrl as pjd
from purejaxdrl import env as envs
from purejaxdrl import rl
from purejaxdrl.agents import RunShape, make_agent
from purejaxdrl.agents.dqn import DQNConfig
from purejaxdrl.agents.registry import algorithm
from purejaxdrl.env.base import Box
from purejaxdrl.env.wrappers import HideObservations
from purejaxdrl.networks import make_actor_critic, make_q_network
from purejaxdrl.observe.play import mode_action
from purejaxdrl.replay import sum_tree
from purejaxdrl.runners.rollout import reset_actors, unroll
from tests.probe import MASKED_PROBE_REWARDS, MaskedProbeEnv

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
    run = RunShape(num_envs=16, unroll_length=8, num_updates=1000)
    agent = make_agent(algo, config, network, OBS, run)
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
    flat = ravel_pytree(new.params)[0]
    assert np.all(np.isfinite(flat)) and not np.allclose(
        flat, ravel_pytree(state.params)[0]
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
    assert np.all(np.isfinite(ravel_pytree(new.params)[0]))


def _train(agent, num_updates, *, masked=True, num_envs=16, length=8):
    # The runner's loop, bare: unroll with the acting parameters, update.
    env = MaskedProbeEnv(masked)

    def step(carry, key):
        state, actor = carry
        key_unroll, key_update = jax.random.split(key)
        acting = agent.acting_params(state)
        actor, traj = unroll(env, (), agent, acting, actor, key_unroll, length)
        state, _ = agent.update(state, traj._replace(info={}), key_update)
        return (state, actor), traj.info["illegal"].sum()

    @jax.jit
    def run(key):
        key_init, key_reset, key_run = jax.random.split(key, 3)
        ids = jnp.arange(num_envs, dtype=jnp.int32)
        carry = (agent.init(key_init), reset_actors(env, (), key_reset, ids))
        keys = jax.random.split(key_run, num_updates)
        (state, _), illegal = jax.lax.scan(step, carry, keys)
        return state, illegal.sum()

    return run(jax.random.key(0))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("masked", [True, False], ids=["masked", "unmasked"])
def test_ppo_learns_the_best_legal_action(masked):
    # Best legal actions: 2 at even steps, 1 at odd ones (where 2 is illegal
    # but pays 2). Unmasked, the same learner takes the illegal action 2.
    agent, network = _agent("ppo", masked, learning_rate=3e-3, anneal_lr=False)
    state, illegal = _train(agent, 60, masked=masked)
    greedy = mode_action(network)(state.params, _env_obs(masked))
    if masked:
        assert int(illegal) == 0
        np.testing.assert_array_equal(greedy, [2, 1, 2, 1])
    else:
        assert int(illegal) > 0
        np.testing.assert_array_equal(greedy, [2, 2, 2, 2])


@pytest.mark.timeout(120)
def test_dqn_learns_the_legal_q_values():
    # Q*(t, a) = r(a) + γ V*(t + 1) over legal actions, with γ = 0.5 and
    # V*(4) = 0 (termination): V*(3) = 1, V*(2) = 2 + γ V*(3) = 2.5,
    # V*(1) = 1 + γ V*(2) = 2.25, V*(0) = 2 + γ V*(1) = 3.125. A target that
    # bootstrapped from the illegal action 2 at odd steps would differ.
    agent, network = _agent(
        "dqn", learning_rate=3e-3, min_replay=128, updates_per_step=4,
        target_every=1, target_tau=0.05, epsilon_fraction=0.3,
    )  # fmt: skip
    state, illegal = _train(agent, 250, length=4)
    assert int(illegal) == 0
    v_next = [2.25, 2.5, 1.0, 0.0]
    q_star = np.asarray(MASKED_PROBE_REWARDS)[None] + 0.5 * np.asarray(v_next)[:, None]
    q = np.asarray(network.apply(state.params, _env_obs())[0])
    legal = np.asarray(MaskedProbeEnv().legal(_env_obs()))
    np.testing.assert_allclose(q[legal], q_star[legal], atol=0.05)
    assert np.all(np.isneginf(q[~legal]))
    np.testing.assert_array_equal(
        mode_action(network)(state.params, _env_obs()), [2, 1, 2, 1]
    )


def test_what_cannot_mask_refuses_a_masked_env():
    # Wrappers that change observations would change what `legal` reads.
    with pytest.raises(ValueError, match="hide_observations"):
        HideObservations(MaskedProbeEnv(), (0,)).action_spec(())
    with pytest.raises(ValueError, match="normalize_observations"):
        env = envs.NormalizeObservation(MaskedProbeEnv())
        env.action_spec(env.default_params)
    # Unwrapped, or without a mask, nothing changes.
    assert HideObservations(MaskedProbeEnv(False), (0,)).action_spec(()) == (
        envs.Discrete(3)
    )


def test_a_loaded_policy_masks_with_its_environments_legal(monkeypatch):
    # policy.json names the environment; `legal` is code, so loading makes
    # the environment again (here a registered device env) and reads it.
    from purejaxdrl.env import registry
    from purejaxdrl.training.policy.spaces import policy_spaces

    monkeypatch.setitem(registry._FACTORIES, "MaskedProbe-test", MaskedProbeEnv)
    spec = {"env_id": "MaskedProbe-test", "observation_shape": [7]}
    _, action = policy_spaces({**spec, "action": {"discrete": 3, "masked": True}})
    obs = _env_obs()
    np.testing.assert_array_equal(action.legal(obs), MaskedProbeEnv().legal(obs))
    _, plain = policy_spaces({**spec, "action": {"discrete": 3}})  # before masks
    assert plain == envs.Discrete(3)


@pytest.mark.parametrize("core", ["gru", "lstm", "mingru"])
def test_recurrent_networks_mask_each_output_with_the_observation_it_answers(core):
    # The heads see the core's output, so the mask comes from the observation
    # of the same step: unroll and step with `obs`, the final outputs with
    # `final_obs` (here the episode backwards: other steps' masks).
    spec = MaskedProbeEnv().action_spec(())
    config = pjd.NetworkConfig(hidden_sizes=(16,), core=core, core_size=8)
    obs = _env_obs()[:, None]  # [T=4, B=1, 7]
    final_obs = obs[::-1]
    reset = jnp.zeros((4, 1), bool).at[0].set(True)
    legal = np.asarray(MaskedProbeEnv().legal(obs))
    legal_final = np.asarray(MaskedProbeEnv().legal(final_obs))
    for q_values in (False, True):
        if q_values:
            net = make_q_network(config, OBS_SPEC, spec, dueling=True)
        else:
            net = make_actor_critic(config, OBS_SPEC, spec)
        params = net.init(jax.random.key(0), OBS)
        start = net.initial_state(1)
        _, (head, value) = net.unroll(params, start, obs, reset)
        outputs, (final, final_value) = net.unroll_final(
            params, start, obs, reset, final_obs
        )
        np.testing.assert_array_equal(outputs[0], head)
        heads = [(head, value, legal), (final, final_value, legal_final)]
        final_only = net.final_outputs(params, start, obs, reset, final_obs)
        heads.append((*final_only, legal_final))
        for h, v, mask in heads:
            h = np.asarray(h)
            assert np.all(np.isneginf(h[~mask])) and np.all(np.isfinite(h[mask]))
            if q_values:  # max Q over the legal actions only
                np.testing.assert_array_equal(v, np.where(mask, h, -np.inf).max(-1))
        # One step at a time: the same masked outputs.
        state, steps = start, []
        for t in range(4):
            state, (h, _) = net.step(params, state, obs[t], reset[t])
            steps.append(h)
        np.testing.assert_allclose(np.stack(steps), head, rtol=1e-5, atol=1e-6)


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("algo", "core"),
    [("ppo", "gru"), ("r2d2", "lstm"), ("pqn", "none")],
    ids=["ppo-gru", "r2d2", "pqn"],
)
def test_learners_respect_the_mask_end_to_end(monkeypatch, algo, core):
    # The library's pipeline, with a recurrent core (PPO, R2D2) or without
    # (PQN): with the mask an episode returns at most 2 + 1 + 2 + 1 = 6 (8
    # only through the illegal action); the greedy policy learned (R2D2 and
    # PQN: their ε-greedy actors too, from ε = 1) never takes an illegal
    # action, and the learners' metrics stay finite.
    from purejaxdrl.env import registry
    from purejaxdrl.observe.evaluation import make_evaluate

    monkeypatch.setitem(registry._FACTORIES, "MaskedProbe-test", MaskedProbeEnv)
    overrides = {
        "ppo": {"ppo": {"learning_rate": 3e-3, "anneal_lr": False}},
        "r2d2": {"r2d2": {"min_replay": 64, "n_step": 2, "buffer_size": 512}},
        "pqn": {"pqn": {"num_minibatches": 1}},
    }[algo]
    config = pjd.apply_overrides(
        pjd.TrainConfig(),
        {
            "algo": algo, "env": {"id": "MaskedProbe-test"}, "devices": 1,
            "num_envs": 8, "unroll_length": 4, "total_steps": 8 * 4 * 60,
            "network": {"hidden_sizes": [32], "core": core, "core_size": 16},
            **overrides,
        },
    )  # fmt: skip
    exp = pjd.training.make_experiment(config)
    state, metrics = exp.runner.chunk(60)(exp.runner.init(jax.random.key(0)))
    metrics = jax.device_get(metrics)
    returns = metrics["episode/return_sum"] / np.maximum(metrics["episode/count"], 1)
    assert np.all(returns <= 6.0 + 1e-5), returns
    assert all(np.all(np.isfinite(v)) for v in metrics.values()), metrics
    evaluate = make_evaluate(exp.env, exp.network, episodes=4, max_steps=16)
    result = evaluate(state.agent.params, state.env_params, jax.random.key(1))
    assert np.all(np.asarray(result.returns) <= 6.0 + 1e-5), result.returns


@pytest.mark.timeout(180)
def test_a_training_run_of_the_library_respects_the_mask_end_to_end(monkeypatch):
    # The real pipeline on 2 devices: the env registry, the experiment's
    # networks from the env's specs, the Anakin runner, greedy evaluation.
    # With the mask an episode returns at most 2 + 1 + 2 + 1 = 6 (8 only by
    # taking action 2 where illegal); the learned greedy policy returns 6.
    from purejaxdrl.env import registry
    from purejaxdrl.observe.evaluation import make_evaluate

    # Registered for this test only.
    monkeypatch.setitem(registry._FACTORIES, "MaskedProbe-test", MaskedProbeEnv)
    config = pjd.apply_overrides(
        pjd.TrainConfig(),
        {
            "algo": "ppo", "env": {"id": "MaskedProbe-test"}, "devices": 2,
            "num_envs": 8, "unroll_length": 8, "total_steps": 8 * 8 * 40,
            "ppo": {"learning_rate": 3e-3, "anneal_lr": False},
            "network": {"hidden_sizes": [32, 32]},
        },
    )  # fmt: skip
    exp = pjd.training.make_experiment(config)
    state, metrics = exp.runner.chunk(40)(exp.runner.init(jax.random.key(0)))
    returns = metrics["episode/return_sum"] / metrics["episode/count"]
    assert np.all(np.asarray(returns) <= 6.0 + 1e-5), returns
    evaluate = make_evaluate(exp.env, exp.network, episodes=4, max_steps=16)
    result = evaluate(state.agent.params, state.env_params, jax.random.key(1))
    np.testing.assert_allclose(result.returns, 6.0)
