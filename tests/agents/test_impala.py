import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import IMPALAConfig, IMPALAState, RunShape, make_impala
from purejaxdrl.agents.impala import validate
from purejaxdrl.config import ConfigError
from purejaxdrl.setup_warnings import forget_warnings
from purejaxdrl.types import Transition
from tests.agents.helpers import (
    assert_update_is_the_same_on_two_devices,
    batch,
    experiment,
    flat,
    learner,
    numpy_lambda_returns,
    setup,
)
from tests.rl.test_vtrace import paper_vtrace

# SGD without clipping or annealing: one update is exactly params - lr * grad.
PLAIN_SGD = {
    "optimizer": "sgd",
    "anneal_lr": False,
    "learning_rate": 0.1,
    "max_grad_norm": 1e9,
}


def _behaviour(params):
    # Scaled-up weights: a policy far from the learner's near-uniform initial
    # one, so that the importance weights matter.
    return jax.tree.map(lambda p: 20.0 * p, params)


# The policy gradient's clip apart from the value targets' one; without the
# correction, thresholds below 1 that must not matter (ρ = c = 1).
CLIPS = {True: (1.1, 0.9, 0.95), False: (0.5, 0.5, 0.5)}


@pytest.mark.parametrize("correction", [True, False])
def test_update_is_one_sgd_step_on_the_papers_loss(correction):
    _, network, _ = setup()
    build, init, update = learner("impala")
    clip_rho, clip_c, clip_pg_rho = CLIPS[correction]
    config = IMPALAConfig(
        **PLAIN_SGD,
        gamma=0.9,
        vtrace_lambda=0.95,
        vtrace_correction=correction,
        clip_rho=clip_rho,
        clip_c=clip_c,
        clip_pg_rho=clip_pg_rho,
        entropy_cost=0.01,
        value_cost=0.5,
    )
    state = init(config, jax.random.key(0))
    traj = batch(_behaviour(state.params))
    assert (traj.discount == 0).any()  # terminations inside the batch
    # A time-limit truncation at step 5 of env 1: it bootstraps from V(x'5),
    # which a real time limit makes differ from the next observation acted on.
    assert traj.discount[5, 1] == 1.0
    # And a time limit on a terminating step (a user env may emit both): the
    # termination wins, no bootstrap.
    t_end, b_end = np.argwhere(np.asarray(traj.discount) == 0)[0]
    traj = traj._replace(
        truncated=traj.truncated.at[5, 1].set(True).at[t_end, b_end].set(True),
        final_observation=traj.final_observation.at[5, 1].add(0.5),
    )
    new_state, metrics = update(config, state, traj, jax.random.key(2))

    # By hand: V-trace targets from the NumPy reference on the learner's values
    # of observations and final observations, then the paper's loss.
    dist = network.distribution
    policy, v = network.apply(state.params, traj.observation)
    v_next = network.apply(state.params, traj.final_observation)[1]
    log_rho = np.asarray(dist.log_prob(policy, traj.action) - traj.log_prob)
    assert np.abs(log_rho).max() > 0.1
    rho = np.exp(log_rho)
    assert ((rho > 0.95) & (rho < 1.1)).any() and (rho > 1.1).any()
    if correction:  # the paper's V-trace, ρ̄ = 1.1, c̄ = 0.9, ρ̄_pg = 0.95
        target, adv = _paper_targets(v, v_next, traj, log_rho, 0.9, 0.95)
    else:  # ρ = c = 1 whatever the thresholds: λ-returns
        target, adv = _lambda_return_targets(v, v_next, traj, 0.9, 0.95)
    target, adv = jnp.asarray(target, jnp.float32), jnp.asarray(adv, jnp.float32)

    def loss(params):
        policy, v = network.apply(params, traj.observation)
        log_prob = dist.log_prob(policy, traj.action)
        pg = -jnp.mean(log_prob * adv)
        baseline = 0.5 * jnp.mean(jnp.square(v - target))
        entropy = jnp.mean(dist.entropy(policy, None))
        return pg + 0.5 * baseline - 0.01 * entropy

    grad = jax.jit(jax.grad(loss))(state.params)
    expected = flat(state.params) - 0.1 * flat(grad)
    np.testing.assert_allclose(flat(new_state.params), expected, atol=2e-6)
    np.testing.assert_allclose(metrics["loss/total"], loss(state.params), rtol=1e-5)


def _paper_targets(v, v_next, traj, log_rho, gamma, lam):
    """V-trace targets and advantages of `paper_vtrace`, column by column."""
    columns = [
        paper_vtrace(
            *(np.asarray(x)[:, b] for x in (v, v_next, traj.reward)),
            gamma * np.asarray(traj.discount[:, b]),
            log_rho[:, b],
            np.asarray(traj.truncated[:, b]),
            lam,
            *CLIPS[True][:2],
            rho_pg_bar=CLIPS[True][2],
        )
        for b in range(traj.reward.shape[1])
    ]
    return (np.stack([c[i] for c in columns], 1) for i in (0, 1))


def _lambda_return_targets(v, v_next, traj, gamma, lam):
    """ρ = c = 1: λ-returns G, A_s = r_s + γ_s G_{s+1} - V(x_s) (V(x'_s) at ends)."""
    v, v_next, r = (np.asarray(x, np.float64) for x in (v, v_next, traj.reward))
    disc, truncated = gamma * np.asarray(traj.discount), np.asarray(traj.truncated)
    g = numpy_lambda_returns(r, disc, truncated, v, v_next, lam)
    last = truncated | (np.arange(len(r)) == len(r) - 1)[:, None]  # episode ends
    g_next = np.where(last, v_next, np.roll(g, -1, axis=0))
    return g, r + disc * g_next - v


def test_lag_zero_acts_with_the_learners_params_on_policy():
    config = IMPALAConfig(**PLAIN_SGD)
    build, init, update = learner("impala")
    state = init(config, jax.random.key(0))
    assert state.past_params.shape[0] == 0
    assert build(config).acting_params(state) is state.params
    # Data from the learner's own parameters: every importance weight is 1.
    _, metrics = update(config, state, batch(state.params), jax.random.key(1))
    assert abs(float(metrics["approx_kl"])) < 1e-8
    assert float(metrics["vtrace/rho_mean"]) == pytest.approx(1.0, abs=1e-5)


def test_no_correction_is_plain_actor_critic_on_the_same_data():
    _, network, _ = setup()
    build, init, update = learner("impala")
    learner_params = init(IMPALAConfig(**PLAIN_SGD), jax.random.key(0)).params
    traj = batch(_behaviour(learner_params))
    policy, _ = jax.jit(network.apply)(learner_params, traj.observation)
    own = traj._replace(log_prob=network.distribution.log_prob(policy, traj.action))

    # The flag changes no state: both configs start from the same one.
    state = init(IMPALAConfig(**PLAIN_SGD), jax.random.key(0))

    def updated(correction, traj):
        config = IMPALAConfig(**PLAIN_SGD, vtrace_correction=correction)
        return flat(update(config, state, traj, jax.random.key(2))[0].params)

    # Ignoring the importance weights is the same as pretending the data is
    # on-policy ...
    np.testing.assert_allclose(updated(False, traj), updated(True, own), atol=1e-6)
    # ... which the correction does not do.
    assert np.abs(updated(True, traj) - updated(False, traj)).max() > 1e-4


@pytest.mark.timeout(300)
def test_runner_acts_with_the_lagged_params_cnn_torso():
    # Through the runner with policy_lag 2, on MinAtar with the CNN torso: the
    # transitions' log-probs are the acting parameters', which are the
    # learner's own only at update 0.
    exp = experiment(
        "impala",
        env={"id": "Breakout-MinAtar"},
        network={"torso": "cnn", "shared_torso": True, "hidden_sizes": [32]},
        impala={"policy_lag": 2},
    )
    state = exp.runner.init(jax.random.key(0))
    _, metrics = exp.runner.chunk(3)(state)
    assert np.isfinite(metrics["loss/total"]).all()
    kl = np.asarray(metrics["approx_kl"])
    assert abs(kl[0]) < 1e-8 and (kl[1:] > 1e-8).all(), kl
    np.testing.assert_allclose(metrics["vtrace/rho_mean"][0], 1.0, atol=1e-5)


def test_data_parallel_update_equals_one_device():
    # Each device differentiates its share of the batch; gradients and metrics
    # are averaged over the `data` axis: the same update as on one device.
    config = IMPALAConfig(**PLAIN_SGD)
    _, init, _ = learner("impala")
    state = init(config, jax.random.key(0))
    traj = batch(_behaviour(state.params))
    assert_update_is_the_same_on_two_devices(
        "impala", config, state, traj, jax.random.key(1), metrics_atol=1e-7
    )


def _pendulum_batch(behaviour, seed=0, length=16, num_envs=8):
    """Synthetic transitions in Pendulum's spaces (obs [3], action [1]) with
    terminations, truncations and the behaviour log-probs of `behaviour`."""
    _, network, _ = setup("Pendulum-v1")
    rng = np.random.default_rng(seed)
    shape = (length, num_envs)
    obs = rng.normal(size=(length + 1, num_envs, 3)).astype(np.float32)
    action = rng.normal(size=(*shape, 1)).astype(np.float32)  # u, before tanh
    policy, _ = jax.jit(network.apply)(behaviour, obs[:-1])
    discount = (rng.random(shape) > 0.1).astype(np.float32)
    return Transition(
        observation=obs[:-1],
        action=action,
        reward=rng.normal(size=shape).astype(np.float32),
        discount=discount,
        truncated=(rng.random(shape) < 0.1) & (discount == 1),
        log_prob=network.distribution.log_prob(policy, action),
        value=np.zeros(shape, np.float32),
        bootstrap_value=np.zeros(shape, np.float32),
        final_observation=obs[1:],
        info={},
    )


def test_actors_act_with_the_params_of_k_updates_earlier_continuous():
    # Tanh-Gaussian policy (Pendulum's spaces), policy lag 3, Adam: each
    # update learns from the data of the acting parameters, K updates old.
    lag = 3
    config = IMPALAConfig(policy_lag=lag, optimizer="adam", eps=1e-5)
    build, init, update = learner("impala", "Pendulum-v1")
    agent = build(config)
    state = init(config, jax.random.key(0))
    assert isinstance(state, IMPALAState)
    assert state.past_params.shape[0] == lag
    history = [flat(state.params)]  # history[n]: the parameters after n updates
    kl = []
    for n in range(7):
        # For the first K updates the actors use the initial parameters.
        acting = agent.acting_params(state)
        np.testing.assert_array_equal(flat(acting), history[max(0, n - lag)])
        traj = _pendulum_batch(acting, seed=n)
        state, metrics = update(config, state, traj, jax.random.key(n))
        assert np.isfinite(metrics["loss/total"])
        kl.append(float(metrics["approx_kl"]))
        history.append(flat(state.params))
        if n == 0:
            traces = update._cache_size()
    assert update._cache_size() == traces  # no retrace from update to update
    # On-policy at update 0 only; afterwards the actors lag behind the learner.
    assert abs(kl[0]) < 1e-8 and min(kl[1:]) > 1e-8, kl


def test_factory_validates_eagerly():
    _, network, obs = setup()
    with pytest.raises(ValueError, match="impala.policy_lag=-1 must be >= 0"):
        make_impala(IMPALAConfig(policy_lag=-1), network, obs, RunShape())
    with pytest.raises(ValueError, match="impala.optimizer='lamb' is not one of"):
        make_impala(IMPALAConfig(optimizer="lamb"), network, obs, RunShape())
    with pytest.raises(ValueError, match=r"impala.rms_decay=1.0 must be in \[0, 1\)"):
        make_impala(IMPALAConfig(rms_decay=1.0), network, obs, RunShape())
    with pytest.raises(ValueError, match="num_updates=0"):
        make_impala(IMPALAConfig(), network, obs, RunShape(num_updates=0))


def test_replay_ratio_half_adds_as_many_replayed_trajectories_as_fresh():
    # One device, 8 environments x 16 steps, replay ratio 0.5: the learner's
    # batch is the 8 fresh trajectories plus 8 drawn from the buffer, which
    # after one update holds exactly the 8 fresh ones.
    _, network, obs = setup()
    config = IMPALAConfig(**PLAIN_SGD, replay_ratio=0.5, replay_size=32)
    run = RunShape(num_envs=8, unroll_length=16, num_updates=10)
    agent = make_impala(config, network, obs, run)
    plain = make_impala(
        IMPALAConfig(**PLAIN_SGD), network, obs, RunShape(num_updates=10)
    )
    state = agent.init(jax.random.key(0))
    # Items are (steps, start state); a feed-forward actor has no start state.
    assert state.buffer.items[0].observation.shape == (32, 16, 4)
    assert state.buffer.items[1] == ()
    traj = batch(_behaviour(state.params))
    key = jax.random.key(2)
    new_state, _ = jax.jit(agent.update)(state, traj, key)
    np.testing.assert_array_equal(new_state.buffer.size, [8])
    np.testing.assert_array_equal(new_state.buffer.items[0].reward[:8], traj.reward.T)

    # The same step as the plain learner on fresh + replayed columns (the
    # replay draws with the second half of the update's key).
    key, key_replay = jax.random.split(key)
    drawn = jax.random.randint(key_replay, (8,), 0, 8)
    mixed = jax.tree.map(lambda x: jnp.concatenate([x, x[:, drawn]], 1), traj)
    plain_state = IMPALAState(*state[:4])
    expected, _ = jax.jit(plain.update)(plain_state, mixed, key)
    np.testing.assert_allclose(
        flat(new_state.params), flat(expected.params), rtol=1e-6, atol=1e-6
    )


@pytest.mark.parametrize(("devices", "per_device"), [(1, 32), (2, 16), (4, 8)])
def test_replay_size_counts_the_trajectories_of_all_devices(devices, per_device):
    # `replay_size` is what the buffer holds over all devices: each device's
    # shard holds replay_size / devices trajectories (of unroll_length steps).
    _, network, obs = setup()
    config = IMPALAConfig(replay_ratio=0.5, replay_size=32)
    run = RunShape(num_envs=8, unroll_length=16, num_devices=devices, num_updates=10)
    state = make_impala(config, network, obs, run).init(jax.random.key(0))
    assert state.buffer.items[0].observation.shape == (per_device, 16, 4)


@pytest.mark.parametrize(
    ("ratio", "num_envs", "devices", "achieved"),
    [
        (0.05, 8, 1, "0.111"),  # round(0.42) -> 1 replayed of 9
        (0.25, 8, 8, "0.5"),  # 0.27 on one device, 1 of 2 on eight
        (0.2, 8, 4, "0.333"),  # round(0.5) = 0, raised to 1 of 3
    ],
)
def test_replay_ratio_that_rounding_moves_is_said(ratio, num_envs, devices, achieved):
    # The replayed count is rounded per device: the fraction replayed is
    # `achieved`, not `ratio`; said once (a warning: eval, export and resume
    # of a run trained so read the config back), naming it.
    forget_warnings()
    config = IMPALAConfig(replay_ratio=ratio, replay_size=64)
    run = RunShape(num_envs=num_envs, num_devices=devices, num_updates=4)
    with pytest.warns(UserWarning) as said:
        validate(config, run)
        validate(config, run)
    (warning,) = said
    message = str(warning.message)
    assert f"impala.replay_ratio={ratio} with {num_envs // devices} " in message
    assert f"--impala.replay-ratio {achieved} to train" in message
    assert "\n" not in message
    # The ratio it names is achievable on that run.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        validate(IMPALAConfig(replay_ratio=float(achieved), replay_size=64), run)


@pytest.mark.parametrize(
    ("ratio", "num_envs", "devices"),
    [(0.5, 8, 8), (0.25, 8, 1), (0.05, 19, 1), (0.75, 2, 2), (0.9999999, 8, 1)],
)
def test_replay_ratio_within_ten_percent_after_rounding_is_quiet(
    ratio, num_envs, devices
):
    # 8 envs at 0.25: 3 of 11 (0.273, 9% off); 19 at 0.05: 1 of 20 exactly.
    forget_warnings()
    run = RunShape(num_envs=num_envs, num_devices=devices, num_updates=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        validate(IMPALAConfig(replay_ratio=ratio, replay_size=64), run)


@pytest.mark.timeout(300)
def test_replay_on_continuous_actions_trains_with_finite_metrics():
    # Pendulum's Box(1) actions with replay ratio 0.5: the buffer must store the
    # policy's float32 [1] pre-squash samples, not a discrete policy's int32 [].
    exp = experiment(
        "impala",
        env={"id": "Pendulum-v1"},
        network={"hidden_sizes": [16]},
        impala={"replay_ratio": 0.5, "replay_size": 16},
    )
    state, metrics = exp.runner.chunk(2)(exp.runner.init(jax.random.key(0)))
    for name, value in metrics.items():
        assert np.isfinite(np.asarray(value)).all(), name
    steps = state.agent.buffer.items[0]
    assert steps.action.dtype == jnp.float32
    assert steps.action.shape[-2:] == (8, 1)  # [..., T, A]: one unroll each
    np.testing.assert_array_equal(np.asarray(state.agent.buffer.size).sum(), 16)
    assert np.abs(np.asarray(steps.action)).max() > 0  # sampled, not the zeros


def test_policy_lag_on_a_host_environment_is_one_line_and_exit_2(capsys):
    # The host-env runner's actors lag by themselves and its lag/mean and
    # lag/max count the versions it publishes: K more updates of lag would
    # act unseen there, so it takes no policy lag.
    from purejaxdrl import cli

    argv = ["train", "--no-files", "--algo", "impala", "--env", "cartpole"]
    argv += ["--env.id", "gymnasium:CartPole-v1", "--impala.policy-lag", "4"]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == (
        "purejaxdrl: error: impala.policy_lag=4 is for device environments: the "
        "host-env runner (env.id='gymnasium:CartPole-v1') lags by itself, and its "
        "lag/mean and lag/max would not count these 4 updates; pass "
        "--impala.policy-lag 0 (impala.policy_lag=0 in Python).\n"
    )


def test_policy_lag_stays_for_device_runs_and_saved_host_runs():
    from purejaxdrl.training.config import validate as validate_run

    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "impala").config, {"impala": {"policy_lag": 4}}
    )
    validate_run(config)  # a device environment: the lag is simulated there
    host = pjd.apply_overrides(config, {"env": {"id": "gymnasium:CartPole-v1"}})
    with pytest.raises(ConfigError, match=r"^impala.policy_lag=4 is for device"):
        validate_run(host)
    # A run trained so before the rule still reads back (eval, export).
    validate_run(host, budget=False)
    validate_run(pjd.apply_overrides(host, {"impala": {"policy_lag": 0}}))
