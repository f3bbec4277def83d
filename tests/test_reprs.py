"""The pieces a notebook prints: a network and an experiment, in one short line.

Their default reprs printed the flax module and the distribution's functions
(~900 characters for a network, ~3,500 for an experiment).
"""

import dataclasses

import jax

import purejaxdrl as pjd
from purejaxdrl.agents.r2d2_sequences import stateless
from purejaxdrl.env.base import Box, Discrete
from purejaxdrl.networks import make_actor_critic, make_q_network


def test_a_networks_repr_says_its_torso_core_and_head():
    config = pjd.NetworkConfig()
    recurrent = dataclasses.replace(config, core="lstm", core_size=32)
    wide = dataclasses.replace(config, hidden_sizes=(256, 256, 256))
    assert (
        repr(make_actor_critic(config, Box((4,)), Discrete(2)))
        == "Network(mlp 64x64 -> categorical[2] + value)"
    )
    assert (
        repr(make_actor_critic(wide, Box((4,)), Box((3,))))
        == "Network(mlp 256x256x256 -> tanh-gaussian[3] + value)"
    )
    assert (
        repr(make_actor_critic(recurrent, Box((4,)), Discrete(2)))
        == "RecurrentNetwork(mlp 64x64 + lstm 32 -> categorical[2] + value)"
    )
    assert (
        repr(make_q_network(config, Box((4,)), Discrete(5), dueling=True))
        == "Network(mlp 64x64 -> dueling q[5])"
    )
    by_hand = pjd.networks.Network(init=len, apply=len, distribution=None)
    assert repr(by_hand) == "Network(init, apply, distribution)"


def test_a_network_stays_its_three_fields_and_rebuilt_ones_keep_their_label():
    # The label is carried by `init`, not by a field: a network unpacks into
    # its three fields as before, and its pytree holds no string leaf.
    config = pjd.NetworkConfig()
    net = make_actor_critic(config, Box((4,)), Discrete(2))
    init, apply, distribution = net
    assert (init, apply, distribution) == (net.init, net.apply, net.distribution)
    assert not any(isinstance(x, str) for x in jax.tree.leaves(net))
    recurrent = make_actor_critic(
        dataclasses.replace(config, core="gru", core_size=8), Box((4,)), Discrete(2)
    )
    assert len(recurrent) == len(pjd.networks.RecurrentNetwork._fields) == 7
    # R2D2 runs a feed-forward Q-network as a stateless recurrent one; a
    # legal-action mask rebuilds the recurrent record around the same init.
    q = make_q_network(config, Box((4,)), Discrete(5), dueling=False)
    assert repr(stateless(q)) == "RecurrentNetwork(mlp 64x64 -> q[5])"
    legal = Discrete(3, legal=lambda obs: obs[..., :3] > 0)
    masked = make_actor_critic(
        dataclasses.replace(config, core="lstm", core_size=8), Box((4,)), legal
    )
    assert (
        repr(masked) == "RecurrentNetwork(mlp 64x64 + lstm 8 -> categorical[3] + value)"
    )


def test_an_experiments_repr_says_algo_env_runner_devices_and_budget():
    config = pjd.apply_overrides(
        pjd.TrainConfig(),
        {
            "algo": "dqn",
            "num_envs": 2,
            "unroll_length": 4,
            "total_steps": 4000,
            "devices": 1,
        },
    )
    experiment = pjd.training.make_experiment(config)
    assert repr(experiment) == (
        "Experiment(dqn on CartPole-v1, AnakinRunner, 1 device, 4,000 steps)"
    )
    assert repr(experiment.network).startswith("Network(mlp 64x64 -> ")


def test_an_experiments_repr_is_its_own_method():
    # Not a function of a module split off to keep experiment.py short.
    from purejaxdrl.training.experiment import Experiment

    method = vars(Experiment)["__repr__"]
    assert method.__qualname__ == "Experiment.__repr__"
