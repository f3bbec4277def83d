"""A record's networks, actions and state layout are checked where they are built.

Each mistake here failed deep in a run (in the environment, in JAX's carry
types) or not at all; each is now one line naming the algorithm and the fix.
"""

import dataclasses
import functools

import jax.numpy as jnp
import pytest
from jax.sharding import PartitionSpec as P

import purejaxdrl as pjd
from purejaxdrl.agents import registry
from purejaxdrl.agents.base import Agent, Algorithm
from purejaxdrl.agents.dqn import DQNState
from purejaxdrl.agents.record_checks import check_acting_network, check_state_spec
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.networks import Network, NetworkConfig, make_q_network
from purejaxdrl.rl.distributions import Distribution, categorical
from purejaxdrl.training.config import config_class
from purejaxdrl.training.experiment import (
    build_agent,
    make_networks,
    spec_networks,
    zero_observation,
)
from purejaxdrl.training.run_env import make_env

NET = NetworkConfig(hidden_sizes=(8,))
OBS = Box((4,))


def _quantiles(action_spec: Discrete, n: int = 3) -> Network:
    """QR-DQN's mistake: a network of [A, N] quantiles where [A] is acted on."""
    flat = make_q_network(NET, OBS, Discrete(action_spec.num_values * n), dueling=False)

    def apply(params, obs):
        z, v = flat.apply(params, obs)
        return z.reshape(*z.shape[:-1], action_spec.num_values, n), v

    return flat._replace(apply=apply)


def _config(algo: str, **changes) -> pjd.TrainConfig:
    net = {"network": {"hidden_sizes": [8]}}
    return pjd.apply_overrides(config_class()(algo=algo), {**net, **changes})


@pytest.mark.parametrize(
    ("algo", "action_spec"),
    [
        ("ppo", Discrete(3)),
        ("ppo", Box((2,))),
        ("dqn", Discrete(3)),
        ("pqn", Discrete(3)),
        ("sac", Box((2,))),
        ("impala", Box((3,))),
    ],
)
def test_every_built_in_acting_network_passes(algo, action_spec):
    # The rule follows the head: [A] Q-values or logits, [2d] tanh-Gaussian.
    norm = {"network": {"hidden_sizes": [8], "norm": "layer_norm"}}  # PQN's
    network, _ = spec_networks(_config(algo, **norm), OBS, action_spec)
    check_acting_network(algo, network, OBS, action_spec)


def test_recurrent_acting_networks_are_traced_a_step_at_a_time():
    for algo in ("r2d2", "ppo"):
        config = _config(algo, network={"core": "gru", "core_size": 8})
        network, _ = spec_networks(config, OBS, Discrete(5))
        assert type(network).__name__ == "RecurrentNetwork"
        check_acting_network(algo, network, OBS, Discrete(5))
        # A step whose head gives [A, 2] (an R2D2 of two quantiles, say) is
        # refused as a feed-forward one is.
        tiled = network._replace(step=functools.partial(_two_per_action, network.step))
        with pytest.raises(pjd.ConfigError) as error:
            check_acting_network(algo, tiled, OBS, Discrete(5))
        assert str(error.value) == (
            f"Algorithm {algo!r}: make_networks' acting network gives (5, 2) per "
            "observation; it must give (5,) for Discrete(5) (a Q-value or logit "
            "per action), what acting, evaluation and exported policies read as "
            "its first output."
        )


def _two_per_action(step, params, state, obs, reset):
    """`step` with its first output repeated on a new last axis: [B, A, 2]."""
    state, (policy, value) = step(params, state, obs, reset)
    return state, (jnp.stack([policy, policy], axis=-1), value)


def test_an_acting_network_of_quantiles_is_refused_naming_both_shapes():
    with pytest.raises(pjd.ConfigError) as error:
        check_acting_network("qrdqn", _quantiles(Discrete(2)), OBS, Discrete(2))
    assert str(error.value) == (
        "Algorithm 'qrdqn': make_networks' acting network gives (2, 3) per "
        "observation; it must give (2,) for Discrete(2) (a Q-value or logit per "
        "action), what acting, evaluation and exported policies read as its "
        "first output."
    )


def test_a_continuous_head_of_means_alone_is_refused():
    # tanh_gaussian splits its output in two halves (mean, log-std): for
    # Box((6,)) it takes [12]; a head of [6] would act in 3 dimensions.
    means_alone, _ = spec_networks(_config("ppo"), OBS, Box((3,)))
    with pytest.raises(pjd.ConfigError) as error:
        check_acting_network("mine", means_alone, OBS, Box((6,)))
    assert "acting network gives (6,) per observation; it must give (12,) for " in (
        str(error.value)
    )
    assert "Box((6,)) (the tanh-Gaussian's mean and log-std per action" in (
        str(error.value)
    )


def test_a_users_own_distribution_is_held_to_its_mode_being_an_action():
    # A plain Gaussian with a fixed scale: its head is the mean alone, [d].
    ppo, _ = spec_networks(_config("ppo"), OBS, Box((3,)))  # gives [6]
    gaussian = Distribution(*categorical())._replace(mode=lambda mean: mean)
    fixed = ppo._replace(distribution=gaussian)
    check_acting_network("mine", fixed, OBS, Box((6,)))
    with pytest.raises(pjd.ConfigError) as error:
        check_acting_network("mine", fixed, OBS, Box((3,)))
    assert "an action of shape (3,) (its mode is (6,))" in str(error.value)


def _agent(spec) -> Agent:
    return Agent(init=None, acting=None, update=None, state_spec=spec)


def test_keeps_replay_and_the_state_spec_must_agree_both_ways():
    sharded = DQNState(P(), P(), P(), P(), P(), P("data"))
    check_state_spec(_agent(sharded), "mine", True)
    check_state_spec(_agent(P()), "mine", False)
    check_state_spec(_agent(DQNState(*[P()] * 6)), "mine", False)  # all replicated
    with pytest.raises(pjd.ConfigError) as error:
        check_state_spec(_agent(P()), "mine", True)
    said = str(error.value)
    assert said.startswith("algo='mine': its record's keeps_replay(config) is True")
    assert "Agent.state_spec" in said
    assert "DQNState(P(), P(), P(), P(), P(), P('data'))" in said
    with pytest.raises(pjd.ConfigError) as error:
        check_state_spec(_agent(sharded), "mine", False)
    said = str(error.value)
    assert said.startswith(
        "algo='mine': its agent's Agent.state_spec splits state.buffer over the "
        "devices (a replay buffer), but its record's keeps_replay(config) is False"
    )
    assert "keeps_replay=lambda config: True" in said and "\n" not in said


@pytest.mark.parametrize(
    ("algo", "changes"),
    [
        ("ppo", {}),
        ("dqn", {}),
        ("apex", {}),
        ("pqn", {"network": {"hidden_sizes": [8], "norm": "layer_norm"}}),
        ("impala", {}),
        ("impala", {"impala": {"replay_ratio": 0.5}}),
        ("sac", {"env": {"id": "Pendulum-v1"}}),
        ("r2d2", {"network": {"core": "lstm", "core_size": 8}}),
    ],
)
def test_no_built_in_agent_is_refused_by_its_own_record(algo, changes):
    # Built only (nothing compiles): the checks run in build_agent.
    config = _config(algo, num_envs=4, unroll_length=8, **changes)
    env, env_params = make_env(config)
    _, learner = make_networks(config, env, env_params)
    agent = build_agent(config, learner, zero_observation(env, env_params), 1)
    keeps = registry.algorithm(algo).keeps_replay(config.algo_config)
    assert (agent.state_spec != P()) == keeps


def _refused_before_its_networks(record: Algorithm) -> Algorithm:
    def networks(*args):
        raise AssertionError("make_networks was called")

    return dataclasses.replace(record, make_networks=networks)


def test_a_users_action_kinds_refuse_before_its_networks_are_made():
    dqn = registry.algorithm("dqn")
    mine = dataclasses.replace(dqn, name="mine", action_kinds=("discrete",))
    record = _refused_before_its_networks(mine)
    with registry.registered(record), pytest.raises(pjd.ConfigError) as error:
        spec_networks(_config("mine"), OBS, Box((1,)))
    assert "mine" not in registry.names()
    assert str(error.value) == (
        "mine needs discrete actions, CartPole-v1's are continuous; pick --algo "
        "ppo (algo='ppo' in Python) or another that acts in them (impala, a2c, "
        "sac), or an --env with discrete actions."
    )


def test_a_built_ins_action_kinds_refuse_before_its_networks_too():
    with pytest.raises(pjd.ConfigError, match="^sac needs continuous actions, "):
        spec_networks(_config("sac"), OBS, Discrete(2))
    # An algorithm of both kinds acts in either.
    for spec in (Discrete(2), Box((2,))):
        spec_networks(_config("ppo"), OBS, spec)


def test_actions_no_algorithm_acts_in_come_before_advice_on_sizes(monkeypatch):
    # DQN on Pendulum with too small a budget for its min_replay: following
    # that advice would only meet the refusal of its actions; pjd.validate and
    # train (run_env.validate) say the actions first.
    from purejaxdrl.training import config as config_rules
    from purejaxdrl.training import run_env

    config = pjd.apply_overrides(
        pjd.load_preset("cartpole", "dqn").config,
        {"env": {"id": "Pendulum-v1"}, "total_steps": 2048},
    )
    with pytest.raises(pjd.ConfigError, match="^dqn.min_replay=5000 transitions"):
        config_rules.validate(config)  # the config's own rules
    acting = "^dqn needs discrete actions, Pendulum-v1's are continuous; pick --algo"
    with pytest.raises(pjd.ConfigError, match=acting):
        pjd.validate(config)
    with pytest.raises(pjd.ConfigError, match=acting):
        pjd.train(config, write_files=False, console=False)
    # Where the algorithm acts in them, the config's fault is the one shown.
    cartpole = pjd.apply_overrides(config, {"env": {"id": "CartPole-v1"}})
    with pytest.raises(pjd.ConfigError, match="^dqn.min_replay=5000 transitions"):
        pjd.train(cartpole, write_files=False, console=False)
    # An algorithm of both kinds acts in any environment: none is made for it.
    made = []
    monkeypatch.setattr(run_env.envs, "make", lambda *a, **k: made.append(a))
    ppo = pjd.apply_overrides(pjd.load_preset("cartpole").config, {"num_envs": 0})
    with pytest.raises(pjd.ConfigError, match="^num_envs=0 must be >= 1"):
        pjd.validate(ppo)
    assert made == []
