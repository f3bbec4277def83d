"""eval with other environment options (`--env.option`), and the sampled policy.

reviews/ex19.md #3: eval played only the mode, on the environment as exported.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.agents.registry import algorithm
from purejaxdrl.training.experiment import make_experiment
from purejaxdrl.training.policy.acting import SAMPLING_STREAM, policy_acting
from purejaxdrl.training.policy.exported import write_policy
from purejaxdrl.training.policy.record import PolicySource


@pytest.fixture(scope="module")
def pendulum(tmp_path_factory):
    """A tiny PPO run on Pendulum-v1 (200 steps an episode, never ended sooner)."""
    tmp = tmp_path_factory.mktemp("pendulum")
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"num_envs": 4, "unroll_length": 8, "total_steps": 32, "num_logs": 1,
         "devices": 1, "run_dir": str(tmp / "runs"), "env": {"id": "Pendulum-v1"}},
    )  # fmt: skip
    result = pjd.train(config, write_files=True, console=False)
    return result.run_dir, pjd.export_policy(result.run_dir, tmp / "policy")


@pytest.mark.timeout(300)
def test_a_longer_episode_option_plays_longer_episodes(pendulum, capsys):
    run, folder = pendulum
    plain = pjd.evaluate_policy(folder, episodes=2)
    longer = pjd.evaluate_policy(
        folder, episodes=2, env_options={"max_steps_in_episode": 300}
    )
    np.testing.assert_array_equal(plain.lengths, [200, 200])
    np.testing.assert_array_equal(longer.lengths, [300, 300])
    assert longer.ended.all()
    # The command line, on the run and on its export alike.
    for played in (run, folder):
        flags = ["--episodes", "2", "--env.option", "max_steps_in_episode=300"]
        assert cli.main(["eval", str(played), *flags]) == 0
        out = capsys.readouterr().out
        # The line says the score is on other options than the run's.
        policy = "deterministic policy; with --env.option max_steps_in_episode=300"
        assert f"({policy}), lengths 300-300\n" in out, out


@pytest.mark.timeout(300)
def test_the_sampled_policy_is_reproducible_by_seed(pendulum, capsys):
    run, folder = pendulum
    loaded = pjd.load_policy(folder)
    obs = jax.random.normal(jax.random.key(0), (6, 3))
    sampled = policy_acting(loaded, sample_seed=4)
    state = sampled.initial_state(6)
    _, a = sampled.act((), state, obs, jnp.zeros(6, bool))
    _, again = policy_acting(loaded, 4).act((), state, obs, jnp.zeros(6, bool))
    _, other = sampled.act(
        (), policy_acting(loaded, 5).initial_state(6), obs, jnp.zeros(6, bool)
    )
    np.testing.assert_array_equal(a, again)
    assert not np.allclose(a, loaded.mode(obs))
    assert not np.allclose(a, other)
    # Whole episodes: the same seed plays the same ones; the first is the
    # same however many play beside it (what --render draws).
    one = pjd.evaluate_policy(folder, episodes=3, max_steps=20, seed=1, sample=True)
    two = pjd.evaluate_policy(folder, episodes=3, max_steps=20, seed=1, sample=True)
    mode = pjd.evaluate_policy(folder, episodes=3, max_steps=20, seed=1)
    first = pjd.evaluate_policy(folder, episodes=1, max_steps=20, seed=1, sample=True)
    np.testing.assert_array_equal(one.returns, two.returns)
    assert not np.allclose(one.returns, mode.returns)
    np.testing.assert_array_equal(first.returns, one.returns[:1])
    # The command line: the run and its export sample alike.
    lines = []
    for played in (run, folder):
        flags = ["--episodes", "3", "--max-steps", "20", "--seed", "1", "--sample"]
        assert cli.main(["eval", str(played), *flags]) == 0
        lines.append(capsys.readouterr().out)
    assert lines[0] == lines[1]
    assert "(sampled policy), lengths 20-20" in lines[0]
    mean = float(np.mean(one.returns))
    assert f"mean return {mean:.1f}" in lines[0], (mean, lines[0])


def _fresh_pendulum(out, options=None):
    """A PPO Pendulum-v1 policy folder of fresh parameters (nothing trains)."""
    env = {"id": "Pendulum-v1", "options": options or {}}
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"network": {"hidden_sizes": [16]}, "devices": 1, "env": env},
    )
    made = pjd.env.make("Pendulum-v1")
    specs = (made.observation_spec(made.default_params), made.action_spec(None))
    network, _ = algorithm("ppo").make_networks(
        config.algo_config, config.network, *specs
    )
    params = network.init(jax.random.key(0), jnp.zeros(3))
    return write_policy(out, PolicySource(config, params, None, 1, specs))


def test_sampled_environments_draw_apart_on_the_same_observation(tmp_path):
    # Resets differ, so episodes differ even on one key: the same observation
    # shows whether each environment draws from a stream of its own.
    policy = pjd.load_policy(_fresh_pendulum(tmp_path / "p"))
    acting = policy_acting(policy, sample_seed=0)
    state, obs = acting.initial_state(8), jnp.zeros((8, 3))
    _, action = acting.act((), state, obs, jnp.zeros(8, bool))
    assert len(set(np.asarray(action)[:, 0].tolist())) == 8, action


def test_each_step_draws_with_a_key_it_does_not_carry_on(tmp_path):
    # Environment i's stream: the seed's key folded with SAMPLING_STREAM,
    # then with i; each step splits it into the key carried and the key drawn.
    policy = pjd.load_policy(_fresh_pendulum(tmp_path / "p"))
    acting = policy_acting(policy, sample_seed=3)
    obs = jax.random.normal(jax.random.key(1), (2, 3))
    state = acting.initial_state(2)
    for _ in range(2):
        previous = state[1]
        state, action = acting.act((), state, obs, jnp.zeros(2, bool))
        for i in range(2):
            carry, draw = jax.random.split(previous[i])
            _, expected = policy.step((), obs[i][None], jnp.zeros(1, bool), draw)
            np.testing.assert_allclose(action[i], expected[0], rtol=1e-6)
            assert jax.random.key_data(state[1][i]).tolist() == (
                jax.random.key_data(carry).tolist()
            )
    stream = jax.random.fold_in(jax.random.key(3), SAMPLING_STREAM)
    first = acting.initial_state(2)[1]
    for i in range(2):
        assert jax.random.key_data(first[i]).tolist() == (
            jax.random.key_data(jax.random.fold_in(stream, i)).tolist()
        )


def test_evals_env_options_replace_the_exported_ones(tmp_path):
    folder = _fresh_pendulum(tmp_path / "p", {"max_steps_in_episode": 20})
    exported = pjd.evaluate_policy(folder, episodes=1, max_steps=100)
    longer = pjd.evaluate_policy(
        folder, episodes=1, max_steps=100, env_options={"max_steps_in_episode": 30}
    )
    assert (int(exported.lengths[0]), int(longer.lengths[0])) == (20, 30)


@pytest.mark.parametrize(
    ("arguments", "wanted"),
    [
        (
            {"env_options": ["episode_length=2000"]},
            "env_options=['episode_length=2000'] must be a dict of option names "
            "to values (or None); e.g. --env.option episode_length=2000 "
            "(env_options={'episode_length': 2000} in Python).",
        ),
        (
            {"sample": "yes"},
            "sample='yes' must be True or False; e.g. --sample (sample=True in "
            "Python).",
        ),
    ],
)
def test_evaluate_policy_refuses_other_kinds(tmp_path, arguments, wanted):
    with pytest.raises(pjd.ConfigError) as refused:
        pjd.evaluate_policy(tmp_path / "no_policy", **arguments)
    assert str(refused.value) == wanted


def test_a_non_number_gets_an_example_in_both_spellings(capsys, tmp_path):
    assert cli.main(["eval", str(tmp_path), "--episodes", "abc"]) == 2
    assert capsys.readouterr().err == (
        "purejaxdrl: error: argument --episodes: invalid int value: 'abc'; pass "
        "an integer, e.g. --episodes 10 (episodes=10 in Python); `purejaxdrl "
        "eval --help` lists every option.\n"
    )
    assert cli.main(["eval", str(tmp_path), "--max-steps", "1e3"]) == 2
    assert "e.g. --max-steps 1000 (max_steps=1000 in Python);" in (
        capsys.readouterr().err
    )


@pytest.mark.timeout(300)
def test_a_played_options_refusal_names_evaluate_policys_keyword(pendulum, capsys):
    # ds20 #4: it said `env.options={...}` (train's field) and "the preset's
    # env.options": evaluate_policy takes `env_options`, and plays no preset.
    run, folder = pendulum
    with pytest.raises(pjd.ConfigError) as refused:
        pjd.evaluate_policy(folder, env_options={"episode_length": 3})
    assert str(refused.value).endswith(
        "fix the name in --env.option KEY=VALUE (env_options={'KEY': VALUE} in "
        "Python), or drop it."
    )
    with pytest.raises(pjd.ConfigError) as refused:
        pjd.evaluate_policy(folder, env_options={"max_steps_in_episode": "abc"})
    assert str(refused.value).endswith(
        "(env_options={'max_steps_in_episode': 200} in Python)."
    )
    flags = ["--env.option", "episode_length=3"]
    assert cli.main(["eval", str(run), *flags]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "(env_options={'KEY': VALUE} in Python)" in err
    # A flag with no `=`: both spellings, eval's keyword in Python.
    assert cli.main(["eval", str(run), "--env.option", "foo"]) == 2
    assert capsys.readouterr().err == (
        "purejaxdrl: error: --env.option 'foo' is not KEY=VALUE; e.g. --env.option "
        "foo=VALUE (env_options={'foo': VALUE} in Python).\n"
    )
    # A run's options are still train's field, with the preset's.
    with pytest.raises(pjd.ConfigError) as refused:
        make_experiment(
            pjd.apply_overrides(
                pjd.TrainConfig(), {"env": {"options": {"episode_length": 3}}}
            )
        )
    assert "(env.options={'KEY': VALUE} in Python, or the preset's env.options)" in (
        str(refused.value)
    )
