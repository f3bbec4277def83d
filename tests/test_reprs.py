"""The pieces a notebook prints: a network and an experiment, in one short line.

Their default reprs printed the flax module and the distribution's functions
(~900 characters for a network, ~3,500 for an experiment).
"""

import dataclasses

import purejaxdrl as pjd
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
