"""Dict observations: the actor reads `state`, the critic `privileged_state`."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl import env as envs
from purejaxdrl.agents import registry
from purejaxdrl.networks import NetworkConfig, make_actor_critic, make_sac_networks
from purejaxdrl.training.experiment import spec_networks
from tests import dict_env
from tests.helpers import tiny_config, trained

ASYMMETRIC = {"policy_obs_key": "state", "value_obs_key": "privileged_state"}
SPEC = dict_env.DictSignalEnv().observation_spec(())


def _obs(key, batch=5):
    key_s, key_p = jax.random.split(key)
    return {
        "state": jax.random.normal(key_s, (batch, 3)),
        "privileged_state": jax.random.normal(key_p, (batch, 2)),
    }


def _perturbed(obs, entry):
    return {**obs, entry: obs[entry] + 1.0}


def _ppo_config(**overrides):
    base = {
        "env": {"id": dict_env.ENV_ID, "imports": ["tests.dict_env"]},
        "network": ASYMMETRIC,
        "num_envs": 16,
        "unroll_length": 16,
        "total_steps": 16 * 16 * 10,
        "num_logs": 1,
        "devices": 1,
    }
    env = {**base["env"], **overrides.pop("env", {})}
    return tiny_config({**base, **overrides, "env": env})


def test_ppo_critic_and_only_the_critic_sees_privileged_state():
    config = NetworkConfig(**ASYMMETRIC)
    net = make_actor_critic(config, SPEC, envs.Discrete(2))
    obs = _obs(jax.random.key(0))
    params = net.init(jax.random.key(1), jax.tree.map(lambda x: x[0], obs))
    logits, value = net.apply(params, obs)
    logits_p, value_p = net.apply(params, _perturbed(obs, "privileged_state"))
    np.testing.assert_array_equal(logits_p, logits)
    assert np.all(np.abs(value_p - value) > 1e-6)
    logits_s, value_s = net.apply(params, _perturbed(obs, "state"))
    np.testing.assert_array_equal(value_s, value)
    assert np.all(np.abs(logits_s - logits).max(axis=-1) > 1e-6)
    # Each tower's first layer is as wide as its own entry.
    towers = params["params"]
    assert towers["actor_torso"]["Dense_0"]["kernel"].shape[0] == 3
    assert towers["critic_torso"]["Dense_0"]["kernel"].shape[0] == 2


def test_sac_critics_and_only_the_critics_see_privileged_state():
    nets = make_sac_networks(NetworkConfig(**ASYMMETRIC), SPEC, envs.Box((1,)))
    obs = _obs(jax.random.key(2))
    params = nets.policy.init(jax.random.key(3), jax.tree.map(lambda x: x[0], obs))
    action = jnp.full((5, 1), 0.3)

    def outputs(o):
        q = nets.critic(params["critic"], o, action)
        return nets.policy.apply(params, o)[0], q

    policy, q = outputs(obs)
    policy_p, q_p = outputs(_perturbed(obs, "privileged_state"))
    np.testing.assert_array_equal(policy_p, policy)
    assert np.all(np.abs(q_p - q) > 1e-6)
    policy_s, q_s = outputs(_perturbed(obs, "state"))
    np.testing.assert_array_equal(q_s, q)
    assert np.all(np.abs(policy_s - policy).max(axis=-1) > 1e-6)


@pytest.mark.timeout(300)
def test_sac_replays_dict_observations_and_learns_from_them():
    config = _ppo_config(
        algo="sac",
        env={"options": {"continuous": True}},
        sac={"min_replay": 64, "batch_size": 32},
    )
    run = trained(config, 1, 6)
    stored = run.state.agent.buffer.items.observation
    assert {k: v.shape[-1] for k, v in stored.items()} == {
        "state": 3,
        "privileged_state": 2,
    }
    assert np.abs(stored["privileged_state"]).sum() > 0  # real steps stored
    assert np.all(np.isfinite(run.metrics["loss/critic"]))
    assert np.any(run.metrics["loss/critic"] != 0)  # the learner stepped


def test_normalisation_keeps_statistics_per_entry_against_numpy():
    env = envs.NormalizeObservation(dict_env.DictSignalEnv())
    params = env.default_params
    batches = [_obs(jax.random.key(k), batch=64) for k in range(3)]
    for b in batches:
        b["state"] = b["state"] * 3.0 + 2.0  # unlike the other entry
        params = env.update_statistics(params, {"raw_observation": b}, None)
    for entry in ("state", "privileged_state"):
        data = np.concatenate([np.asarray(b[entry]) for b in batches])
        stats = params.obs_stats[entry]
        # The prior (count 1e-4) moves the statistics by about 1e-6.
        np.testing.assert_allclose(stats.mean, data.mean(0), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(stats.variance, data.var(0), rtol=1e-4)
    _, ts = env.reset(jax.random.key(9), params)
    raw = ts.info["raw_observation"]
    for entry in ("state", "privileged_state"):
        stats = params.obs_stats[entry]
        want = (raw[entry] - stats.mean) / np.sqrt(stats.variance + 1e-8)
        np.testing.assert_allclose(ts.observation[entry], want, rtol=1e-5)


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (
            ["--algo", "dqn"],
            "algo='dqn' takes array observations, but DictSignal-v0 observes a "
            "dict (privileged_state, state); use --algo ppo or sac with "
            "--network.policy-obs-key state --network.value-obs-key "
            "privileged_state (algo='ppo' or 'sac', network={'policy_obs_key': "
            "'state', 'value_obs_key': 'privileged_state'} in Python), or give it "
            "one entry (MuJoCo Playground: --env.option observation_key=state "
            "(env.options={'observation_key': 'state'} in Python)).",
        ),
        (
            ["--network.policy-obs-key", "None"],
            "network.policy_obs_key=None, but the environment observes a dict "
            "(privileged_state, state); pick the policy's entry and the "
            "critic's, e.g. --network.policy-obs-key state --network.value-obs-key "
            "privileged_state (network={'policy_obs_key': 'state', "
            "'value_obs_key': 'privileged_state'} in Python).",
        ),
        (
            ["--network.value-obs-key", "secret"],
            "network.value_obs_key='secret' is not an entry of the environment's "
            "observations (privileged_state, state); pick one of them.",
        ),
        (
            ["--network.core", "gru"],
            "network.core='gru' takes array observations, but the environment "
            "observes a dict",
        ),
    ],
)
def test_what_cannot_take_dict_observations_is_one_line_and_exit_2(
    argv, fragment, capsys
):
    base = ["train", "--no-files", "--no-compile-cache", "--env.imports"]
    base += ["tests.dict_env", "--env.id", dict_env.ENV_ID]
    base += ["--network.policy-obs-key", "state"]
    status = cli.main([*base, *argv])
    err = capsys.readouterr().err
    assert status == 2
    assert len(err.strip().splitlines()) == 1, err
    assert fragment in err


def test_keys_on_array_observations_are_refused():
    with pytest.raises(ValueError, match=r"drop --network.policy-obs-key \(network"):
        make_actor_critic(
            NetworkConfig(policy_obs_key="state"), envs.Box((4,)), envs.Discrete(2)
        )


@pytest.mark.timeout(300)
def test_asymmetric_ppo_learns_the_signal_and_its_exported_policy_acts_on_state(
    tmp_path,
):
    config = _ppo_config(
        run_dir=str(tmp_path / "runs"),
        env={"normalize_observations": True},
        eval={"episodes": 32},
    )
    result = pjd.train(config, write_files=True)
    # Random actions return 4 (8 steps, half right); the sign is in `state`.
    assert result.eval_return >= 7.5, result.eval_return
    policy = pjd.load_policy(pjd.export_policy(result.run_dir, tmp_path / "pol"))
    assert policy.spec["observation_shape"] == {"state": [3], "privileged_state": [2]}
    obs = _obs(jax.random.key(4), batch=256)
    signs = np.sign(np.asarray(obs["state"][:, 0]))
    # The actor's entry alone, as an array or in a dict, acts as the whole dict.
    modes = [jax.jit(policy.mode)(o) for o in (obs, {"state": obs["state"]})]
    modes.append(jax.jit(policy.mode)(obs["state"]))
    for mode in modes[1:]:
        np.testing.assert_array_equal(mode, modes[0])
    assert np.mean(modes[0] == (signs > 0)) > 0.95
    # ... and as the run's own network on normalised observations.
    stats = result.state.env_params.obs_stats
    net = make_actor_critic(config.network, SPEC, envs.Discrete(2))
    normed = {k: envs.normalize(stats[k], v) for k, v in obs.items()}
    logits, _ = net.apply(result.state.agent.params, normed)
    np.testing.assert_array_equal(modes[0], np.argmax(logits, axis=-1))
    # The result's own policy, without files: the same, statistics included.
    mine = result.policy()
    assert mine.spec == policy.spec
    np.testing.assert_array_equal(jax.jit(mine.mode)(obs), modes[0])
    # Written over the export above only when asked to.
    with pytest.raises(pjd.ConfigError, match="already holds an exported policy"):
        result.policy(tmp_path / "pol")
    assert result.policy(tmp_path / "pol", overwrite=True).spec == policy.spec
    # Observations that fit none of those are one error naming the shapes.
    takes = (
        f"{dict_env.ENV_ID}'s policy takes dict observations {{'privileged_state': "
        "[2], 'state': [3]} (after any batch axes), or its entry 'state' "
        "alone; got "
    )
    for bad, got in [
        (np.zeros(5), "'state' of shape [5]"),
        ({"state": np.zeros(2)}, "'state' of shape [2]"),
        ({"privileged_state": np.zeros(2)}, "a dict without 'state'"),
        ({**obs, "privileged_state": np.zeros((256, 3))}, "'privileged_state' of"),
        ({"state": np.zeros(3), "extra": np.zeros(1)}, "'extra' of shape [1]"),
    ]:
        with pytest.raises(ValueError) as e:
            policy.mode(bad)
        assert str(e.value).startswith(takes + got), str(e.value)


def test_flat_observations_build_the_same_networks_as_before():
    # Keys default to None: array observations take the unchanged path, the
    # same parameter tree and values (param_hashes.py shows whole runs).
    flat = NetworkConfig()
    assert dataclasses.asdict(flat)["policy_obs_key"] is None
    net = make_actor_critic(flat, envs.Box((4,)), envs.Discrete(2))
    params = net.init(jax.random.key(0), jnp.zeros(4))
    assert set(params["params"]) == {
        "actor_torso",
        "critic_torso",
        "Dense_0",
        "Dense_1",
    }


@pytest.mark.timeout(300)
def test_a_sweep_trains_dict_observation_runs_in_one_program():
    config = _ppo_config(env={"normalize_observations": True})
    result = pjd.sweep(config, grid={"learning_rate": [1e-3, 3e-4]}, seeds=2)
    # 4 runs; random actions return 4 an episode, the signal 8.
    assert result.final_return.shape == (4,)
    assert np.all(result.final_return > 5.0), result.final_return


def test_an_episode_of_dict_observations_is_recorded_for_drawing():
    # `eval --render` on Playground's locomotion tasks plays one like this.
    from purejaxdrl.observe.render import record_episode

    config = _ppo_config(num_envs=1, unroll_length=1, total_steps=1)
    # One sample per update: nothing trains, so nothing to normalise.
    ppo = {"num_minibatches": 1, "normalize_advantages": False}
    config = pjd.apply_overrides(config, {"ppo": ppo})
    exp = pjd.training.make_experiment(config)
    state = exp.runner.init(jax.random.key(0))
    episode = record_episode(
        exp.env, exp.network, state.agent.params, state.env_params,
        jax.random.key(1), max_steps=12,
    )  # fmt: skip
    assert episode.length == dict_env.LENGTH == len(episode.states)


def test_a_users_algorithm_on_dict_observations_is_told_its_records_field(capsys):
    # A built-in is pointed at PPO or SAC; a user's record may only lack
    # dict_observations=True, which the refusal now names. A2C's networks
    # read the observation keys, so under another name the fix works.
    a2c = dataclasses.replace(registry.algorithm("a2c"), preset_section="a2c")
    argv = ["train", "--no-files", "--no-compile-cache", "--env.imports"]
    argv += ["tests.dict_env", "--env.id", dict_env.ENV_ID, "--algo", "mine"]
    argv += ["--network.policy-obs-key", "state"]
    with registry.registered(dataclasses.replace(a2c, name="mine")):
        status = cli.main(argv)
    err = capsys.readouterr().err
    assert status == 2
    assert err == (
        "purejaxdrl: error: algo='mine' takes array observations, but "
        "DictSignal-v0 observes a dict (privileged_state, state); if its networks "
        "read network.policy_obs_key / value_obs_key (as actor_critic_networks "
        "does), set dict_observations=True on its record "
        "(dataclasses.replace(record, dict_observations=True)) and pass "
        "--network.policy-obs-key state --network.value-obs-key privileged_state "
        "(network={'policy_obs_key': 'state', 'value_obs_key': 'privileged_state'} "
        "in Python); or give it one entry (MuJoCo Playground: --env.option "
        "observation_key=state (env.options={'observation_key': 'state'} in "
        "Python)).\n"
    )
    mine = dataclasses.replace(a2c, name="mine", dict_observations=True)
    with registry.registered(mine):
        config = pjd.load_preset("cartpole", algo="mine").config
        config = pjd.apply_overrides(config, {"network": ASYMMETRIC})
        # Built, and its acting network checked on one dict observation.
        spec_networks(config, SPEC, envs.Discrete(2))
