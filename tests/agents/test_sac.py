"""SAC: stored transitions, the temperature's direction, replay shards, a step."""

import functools
import re

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import RunShape, sac
from purejaxdrl.agents.sac import SACConfig, Stored, make_sac
from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import Box
from purejaxdrl.networks import NetworkConfig, make_sac_networks, torsos
from purejaxdrl.replay import make_uniform_buffer
from purejaxdrl.rl.distributions import LOG_STD_MAX, LOG_STD_MIN
from purejaxdrl.training.presets.load import presets_dir
from purejaxdrl.types import Transition

NETS = make_sac_networks(NetworkConfig(hidden_sizes=(16,)), Box((3,)), Box((2,)))


def _agent(**config):
    config = SACConfig(buffer_size=64, batch_size=8, min_replay=8, **config)
    return make_sac(config, NETS, np.zeros(3, np.float32), RunShape(num_updates=10))


def _traj(t=4, b=2, truncated=None, discount=None):
    obs = jnp.arange(t * b * 3, dtype=jnp.float32).reshape(t, b, 3) / 10
    ones = jnp.ones((t, b))
    return Transition(
        observation=obs,
        action=jnp.full((t, b, 2), 0.5),
        reward=ones,
        discount=ones if discount is None else discount,
        truncated=jnp.zeros((t, b), bool) if truncated is None else truncated,
        log_prob=0 * ones,
        value=0 * ones,
        bootstrap_value=0 * ones,
        final_observation=obs + 100.0,  # distinguishable from any observation
        info={},
    )


def test_transitions_bootstrap_from_final_observations_unless_terminated():
    agent = _agent()
    state = agent.init(jax.random.key(0))
    truncated = jnp.zeros((4, 2), bool).at[1, 0].set(True)
    discount = jnp.ones((4, 2)).at[2, 1].set(0.0)
    state, _ = agent.update(state, _traj(truncated=truncated, discount=discount),
                            jax.random.key(1))  # fmt: skip
    stored = jax.tree.map(lambda x: np.asarray(x[:8]), state.buffer.items)
    traj = _traj()
    # Time-major flattening: slot 2 is (t=1, env 0), truncated: it keeps
    # discount 1 and its final observation; slot 5 is (t=2, env 1), terminated.
    np.testing.assert_array_equal(
        stored.next_observation, np.asarray(traj.final_observation).reshape(8, 3)
    )
    np.testing.assert_array_equal(stored.discount, [1, 1, 1, 1, 1, 0, 1, 1])
    # The critics see the squashed action the environment received.
    np.testing.assert_allclose(stored.action, np.tanh(0.5), rtol=1e-6)


@pytest.mark.parametrize(("scale", "direction"), [(-5.0, 1), (5.0, -1)])
def test_temperature_moves_towards_the_target_entropy(scale, direction):
    # Target entropy -scale x |A|: a very low target (scale 5) lets α fall,
    # a very high one (scale -5) makes it rise.
    agent = _agent(target_entropy_scale=scale, learning_rate=1e-2)
    state = agent.init(jax.random.key(0))
    update = jax.jit(agent.update)
    for i in range(20):
        state, metrics = update(state, _traj(), jax.random.key(i))
    moved = float(state.log_alpha) - 0.0  # log α starts at log 1 = 0
    assert moved * direction > 0 and int(state.grad_steps) == 20
    assert np.isfinite(metrics["loss/critic"])


@pytest.mark.timeout(300)
def test_replay_shards_on_two_devices_and_learning_starts():
    config = pjd.load_preset("inverted_pendulum", "sac").config
    config = pjd.apply_overrides(config, {
        # gymnax's Pendulum: continuous like brax's, compiled in seconds.
        "env": {"id": "Pendulum-v1", "options": {}},
        "devices": 2, "num_envs": 4, "unroll_length": 4, "total_steps": 16 * 6,
        "network": {"hidden_sizes": [16]},
        "sac": {"buffer_size": 128, "batch_size": 16, "min_replay": 48,
                "updates_per_step": 2},
    })  # fmt: skip
    exp = pjd.training.make_experiment(config)
    state, metrics = exp.runner.chunk(6)(exp.runner.init(jax.random.key(0)))
    ring = state.agent.buffer
    np.testing.assert_array_equal(ring.size, [48, 48])
    obs = np.asarray(ring.items.observation).reshape(2, 64, -1)
    assert not np.array_equal(obs[0, :48], obs[1, :48])
    # 8 transitions per device per update: min_replay's 24 per device are
    # stored after update 3, which takes the first 2 gradient steps.
    np.testing.assert_array_equal(metrics["learner/grad_steps"], [0, 0, 2, 4, 6, 8])


def test_the_inverted_pendulum_presets_comment_states_its_replay_ratio():
    # An update acts num_envs x unroll_length env steps, then takes
    # updates_per_step gradient steps; the comment once said 4x as many.
    config = pjd.load_preset("inverted_pendulum", "sac").config
    text = (presets_dir() / "inverted_pendulum.yaml").read_text()
    stated = re.findall(r"1 gradient step per (\d+) env steps", text)
    per_update = config.num_envs * config.unroll_length
    assert stated == [str(per_update // config.sac.updates_per_step)]


def test_the_policys_std_is_bounded_and_starts_near_0_22_as_the_docs_say():
    # docs/guide/replay.md and environments.md: σ = exp(log σ), log σ in
    # [-5, 2], and a fresh actor (output layer at scale 0.01) starts every
    # dimension near log σ = -1.5, σ ≈ 0.22 (brax's starts near 0.7).
    np.testing.assert_allclose(np.exp([LOG_STD_MIN, LOG_STD_MAX]), [0.0067, 7.4], 0.01)
    config = NetworkConfig(hidden_sizes=(256, 256), activation="relu")
    nets = make_sac_networks(config, Box((17,)), Box((6,)))
    obs = jax.random.normal(jax.random.key(1), (64, 17))
    _, raw = np.split(
        np.asarray(nets.actor(nets.init_actor(jax.random.key(0), obs), obs)), 2, -1
    )
    # The std the distribution uses (the loss test below checks its density).
    std = np.exp(LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (np.tanh(raw) + 1))
    assert std.min() > 0.21 and std.max() < 0.235


def test_sac_learning_rate_help_does_not_mention_a_decay_sac_lacks(capsys):
    # SAC's rate is constant and it has no anneal_lr (the flag is refused).
    from purejaxdrl import cli

    with pytest.raises(SystemExit):
        cli.main(["train", "--algo", "sac", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    listing = out[out.index("config fields:") :]
    entry = listing[listing.index("--sac.learning-rate ") :]
    entry = entry[: entry.index("(default: ")]
    assert "step size" in entry and "anneal" not in entry, entry
    assert "--sac.anneal-lr" not in out


def _numpy_policy_sample(actor, obs, key):
    """a = tanh(u), u = mean + std * noise, and log π(a|s) in float64.

    The density of a tanh-squashed Gaussian (Haarnoja et al., 2018, appendix
    C): Σ_j log N(u_j; mean_j, std_j) - log(1 - tanh(u_j)^2). Only the
    network's outputs and the key's noise come from JAX.
    """
    out = np.asarray(NETS.actor(actor, obs), np.float64)
    mean, raw = np.split(out, 2, axis=-1)
    log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (np.tanh(raw) + 1)
    noise = np.asarray(jax.random.normal(key, mean.shape), np.float64)
    u = mean + np.exp(log_std) * noise
    gauss = -0.5 * noise**2 - log_std - 0.5 * np.log(2 * np.pi)
    logp = np.sum(gauss - np.log(1.0 - np.tanh(u) ** 2), axis=-1)
    return np.tanh(u), logp


def test_losses_match_the_papers_soft_target_actor_and_temperature_losses():
    # Haarnoja et al. (2018): y = s r + γ d (min_i Q'_i(s', a') - α log π(a'|s')),
    # a' ~ π(.|s'), with d = 1 at a truncation (its s' is the final
    # observation) and 0 at a termination; J_π = E[α log π(a|s) - min_i Q_i(s, a)];
    # J(α) = -log α (log π + H̄). Distinct online and target critics.
    obs = jax.random.normal(jax.random.key(0), (4, 3))
    next_obs = jax.random.normal(jax.random.key(1), (4, 3))
    actor = NETS.init_actor(jax.random.key(2), obs)
    critic = NETS.init_critic(jax.random.key(3), obs, jnp.zeros((4, 2)))
    target = NETS.init_critic(jax.random.key(4), obs, jnp.zeros((4, 2)))
    # Items 0 and 3 end in a time limit (d = 1), item 1 terminates (d = 0).
    reward, discount = jnp.array([1.0, -2.0, 0.5, 3.0]), jnp.array([1.0, 0, 1, 1])
    item = Stored(obs, jnp.full((4, 2), 0.3), reward, discount, next_obs)
    config = SACConfig(gamma=0.9, reward_scale=2.5)
    alpha, key_next, key_new = 0.3, jax.random.key(5), jax.random.key(6)

    a_next, logp_next = _numpy_policy_sample(actor, next_obs, key_next)
    q_next = np.asarray(NETS.critic(target, next_obs, jnp.asarray(a_next, jnp.float32)))
    assert (np.argmin(q_next, -1) != np.argmax(q_next, -1)).all()
    soft = q_next.min(-1) - alpha * logp_next
    y = 2.5 * np.asarray(item.reward) + 0.9 * np.asarray(item.discount) * soft
    got_y = sac.soft_q_target(
        NETS, actor, target, item, jnp.float32(alpha), key_next, config
    )
    np.testing.assert_allclose(got_y, y, rtol=1e-5, atol=1e-5)
    assert float(got_y[1]) == pytest.approx(2.5 * -2.0)  # terminated: reward only

    q = np.asarray(NETS.critic(critic, obs, item.action))
    critic_want = 0.5 * np.mean(np.sum((q - y[:, None]) ** 2, axis=-1))
    got_critic = sac.critic_loss(critic, item, got_y, network=NETS)
    np.testing.assert_allclose(got_critic, critic_want, rtol=1e-5)

    a_new, logp_new = _numpy_policy_sample(actor, obs, key_new)
    q_new = np.asarray(NETS.critic(critic, obs, jnp.asarray(a_new, jnp.float32)))
    actor_want = np.mean(alpha * logp_new - q_new.min(-1))
    got_actor, got_logp = sac.actor_loss(
        actor, critic, item, jnp.float32(alpha), key_new, network=NETS
    )
    np.testing.assert_allclose(got_logp, logp_new, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_actor, actor_want, rtol=1e-5, atol=1e-5)

    log_alpha, entropy_target = jnp.float32(np.log(alpha)), -2.0
    alpha_want = -np.mean(np.log(alpha) * (logp_new + entropy_target))
    got_alpha = sac.alpha_loss(log_alpha, got_logp, entropy_target)
    np.testing.assert_allclose(got_alpha, alpha_want, rtol=1e-5)
    # Its gradient raises α while the entropy -log π is below the target.
    grad = jax.grad(sac.alpha_loss)(log_alpha, got_logp, entropy_target)
    np.testing.assert_allclose(grad, -np.mean(logp_new + entropy_target), rtol=1e-5)


def _one_update(**config):
    """Init's state, and one update's state and metrics (one gradient step)."""
    agent = _agent(**config)
    start = agent.init(jax.random.key(0))
    state, metrics = jax.jit(agent.update)(start, _traj(), jax.random.key(1))
    assert int(state.grad_steps) == 1
    return start, state, metrics


def _jax_policy_sample(actor, obs, key):
    """a = tanh(u), u = mean + std * noise, and log π(a|s): a JAX re-derivation.

    Written apart from `rl.distributions` (the plain density
    Σ_j log N(u_j; mean_j, std_j) - log(1 - tanh(u_j)^2), not its stable
    form), and in JAX so that it differentiates through the reparameterised
    sample.
    """
    mean, raw = jnp.split(NETS.actor(actor, obs), 2, axis=-1)
    log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (jnp.tanh(raw) + 1)
    noise = jax.random.normal(key, mean.shape)
    u = mean + jnp.exp(log_std) * noise
    gauss = -0.5 * noise**2 - log_std - 0.5 * np.log(2 * np.pi)
    return jnp.tanh(u), jnp.sum(gauss - jnp.log(1.0 - jnp.tanh(u) ** 2), axis=-1)


def _leaves_close(got, want, atol=1e-6):
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=0, atol=atol)


def test_one_update_is_adams_first_step_on_the_papers_losses_and_a_polyak_target():
    # One gradient step of the whole update, re-derived here without sac.py's
    # losses (Haarnoja et al., 2018): the soft target
    # y = s r + γ d (min_i Q'_i(s', a') - α log π(a'|s')) reads the *target*
    # critics; J_Q = ½ mean Σ_i (Q_i(s, a) - y)²; J_π = mean(α log π(a|s) -
    # min_i Q_i(s, a)) reads the *online* critics; J(α) = -log α mean(log π +
    # H̄). Adam's first step from zero moments (Kingma & Ba, 2015) has m̂ = g,
    # v̂ = g²: p - lr g / (|g| + 1e-8). Then the target moves τ of the way to
    # the new critics: τ Q_new + (1 - τ) Q'_old, τ != 0.5 so a swap shows.
    lr, tau, alpha, scale, gamma = 1e-2, 0.1, 0.5, 2.0, 0.9
    agent = _agent(
        learning_rate=lr, tau=tau, init_alpha=alpha, reward_scale=scale, gamma=gamma
    )
    start = agent.init(jax.random.key(0))
    # Target critics apart from the online ones, as after any training, so
    # that a loss reading the wrong critics gives other gradients.
    obs0 = jnp.zeros((1, 3))
    start = start._replace(
        target_critic=NETS.init_critic(jax.random.key(7), obs0, jnp.zeros((1, 2)))
    )
    state, metrics = jax.jit(agent.update)(start, _traj(), jax.random.key(1))
    assert int(state.grad_steps) == 1  # min_replay is one update's 8 items

    # The draws of the one gradient step: one key per step, on one device
    # split into (batch, next actions, new actions); the batch is sampled from
    # the buffer as the update left it (the 8 stored transitions).
    (key,) = jax.random.split(jax.random.key(1), 1)
    key_sample, key_next, key_new = jax.random.split(key, 3)
    item = make_uniform_buffer(64, 8).sample(state.buffer, key_sample).item
    hyper = {"lr": lr, "tau": tau, "alpha": alpha, "scale": scale, "gamma": gamma}
    want_state, want_metrics = _sac_step_by_hand(
        start.params, start.target_critic, item, key_next, key_new, **hyper
    )
    _leaves_close(state.params, want_state["params"])
    _leaves_close(state.target_critic, want_state["target_critic"])
    np.testing.assert_allclose(state.log_alpha, want_state["log_alpha"], rtol=1e-6)
    for name, want in want_metrics.items():  # this step's, with α before it
        np.testing.assert_allclose(metrics[name], want, rtol=1e-5, err_msg=name)


@functools.partial(jax.jit, static_argnames=("lr", "tau", "alpha", "scale", "gamma"))
def _sac_step_by_hand(params, target_critic, item, key_next, key_new, **hyper):
    """SAC's gradient step on one batch, for the test above (one compile)."""
    lr, tau, alpha = hyper["lr"], hyper["tau"], hyper["alpha"]
    actor, critic = params["actor"], params["critic"]
    a_next, logp_next = _jax_policy_sample(actor, item.next_observation, key_next)
    q_next = NETS.critic(target_critic, item.next_observation, a_next)
    soft = jnp.min(q_next, axis=-1) - alpha * logp_next
    y = hyper["scale"] * item.reward + hyper["gamma"] * item.discount * soft

    def critic_objective(critic):
        q = NETS.critic(critic, item.observation, item.action)
        return 0.5 * jnp.mean(jnp.sum((q - y[:, None]) ** 2, axis=-1))

    def actor_objective(actor):
        action, logp = _jax_policy_sample(actor, item.observation, key_new)
        q = jnp.min(NETS.critic(critic, item.observation, action), axis=-1)
        return jnp.mean(alpha * logp - q), logp

    def adam_first_step(params, grads):
        return jax.tree.map(
            lambda p, g: p - lr * g / (jnp.abs(g) + 1e-8), params, grads
        )

    loss_q, grad_q = jax.value_and_grad(critic_objective)(critic)
    (loss_pi, logp), grad_pi = jax.value_and_grad(actor_objective, has_aux=True)(actor)
    # J(α) = -log α mean(log π + H̄), H̄ = -|A| = -2: linear in log α.
    grad_log_alpha = -jnp.mean(logp - 2.0)
    new_critic = adam_first_step(critic, grad_q)
    state = {
        "params": {"actor": adam_first_step(actor, grad_pi), "critic": new_critic},
        "target_critic": jax.tree.map(
            lambda new, old: tau * new + (1 - tau) * old, new_critic, target_critic
        ),
        "log_alpha": adam_first_step(jnp.log(alpha), grad_log_alpha),
    }
    metrics = {
        "loss/critic": loss_q,
        "loss/actor": loss_pi,
        "loss/alpha": jnp.log(alpha) * grad_log_alpha,
        "alpha": alpha,
        "entropy": -jnp.mean(logp),
        "q/target_mean": jnp.mean(y),
    }
    return state, metrics


def test_before_min_replay_alpha_is_the_temperature_and_learner_metrics_are_0():
    # 8 transitions per update, min_replay 16: update 0 takes no gradient
    # step. α is still the temperature in force (never 0); the losses, the
    # entropy and the mean target read 0, which the logging guide says.
    agent = make_sac(
        SACConfig(buffer_size=64, batch_size=8, min_replay=16, init_alpha=0.5),
        NETS,
        np.zeros(3, np.float32),
        RunShape(num_updates=10),
    )
    state = agent.init(jax.random.key(0))
    update = jax.jit(agent.update)
    state, before = update(state, _traj(), jax.random.key(0))
    assert int(state.grad_steps) == 0
    assert float(before["alpha"]) == pytest.approx(0.5)
    for name in ("loss/critic", "loss/actor", "loss/alpha", "entropy", "q/target_mean"):
        assert float(before[name]) == 0.0, name
    state, after = update(state, _traj(), jax.random.key(1))
    assert int(state.grad_steps) == 1
    assert float(after["alpha"]) == pytest.approx(0.5)  # the step's, before it
    assert float(after["entropy"]) != 0.0 and float(after["q/target_mean"]) != 0.0


def test_alpha_learning_rate_is_the_temperatures_adam_step_alone():
    # With log α₀ = 1 (α₀ = e), J(α) = -log α mean(log π + H̄) has the
    # gradient g = -mean(log π + H̄) = J / log α₀. Adam's first step from
    # zero moments (Kingma & Ba, 2015) has m̂ = g and v̂ = g², so it moves
    # log α by -lr g / (|g| + ε), ε = 1e-8: here -0.05 sign(g), where the
    # learning rate, 1e-3, would move it 50 times less.
    lr, alpha_lr = 1e-3, 0.05
    start, state, metrics = _one_update(
        learning_rate=lr, alpha_learning_rate=alpha_lr, init_alpha=float(np.e)
    )
    log_alpha0 = float(start.log_alpha)
    g = float(metrics["loss/alpha"]) / log_alpha0
    want = log_alpha0 - alpha_lr * g / (abs(g) + 1e-8)
    np.testing.assert_allclose(float(state.log_alpha), want, rtol=1e-6)
    adam = optax.adam(alpha_lr)
    step, _ = adam.update(jnp.float32(g), adam.init(start.log_alpha))
    np.testing.assert_allclose(state.log_alpha, start.log_alpha + step, rtol=1e-6)
    # The actor and critics keep learning_rate: the same bits as unset.
    _, unset, _ = _one_update(learning_rate=lr, init_alpha=float(np.e))
    for got, same in zip(
        jax.tree.leaves((state.params, state.target_critic, state.opt_state[:2])),
        jax.tree.leaves((unset.params, unset.target_critic, unset.opt_state[:2])),
        strict=True,
    ):
        np.testing.assert_array_equal(got, same)
    moved = float(unset.log_alpha) - log_alpha0
    assert moved == pytest.approx(-lr * np.sign(g), rel=1e-4)


def test_unset_alpha_learning_rate_keeps_the_shared_optimiser_bitwise():
    # Unset, log α steps with the actor's and critics' own optimiser, as
    # before the field existed; the same rate set explicitly builds a second,
    # equal Adam. Three updates of both agree to the bit, buffers and
    # optimiser states included, in the same state structure (checkpoints).
    states = []
    for extra in ({}, {"alpha_learning_rate": 1e-2}):
        agent = _agent(learning_rate=1e-2, **extra)
        state = agent.init(jax.random.key(0))
        update = jax.jit(agent.update)
        for i in range(3):
            state, _ = update(state, _traj(), jax.random.key(i))
        states.append(state)
    unset, explicit = states
    assert jax.tree.structure(unset) == jax.tree.structure(explicit)
    for got, want in zip(
        jax.tree.leaves(unset), jax.tree.leaves(explicit), strict=True
    ):
        np.testing.assert_array_equal(got, want)
    assert int(unset.grad_steps) == 3 and float(unset.log_alpha) != 0.0


@pytest.mark.parametrize("rate", ["-1e-3", "nan", "inf"])
def test_alpha_learning_rate_must_be_non_negative_and_zero_or_none_is_unset(rate):
    config = pjd.TrainConfig(algo="sac")
    with pytest.raises(
        ConfigError, match=r"^sac\.alpha_learning_rate=\S+ must be >= 0"
    ):
        sac.validate(pjd.apply_overrides(config, {"sac.alpha_learning_rate": rate}).sac)
    # none: what older config.yaml files hold (null); it reads as 0, unset.
    for unset in ("none", None, "0", 0.0):
        section = pjd.apply_overrides(config, {"sac.alpha_learning_rate": unset}).sac
        assert section.alpha_learning_rate == 0.0
        assert type(section.alpha_learning_rate) is float
        sac.validate(section)


def test_an_older_run_config_with_a_null_alpha_learning_rate_loads(tmp_path):
    import yaml

    from purejaxdrl.config import to_dict
    from purejaxdrl.training.resume import load_run_config

    config = pjd.TrainConfig(algo="sac")
    data = to_dict(config)
    data["sac"]["alpha_learning_rate"] = None  # as the version before wrote it
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(data))
    loaded = load_run_config(tmp_path)
    assert loaded.sac.alpha_learning_rate == 0.0
    assert loaded == config


def _traced_updates(**config):
    """Three updates with every config leaf a traced argument, as in sweeps."""
    base = SACConfig(buffer_size=64, batch_size=8, min_replay=8, **config)
    leaves, treedef = jax.tree.flatten(base)
    leaves = [jnp.asarray(x, jnp.float32) for x in leaves]

    def build(leaves):
        return make_sac(
            jax.tree.unflatten(treedef, leaves),
            NETS,
            np.zeros(3, np.float32),
            RunShape(num_updates=10),
        )

    state = build(leaves).init(jax.random.key(0))
    update = jax.jit(lambda lv, s, k: build(lv).update(s, _traj(), k))
    for i in range(3):
        state, _ = update(leaves, state, jax.random.key(i))
    return state


def test_a_traced_zero_alpha_learning_rate_steps_with_learning_rate_bitwise():
    # In a sweep or PBT the rate is an array leaf, 0 in members that leave it
    # unset: they must train as an explicit rate equal to learning_rate does
    # (and as the shared optimiser did when the field was static, checked
    # against that version's params when the field became a leaf).
    zero = _traced_updates(learning_rate=1e-2, alpha_learning_rate=0.0)
    same = _traced_updates(learning_rate=1e-2, alpha_learning_rate=1e-2)
    other = _traced_updates(learning_rate=1e-2, alpha_learning_rate=1e-3)
    assert jax.tree.structure(zero) == jax.tree.structure(same)
    for got, want in zip(jax.tree.leaves(zero), jax.tree.leaves(same), strict=True):
        np.testing.assert_array_equal(got, want)
    assert float(zero.log_alpha) != float(other.log_alpha)


def test_alpha_learning_rate_is_one_leaf_of_the_config():
    # A leaf, so sweeps vmap it and PBT explores it (no program per value).
    leaves = jax.tree.leaves(SACConfig(alpha_learning_rate=1.5e-4))
    assert len(leaves) == len(jax.tree.leaves(SACConfig())) and 1.5e-4 in leaves


def _q_by_hand(critic, i, features, action):
    """W_out relu(W [features, action] + b) + b_out: critic i's dense layers."""
    hidden = critic[f"q{i}"]["Dense_0"]
    out = critic[f"Dense_{i}"]
    x = np.concatenate([features, action], axis=-1) @ hidden["kernel"]
    x = np.maximum(x + hidden["bias"], 0.0)
    return (x @ out["kernel"] + out["bias"])[..., 0]


@pytest.mark.parametrize("torso", ["mlp", "mine"])
def test_critics_read_the_observation_through_the_configured_torso(torso, monkeypatch):
    class _Mine(nn.Module):
        @nn.compact
        def __call__(self, x: jax.Array) -> jax.Array:
            return nn.Dense(3, name="mine")(x)

    monkeypatch.setattr(torsos, "_USER_TORSOS", {})
    pjd.networks.register_torso("mine", lambda config: _Mine())
    config = NetworkConfig(torso=torso, hidden_sizes=(4,), activation="relu")
    nets = make_sac_networks(config, Box((5,)), Box((2,)))
    obs = jax.random.normal(jax.random.key(1), (6, 5))
    action = jax.random.normal(jax.random.key(2), (6, 2))
    params = nets.policy.init(jax.random.key(0), obs)
    critic = jax.tree.map(np.asarray, params["critic"]["params"])
    q = np.asarray(nets.critic(params["critic"], obs, action))
    for i in range(2):
        if torso == "mlp":  # an MLP over [obs, action], as SAC always had it
            assert set(critic) == {"q0", "q1", "Dense_0", "Dense_1"}
            features = np.asarray(obs)
        else:  # each critic its own torso: obs W + b, then the action
            mine = critic[f"q{i}_obs"]["_Mine_0"]["mine"]
            features = np.asarray(obs) @ mine["kernel"] + mine["bias"]
        np.testing.assert_allclose(
            q[:, i], _q_by_hand(critic, i, features, np.asarray(action)), rtol=1e-5
        )
    if torso == "mine":  # two torsos, initialised apart
        kernels = [critic[f"q{i}_obs"]["_Mine_0"]["mine"]["kernel"] for i in (0, 1)]
        assert not np.array_equal(*kernels)


def test_critics_of_a_conv_torso_convolve_the_frames():
    config = NetworkConfig(torso="cnn", hidden_sizes=(4,))
    nets = make_sac_networks(config, Box((5, 5, 2)), Box((2,)))
    params = nets.policy.init(jax.random.key(0), jnp.zeros((3, 5, 5, 2)))
    shapes = jax.tree.map(np.shape, params["critic"]["params"])
    for i in range(2):
        assert shapes[f"q{i}_obs"]["_Conv_0"]["kernel"] == (3, 3, 2, 16)
        # 5x5x16 conv features and the 2 action dimensions.
        assert shapes[f"q{i}"]["Dense_0"]["kernel"] == (5 * 5 * 16 + 2, 4)


def test_soft_target_scales_its_bootstrap_by_a_fractional_discount():
    # An environment may discount by less than 1 without terminating (0.5
    # here): y = r s + γ d soft(s'), so the bootstrap part y - r s at d = 0.5
    # is half that at d = 1 (same next observations, actions and key).
    obs = jax.random.normal(jax.random.key(0), (3, 3))
    actor = NETS.init_actor(jax.random.key(1), obs)
    target = NETS.init_critic(jax.random.key(2), obs, jnp.zeros((3, 2)))
    reward, config = jnp.array([1.0, -2.0, 0.5]), SACConfig(gamma=0.9, reward_scale=2.0)

    def bootstrap(discount):
        item = Stored(obs, jnp.zeros((3, 2)), reward, jnp.full(3, discount), obs + 1)
        y = sac.soft_q_target(
            NETS, actor, target, item, jnp.float32(0.2), jax.random.key(3), config
        )
        return np.asarray(y - 2.0 * reward)

    full = bootstrap(1.0)
    assert np.all(np.abs(full) > 1e-3)  # a bootstrap that halving shows
    np.testing.assert_allclose(bootstrap(0.5), 0.5 * full, rtol=1e-5, atol=1e-6)
