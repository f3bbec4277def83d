"""Exported policies of every kind of acting network load as the run acted."""

import json
import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.agents.registry import algorithm
from purejaxdrl.networks import make_q_network
from purejaxdrl.setup_warnings import forget_warnings
from purejaxdrl.training.policy.exported import write_policy
from purejaxdrl.training.policy.record import PolicySource


@pytest.mark.timeout(300)
def test_a_dqn_run_exports_its_q_network_and_acts_greedily(tmp_path):
    # A Q-network without the dueling head: load_policy must build the run's
    # own architecture (from the exported DQN section), not an actor-critic.
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "dqn").config,
        {
            "total_steps": 16 * 4 * 20,
            "num_logs": 1,
            "devices": 1,
            "run_dir": str(tmp_path / "runs"),
            "dqn": {"min_replay": 256, "dueling": False, "epsilon_end": 0.2},
        },
    )
    result = pjd.train(config, write_files=True)
    policy = pjd.load_policy(pjd.export_policy(result.run_dir, tmp_path / "policy"))
    assert policy.spec["algo"] == "dqn"
    assert policy.spec["algo_config"]["dueling"] is False
    for x, y in zip(
        jax.tree.leaves(policy.params),
        jax.tree.leaves(result.state.agent.params),
        strict=True,
    ):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    # The greedy action is argmax Q of the run's own network and parameters.
    env = pjd.env.make("CartPole-v1")
    spec = (env.observation_spec(env.default_params), env.action_spec(None))
    q_network = make_q_network(config.network, *spec, dueling=False)
    obs = jax.random.normal(jax.random.key(0), (64, 4))
    q, _ = q_network.apply(result.state.agent.params, obs)
    np.testing.assert_array_equal(jax.jit(policy.mode)(obs), np.argmax(q, axis=-1))
    assert jax.jit(policy.act)(obs, jax.random.key(1)).shape == (64,)
    # `act` is ε-greedy at the run's final ε, 0.2: the greedy action with
    # probability 0.8 + 0.2 / 2, not a softmax over the two values (taken
    # where the values differ most, so that a softmax would differ).
    i = int(np.argmax(np.abs(q[:, 0] - q[:, 1])))
    keys = jax.random.split(jax.random.key(2), 20_000)
    acts = jax.jit(jax.vmap(policy.act, (None, 0)))(obs[i], keys)
    greedy = np.mean(np.asarray(acts) == int(np.argmax(q[i])))
    assert abs(greedy - 0.9) < 0.015, greedy  # 7 standard deviations
    count = sum(np.size(x) for x in jax.tree.leaves(policy.params))
    assert (
        repr(policy) == f"Policy(dqn on CartPole-v1, 20 updates, {count:,} parameters)"
    )


@pytest.mark.timeout(300)
def test_a_policy_of_a_run_with_hidden_observations_takes_the_envs_own(
    tmp_path, capsys
):
    # The run acted on CartPole's position and angle (velocities hidden): its
    # policy takes those two, or the environment's four and drops the two.
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config,
        {"total_steps": 4 * 8 * 2, "num_envs": 4, "unroll_length": 8,
         "num_logs": 1, "devices": 1, "run_dir": str(tmp_path / "runs"),
         "env": {"hide_observations": [1, 3]}},
    )  # fmt: skip
    result = pjd.train(config, write_files=True, console=False)
    policy = pjd.load_policy(pjd.export_policy(result.run_dir, tmp_path / "policy"))
    full = np.asarray(jax.random.normal(jax.random.key(0), (64, 4)))
    seen = full[:, [0, 2]]
    np.testing.assert_array_equal(policy.mode(full), policy.mode(seen))
    # What the run's own network makes of what it saw.
    network = pjd.training.make_experiment(config).network
    logits = network.apply(result.state.agent.params, seen)[0]
    np.testing.assert_array_equal(policy.mode(seen), np.argmax(logits, axis=-1))
    with pytest.raises(ValueError, match=r"takes observations of shape \[2\] \(or "
                       r"\[4\], before hiding \[1, 3\]\) after any batch axes; got "
                       r"\[64, 3\]"):  # fmt: skip
        policy.mode(full[:, :3])
    # An earlier export is not replaced without a word, named as the caller
    # spells it: overwrite=True from Python, --overwrite on the command line.
    before = (tmp_path / "policy" / "params.msgpack").read_bytes()
    (tmp_path / "policy" / "notes.txt").write_text("mine")
    with pytest.raises(pjd.ConfigError, match=r"^out='.*' already holds an exported "
                       r"policy \(policy.json, params.msgpack\); choose another "
                       r"folder, or pass --overwrite \(overwrite=True in "
                       r"Python\) to replace it$"):  # fmt: skip
        pjd.export_policy(result.run_dir, tmp_path / "policy")
    assert (tmp_path / "policy" / "params.msgpack").read_bytes() == before
    out = tmp_path / "policy"
    capsys.readouterr()
    assert cli.main(["export", str(result.run_dir), "--out", str(out)]) == 2
    said = capsys.readouterr().err
    assert f"--out {str(out)!r} already holds" in said
    assert "pass --overwrite (overwrite=True in Python) to replace it" in said
    assert cli.main(["export", str(result.run_dir), "--out", str(out),
                     "--overwrite"]) == 0  # fmt: skip
    assert (out / "notes.txt").read_text() == "mine"  # other files stay
    assert pjd.load_policy(out).spec["updates"] == policy.spec["updates"]


def _q_policy(out, algo, overrides, updates):
    """A Q-learner's CartPole policy folder, fresh parameters, `updates` done."""
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", algo).config, {"devices": 1, **overrides}
    )
    env = pjd.env.make("CartPole-v1")
    specs = (env.observation_spec(env.default_params), env.action_spec(None))
    record = algorithm(algo)
    network, _ = record.make_networks(config.algo_config, config.network, *specs)
    params = network.init(jax.random.key(0), jnp.zeros(4))
    write_policy(out, PolicySource(config, params, None, updates, specs))
    return config, pjd.load_policy(out)


def _non_greedy(policy, draws=20_000):
    obs = jnp.zeros((draws, 4))
    acts = jax.jit(policy.act)(obs, jax.random.key(3))
    return float(np.mean(np.asarray(acts) != np.asarray(policy.mode(obs))))


def test_a_q_policy_acts_with_the_epsilon_its_run_ended_training_with(tmp_path):
    # ε falls 1 -> 0 over 80% of the run (epsilon_fraction 0.8), so a run
    # stopped after 2 of 40 updates has ε = 1 - 2 / (0.8 * 40) = 0.9375, nowhere
    # near epsilon_end 0.
    config, policy = _q_policy(
        tmp_path / "p",
        "pqn",
        {
            "total_steps": 40 * 32 * 64,
            "pqn": {"epsilon_start": 1.0, "epsilon_end": 0.0, "epsilon_fraction": 0.8},
        },
        updates=2,
    )
    assert config.num_updates == 40
    assert policy.spec["epsilon"] == pytest.approx(0.9375)
    # Two actions: a uniform draw is the other action half the time.
    assert abs(_non_greedy(policy) - 0.9375 / 2) < 0.025  # ~7 std
    # A policy.json from before it kept its ε acts with epsilon_end, as then.
    spec = json.loads((tmp_path / "p" / "policy.json").read_text())
    del spec["epsilon"]
    (tmp_path / "p" / "policy.json").write_text(json.dumps(spec))
    assert _non_greedy(pjd.load_policy(tmp_path / "p")) == 0.0
    # The anneal over: epsilon_end, as before.
    _, done = _q_policy(tmp_path / "q", "pqn", {"total_steps": 40 * 32 * 64}, 40)
    assert done.spec["epsilon"] == pytest.approx(0.2)


def test_a_per_actor_policy_acts_with_the_mean_of_its_actors_epsilons(tmp_path):
    # Ape-X's ε_i = ε^(1 + α i / (N - 1)) over the run's N = 16 environments.
    config, policy = _q_policy(tmp_path / "p", "apex", {}, updates=3)
    n, eps, alpha = config.num_envs, 0.1, 7.0
    mean = np.mean([eps ** (1 + alpha * i / (n - 1)) for i in range(n)])
    assert policy.spec["epsilon"] == pytest.approx(mean, rel=1e-5)


def _training_advice(caught):
    """The warnings among `caught` that advise on a run's setup (warn_once's)."""
    said = [str(w.message) for w in caught]
    return [m for m in said if "may diverge" in m or "but unused" in m]


@pytest.mark.timeout(600)
def test_exporting_and_loading_a_finished_run_repeat_no_training_advice(tmp_path):
    # A PQN run without LayerNorm, with an ε field its mode does not use, is
    # warned twice when it trains; exporting or loading its policy, where
    # neither can be changed any more, is not (even in a fresh process).
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "pqn").config,
        {"num_envs": 8, "unroll_length": 4, "total_steps": 8 * 4 * 2,
         "num_logs": 1, "devices": 1, "run_dir": str(tmp_path / "runs"),
         "network": {"norm": "none"}, "pqn": {"num_minibatches": 2,
                                              "epsilon": 0.3}},
    )  # fmt: skip
    forget_warnings()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = pjd.train(config, write_files=True, console=False)
    assert len(_training_advice(caught)) == 2
    forget_warnings()  # as a fresh process would
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = pjd.export_policy(result.run_dir, tmp_path / "policy")
        policy = pjd.load_policy(out)
    assert _training_advice(caught) == []
    assert policy.spec["network"]["norm"] == "none"
    # Loading alone (what a user of the exported policy does) says nothing.
    forget_warnings()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pjd.load_policy(out)
    assert _training_advice(caught) == []
    # Nor does it use up the warnings for a run set up afterwards.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pjd.training.make_experiment(config)
    assert len(_training_advice(caught)) == 2


@pytest.mark.parametrize(
    ("marker", "best"), [("sweep.yaml", "run"), ("pbt.yaml", "member")]
)
def test_loading_a_sweep_or_pbt_directory_points_at_its_policy_folder(
    tmp_path, marker, best
):
    # Its best run's policy is already in DIR/policy: the advice to export
    # a run into DIR itself would write a policy into the sweep's root.
    (tmp_path / marker).write_text("status: done\n")
    with pytest.raises(pjd.ConfigError) as e:
        pjd.load_policy(tmp_path)
    said = str(e.value)
    assert said.startswith(f"{str(tmp_path)!r} is not an exported policy; it is a ")
    assert f"its best {best}'s policy is in {str(tmp_path / 'policy')!r}" in said
    assert f"--out {tmp_path}" not in said
    # A folder of neither kind keeps the advice to export one there.
    with pytest.raises(pjd.ConfigError, match=r"make one with `purejaxdrl export"):
        pjd.load_policy(tmp_path / "policy")


def test_a_recurrent_policy_with_hidden_entries_quotes_the_shape_it_was_given(
    tmp_path,
):
    # cartpole_masked's GRU acted on CartPole's position and angle: its policy
    # steps [B, 2], or [B, 4] with the velocities still in. One whole
    # observation [4] is refused as [4], not as the [2] made of it.
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole_masked").config,
        {"devices": 1, "network": {"core_size": 8, "hidden_sizes": [8]}},
    )
    seen, actions = pjd.env.Box((2,)), pjd.env.Discrete(2)
    network, _ = algorithm("ppo").make_networks(
        config.algo_config, config.network, seen, actions
    )
    params = network.init(jax.random.key(0), jnp.zeros(2))
    out = tmp_path / "policy"
    write_policy(out, PolicySource(config, params, None, 1, (seen, actions)))
    policy = pjd.load_policy(out)
    state, key = policy.initial_state(1), jax.random.key(1)
    with pytest.raises(
        ValueError,
        match=re.escape(
            "steps a batch: obs [B, 2] (or [B, 4], before hiding [1, 3]); got [4] "
            "(one observation: obs[None], with initial_state(1))."
        ),
    ):
        policy.step(state, np.zeros(4, np.float32), True, key)
    with pytest.raises(ValueError, match=re.escape("[1, 3]); got [2] (one")):
        policy.step(state, np.zeros(2, np.float32), True, key)
    # Both layouts it names step, and alike.
    whole = np.asarray([[0.1, 5.0, -0.2, 7.0]], np.float32)
    _, a = policy.step_mode(state, whole, True)
    _, b = policy.step_mode(state, whole[:, [0, 2]], True)
    np.testing.assert_array_equal(a, b)


SEED_GIVEN = (
    "policy.act and policy.step take a random key, not a seed; got {}: pass "
    "jax.random.key(seed) (and a new one for each call, from jax.random.split)."
)


@pytest.mark.parametrize("preset", ["cartpole", "cartpole_masked"])
def test_a_seed_given_for_the_key_is_one_line(preset, tmp_path):
    # `policy.act(obs, 0)`, as many RL libraries take a seed, raised JAX's
    # "invalid PRNG key data" from inside the sampler.
    config = pjd.apply_overrides(pjd.load_preset(preset).config, {"devices": 1})
    env = pjd.env.make(config.env.id)
    seen = pjd.env.Box((2,)) if preset == "cartpole_masked" else pjd.env.Box((4,))
    actions = env.action_spec(env.default_params)
    network, _ = algorithm("ppo").make_networks(
        config.algo_config, config.network, seen, actions
    )
    params = network.init(jax.random.key(0), jnp.zeros(seen.shape))
    write_policy(tmp_path, PolicySource(config, params, None, 1, (seen, actions)))
    policy = pjd.load_policy(tmp_path)
    obs = np.zeros((3, *seen.shape), np.float32)
    if preset == "cartpole_masked":  # a recurrent core: it acts by step
        state = policy.initial_state(3)

        def act(obs, key):
            return policy.step(state, obs, np.ones(3, bool), key)[1]
    else:
        act = policy.act
    for seed, given in [(0, "key=0"), (np.int64(7), "a key of int64[]")]:
        with pytest.raises(ValueError) as e:
            act(obs, seed)
        assert str(e.value) == SEED_GIVEN.format(given)
    with pytest.raises(ValueError) as e:  # under jit, at tracing
        jax.jit(act)(obs, 0)
    assert str(e.value) == SEED_GIVEN.format("a key of int32[]")
    assert jax.jit(act)(obs, jax.random.key(0)).shape == (3,)
    assert act(obs, jax.random.PRNGKey(0)).shape == (3,)  # a raw key, uint32[2]
