"""What an exported policy keeps and does, checked where the other tests let a
change through (found by mutation testing): its observation statistics, its
counts, a recurrent policy's resets and keys, and how `purejaxdrl eval` plays
it. Policies are written from fresh parameters: nothing trains."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents.registry import algorithm
from purejaxdrl.env.normalization import RunningStatistics
from purejaxdrl.observe.play import PlayState
from purejaxdrl.training.policy.evaluate import policy_player
from purejaxdrl.training.policy.exported import write_policy
from purejaxdrl.training.policy.record import PolicySource


def _cartpole(out, overrides=(), stats=None, updates=1, **kwargs):
    """A PPO CartPole policy folder; (config, network, params, folder)."""
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"devices": 1, "network": {"hidden_sizes": [16]}, **dict(overrides)},
    )
    env = pjd.env.make("CartPole-v1")
    specs = (env.observation_spec(env.default_params), env.action_spec(None))
    network, _ = algorithm("ppo").make_networks(
        config.algo_config, config.network, *specs
    )
    params = network.init(jax.random.key(0), jnp.zeros(4))
    folder = write_policy(
        out,
        PolicySource(
            config, params, stats, updates, specs, kwargs.get("steps_per_update")
        ),
    )
    return config, network, params, folder


def test_a_normalising_policy_standardises_and_clips_with_its_statistics(tmp_path):
    mean = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    var = np.array([4.0, 0.25, 1.0, 9.0], np.float32)
    stats = RunningStatistics(jnp.float32(2), jnp.asarray(mean), jnp.asarray(2 * var))
    _, network, params, folder = _cartpole(tmp_path / "p", stats=stats)
    policy = pjd.load_policy(folder)
    obs = 3 * np.asarray(jax.random.normal(jax.random.key(1), (256, 4)))
    obs[0] = [100.0, -100.0, 0.0, 0.0]  # standardised beyond ±10: clipped
    z = np.clip((obs - mean) / np.sqrt(var + 1e-8), -10.0, 10.0)
    logits = np.asarray(network.apply(params, jnp.asarray(z, jnp.float32))[0])
    expected = np.argmax(logits, axis=-1)
    raw = np.argmax(np.asarray(network.apply(params, jnp.asarray(obs))[0]), -1)
    assert np.any(raw != expected)  # the statistics change the actions
    np.testing.assert_array_equal(policy.mode(obs), expected)


def test_policy_json_counts_env_steps_as_updates_times_steps_per_update(tmp_path):
    config, *_ = _cartpole(tmp_path / "a", updates=3, steps_per_update=100)
    spec = pjd.load_policy(tmp_path / "a").spec
    assert (spec["updates"], spec["env_steps"]) == (3, 300)
    # Without steps_per_update: the config's, num_envs * unroll_length for PPO.
    _cartpole(tmp_path / "b", updates=3)
    spec = pjd.load_policy(tmp_path / "b").spec
    assert spec["env_steps"] == 3 * config.num_envs * config.unroll_length
    assert spec["num_envs"] == config.num_envs


def _recurrent(out, head_sizes=()):
    """A GRU PPO policy on CartPole's position and angle; (network, params, policy)."""
    net = {"core_size": 8, "hidden_sizes": [8], "head_sizes": list(head_sizes)}
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole_masked").config, {"devices": 1, "network": net}
    )
    seen, actions = pjd.env.Box((2,)), pjd.env.Discrete(2)
    network, _ = algorithm("ppo").make_networks(
        config.algo_config, config.network, seen, actions
    )
    params = network.init(jax.random.key(0), jnp.zeros(2))
    write_policy(out, PolicySource(config, params, None, 1, (seen, actions)))
    return network, params, pjd.load_policy(out)


def _rows(tree, rows):
    return [np.asarray(x)[rows] for x in jax.tree.leaves(tree)]


def test_a_recurrent_policy_zeroes_the_state_only_where_reset(tmp_path):
    _, _, policy = _recurrent(tmp_path / "p")
    obs = 2 * np.asarray(jax.random.normal(jax.random.key(1), (4, 2)), np.float32)
    fresh = policy.initial_state(4)
    s1, _ = policy.step_mode(fresh, obs, True)
    s2, _ = policy.step_mode(s1, obs, False)  # a state away from the start
    for a, b in zip(_rows(s2, slice(None)), _rows(s1, slice(None)), strict=True):
        assert not np.allclose(a, b)
    reset = np.array([True, False, True, False])
    s3, _ = policy.step_mode(s2, obs, reset)
    # Reset rows step from the initial state, the others carry theirs.
    started, _ = policy.step_mode(fresh, obs, True)
    carried, _ = policy.step_mode(s2, obs, False)
    for got, want in zip(_rows(s3, reset), _rows(started, reset), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    for got, want in zip(_rows(s3, ~reset), _rows(carried, ~reset), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("batch", [-1, 2.5, "4"])
def test_a_recurrent_policys_initial_state_refuses_a_batch_that_is_no_count(
    tmp_path, batch
):
    # rec19 #5: -1 was JAX's TypeError about broadcast shapes; 0 is no episodes.
    from purejaxdrl.training.policy.acting import policy_acting

    _, _, policy = _recurrent(tmp_path / "p")
    expected = (
        f"initial_state(batch={batch!r}): batch must be an integer >= 0 (the "
        "number of episodes to step together); pass e.g. policy.initial_state(4)."
    )
    for initial_state in (
        policy.initial_state,
        policy_acting(policy).initial_state,
        policy_acting(policy, sample_seed=0).initial_state,
    ):
        with pytest.raises(ValueError) as error:
            initial_state(batch)
        assert str(error.value) == expected
    assert jax.tree.leaves(policy.initial_state(0))[0].shape[0] == 0
    assert jax.tree.leaves(policy.initial_state(np.int64(3)))[0].shape[0] == 3


def test_a_recurrent_state_of_another_batch_is_refused_in_one_line(tmp_path):
    # Not JAX's "Incompatible shapes for broadcasting" from inside the core.
    _, _, policy = _recurrent(tmp_path / "p")
    said = (
        r"^the state is of a batch of \[2\], the observations of 3; start from "
        r"policy.initial_state\(3\).$"
    )
    obs = np.zeros((3, 2), np.float32)
    with pytest.raises(ValueError, match=said):
        policy.step_mode(policy.initial_state(2), obs, False)
    with pytest.raises(ValueError, match=said):
        policy.step(policy.initial_state(2), obs, False, jax.random.key(0))


def test_a_recurrent_policy_samples_each_row_with_its_own_key(tmp_path):
    network, params, policy = _recurrent(tmp_path / "p")
    batch = 256
    obs = np.zeros((batch, 2), np.float32)
    state = policy.initial_state(batch)
    _, actions = policy.step(state, obs, True, jax.random.key(2))
    # Same observation in every row, probabilities near 1/2 at init: one key
    # for all rows would draw one action for all.
    _, (logits, _) = network.step(
        params, network.initial_state(batch), jnp.asarray(obs), jnp.ones(batch, bool)
    )
    p = float(jax.nn.softmax(np.asarray(logits)[0])[0])
    assert 0.2 < p < 0.8, p
    share = float(np.mean(np.asarray(actions) == 0))
    assert abs(share - p) < 0.15, (share, p)
    # step_mode is the argmax of the same logits, whatever the row.
    _, mode = policy.step_mode(state, obs, True)
    np.testing.assert_array_equal(mode, np.argmax(np.asarray(logits), -1))


def test_eval_of_a_policy_plays_its_environment_options_and_its_mode(tmp_path):
    # CartPole cut at 5 steps by its own option: no episode is longer, and
    # none falls that soon from rest.
    _, network, params, folder = _cartpole(
        tmp_path / "p",
        {"env": {"id": "CartPole-v1", "options": {"max_steps_in_episode": 5}}},
        updates=7,
    )
    config, player, state, updates = policy_player(folder)
    assert updates == 7
    # A run-less state: no parameters (the policy holds its own), the env's.
    assert isinstance(state, PlayState) and state.agent.params == ()
    assert int(state.env_params.max_steps_in_episode) == 5
    assert config.env.options == {"max_steps_in_episode": 5}
    result = player.evaluate(state, episodes=3, max_steps=100, seed=0)
    np.testing.assert_array_equal(result.lengths, [5, 5, 5])
    np.testing.assert_array_equal(result.returns, [5.0, 5.0, 5.0])
    # The step cap of `evaluate` cuts the episodes where it says.
    cut = player.evaluate(state, episodes=2, max_steps=3, seed=0)
    np.testing.assert_array_equal(cut.lengths, [3, 3])
    # The player acts with the mode of the policy: argmax of its logits.
    obs = np.asarray(jax.random.normal(jax.random.key(4), (512, 4)))
    acting = player.network
    _, actions = acting.act((), acting.initial_state(512), obs, np.ones(512, bool))
    logits = np.asarray(network.apply(params, jnp.asarray(obs))[0])
    np.testing.assert_array_equal(actions, np.argmax(logits, -1))


def test_params_of_the_same_layers_at_other_widths_are_refused(tmp_path):
    # The same parameter names, other shapes: refused at load, naming one.
    _cartpole(tmp_path / "p")
    _cartpole(tmp_path / "q", {"network": {"hidden_sizes": [8]}})
    wide, narrow = tmp_path / "p" / "params.msgpack", tmp_path / "q" / "params.msgpack"
    wide.write_bytes(narrow.read_bytes())
    with pytest.raises(pjd.ConfigError, match=r"does not fit .* has shape \("):
        pjd.load_policy(tmp_path / "p")


def test_a_policy_with_head_layers_loads_them_and_acts_through_them(tmp_path):
    network, params, policy = _recurrent(tmp_path / "p", head_sizes=[8])
    assert policy.spec["network"]["head_sizes"] == [8]
    obs = np.asarray(jax.random.normal(jax.random.key(5), (64, 2)), np.float32)
    reset = jnp.ones(64, bool)
    _, (logits, _) = network.step(
        params, network.initial_state(64), jnp.asarray(obs), reset
    )
    _, mode = policy.step_mode(policy.initial_state(64), obs, reset)
    np.testing.assert_array_equal(mode, np.argmax(np.asarray(logits), -1))


def test_a_finished_run_directory_is_named_as_a_run_not_a_broken_policy(tmp_path):
    # A finished run holds config.yaml and its own params.msgpack, no policy.json.
    (tmp_path / "config.yaml").write_text("algo: ppo\n")
    (tmp_path / "params.msgpack").write_bytes(b"\x80")
    with pytest.raises(pjd.ConfigError, match=r"is a run directory, not an exported"):
        pjd.load_policy(tmp_path)


def test_eval_takes_a_folder_for_a_policy_only_without_a_run_config(tmp_path):
    from purejaxdrl.training.policy.evaluate import is_policy_folder

    assert not is_policy_folder(tmp_path)
    (tmp_path / "policy.json").write_text("{}")
    assert is_policy_folder(tmp_path)
    # A run directory with a policy.json copied in is still a run: eval plays
    # its checkpoints, not the copy.
    (tmp_path / "config.yaml").write_text("algo: ppo\n")
    assert not is_policy_folder(tmp_path)


def test_a_device_player_plays_and_draws_with_the_seed_it_is_given(tmp_path):
    from purejaxdrl.observe.evaluation import make_evaluate

    _cartpole(tmp_path / "p")
    _, player, state, _ = policy_player(tmp_path / "p")
    evaluate = make_evaluate(player.env, player.network, episodes=4, max_steps=200)
    # evaluate(seed=s) is evaluation from jax.random.key(s): what a drawing
    # of seed s replays. Two seeds give two results, so the seed shows.
    runs = [evaluate((), state.env_params, jax.random.key(s)) for s in (3, 4)]
    assert not np.array_equal(runs[0].lengths, runs[1].lengths)
    got = player.evaluate(state, episodes=4, max_steps=200, seed=3)
    np.testing.assert_array_equal(got.lengths, runs[0].lengths)
    np.testing.assert_array_equal(got.returns, runs[0].returns)
    # The drawing of seed 3 among 4 episodes is the first of them, as scored.
    drawn = player.render(state, tmp_path / "x.gif", max_steps=200, seed=3, episodes=4)
    assert (drawn.length, drawn.episode_return) == (
        int(runs[0].lengths[0]),
        float(runs[0].returns[0]),
    )
    assert drawn.path.is_file()


def test_a_host_player_plays_its_environment_options_and_keeps_returns_apart(
    tmp_path,
):
    # MountainCar pays -1 a step: returns are minus the lengths, and its
    # option max_episode_steps=7 (gymnasium.make's) cuts each episode at 7.
    pytest.importorskip("gymnasium")
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"devices": 1, "network": {"hidden_sizes": [8]},
         "env": {"id": "gymnasium:MountainCar-v0",
                 "options": {"max_episode_steps": 7}}},
    )  # fmt: skip
    specs = (pjd.env.Box((2,)), pjd.env.Discrete(3))
    network, _ = algorithm("ppo").make_networks(
        config.algo_config, config.network, *specs
    )
    params = network.init(jax.random.key(0), jnp.zeros(2))
    write_policy(tmp_path / "p", PolicySource(config, params, None, 1, specs))
    _, player, state, _ = policy_player(tmp_path / "p")
    result = player.evaluate(state, episodes=2, max_steps=20, seed=0)
    np.testing.assert_array_equal(result.lengths, [7, 7])
    np.testing.assert_array_equal(result.returns, [-7.0, -7.0])


def test_a_host_player_draws_the_first_episode_of_its_seed(tmp_path):
    pytest.importorskip("gymnasium")
    pytest.importorskip("pygame", reason="gymnasium draws CartPole with pygame")
    _cartpole(
        tmp_path / "p",
        {"env": {"id": "gymnasium:CartPole-v1", "options": {"max_episode_steps": 40}}},
    )
    _, player, state, _ = policy_player(tmp_path / "p")
    scored = [player.evaluate(state, episodes=1, max_steps=100, seed=s) for s in (2, 3)]
    assert scored[0].lengths[0] != scored[1].lengths[0]  # the seed shows
    drawn = player.render(state, tmp_path / "x.gif", max_steps=100, seed=2)
    assert drawn.length == scored[0].lengths[0]
    assert drawn.episode_return == scored[0].returns[0]


def test_a_drawing_without_console_is_silent_and_counts_by_default(tmp_path, capfd):
    # As pjd.train's console=False: nothing on stderr or stdout, nor a display.
    _cartpole(tmp_path / "p")
    _, player, state, _ = policy_player(tmp_path / "p")
    capfd.readouterr()
    quiet = player.render(
        state, tmp_path / "q.gif", max_steps=20, seed=0, console=False
    )
    assert capfd.readouterr() == ("", "")
    assert quiet.path.is_file()
    counted = player.render(state, tmp_path / "c.gif", max_steps=20, seed=0)
    assert f"drawing c.gif: {counted.length}/{counted.length} frames" in (
        capfd.readouterr().err
    )
    assert (quiet.length, quiet.episode_return) == (
        counted.length,
        counted.episode_return,
    )
